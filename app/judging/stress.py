"""The judge stress test (LeMAJ E.3 as a calibration tool): perturb reviewed answers in ways whose
right tag is known, judge the perturbed answers, and report what the judge caught.

Perturbations, each deterministic: `remove_point` (a correct point removed: expect `missing`),
`change_value` (a number or month changed: expect `incorrect`), `contradiction` (a "shall" becomes
"shall not": expect `incorrect`), `add_claim` (an unsupported sentence added: expect `incorrect`).
False alarms are the untouched correct points the judge tags `incorrect`.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from app.errors import AssayError
from app.judging.cases import select_evidence
from app.judging.evidence import DocumentEvidence
from app.project import Project
from models.judge import JudgeCase, LemajJudge
from models.perturbations import MONTH_NAMES
from models.vocabulary import RaterKind, Tag
from storage import judgements, raters, reviews
from storage.adjudication import CONSENSUS

PERTURBATIONS = ("remove_point", "change_value", "contradiction", "add_claim")
ADDED_CLAIM = (
    " In addition, the Agreement grants the Receiving Party an irrevocable right to sell the Confidential "
    "Information to third parties."
)
_MODAL = re.compile(r"\b(shall|will|may|must|does|is|are|can)\b(?! not)")


@dataclass(frozen=True)
class Perturbed:
    kind: str
    answer: str
    span: tuple[int, int] | None  # where the planted error is in the perturbed answer (None: removed)
    removed: str | None
    untouched: list[tuple[int, int]]  # spans of correct points left as they were


def perturb(answer: str, point: tuple[int, int], correct: list[tuple[int, int]], kind: str) -> Perturbed | None:
    """One perturbation of one correct point, or None when the point offers no handle for it."""
    start, end = point
    text = answer[start:end]
    if kind == "remove_point":
        new, span, removed = answer[:start] + answer[end:], None, text
    elif kind == "add_claim":
        new, span, removed = answer[:end] + ADDED_CLAIM + answer[end:], (end + 1, end + len(ADDED_CLAIM)), None
    else:
        changed = _change_value(text) if kind == "change_value" else _contradict(text)
        if changed is None:
            return None
        new, span, removed = answer[:start] + changed + answer[end:], (start, start + len(changed)), None
    shift = len(new) - len(answer)
    untouched = [
        (s + (shift if s >= end else 0), e + (shift if s >= end else 0)) for s, e in correct if (s, e) != point
    ]
    return Perturbed(kind, new, span, removed, untouched)


def _change_value(text: str) -> str | None:
    number = re.search(r"\b\d+\b", text)
    if number:
        return text[: number.start()] + str(int(number.group()) + 1) + text[number.end() :]
    for month in MONTH_NAMES:
        if month in text:
            return text.replace(month, MONTH_NAMES[(MONTH_NAMES.index(month) + 1) % 12], 1)
    return None


def _contradict(text: str) -> str | None:
    modal = _MODAL.search(text)
    return None if modal is None else text[: modal.end()] + " not" + text[modal.end() :]


@dataclass
class StressReport:
    judge: str
    base: str  # whose correct points were perturbed
    answers: int = 0
    per_type: dict[str, dict[str, Any]] | None = None
    false_alarms: int = 0
    untouched_points: int = 0

    @property
    def false_alarm_rate(self) -> float | None:
        return self.false_alarms / self.untouched_points if self.untouched_points else None


def stress_test(
    project: Project, judge: LemajJudge, judge_name: str, *, limit: int = 5, cancel: threading.Event | None = None
) -> StressReport:
    """Perturb up to `limit` answers (their first perturbable correct point, each kind) and judge them."""
    cancel = cancel or threading.Event()
    base_points = _base(project, judge_name)
    if not base_points:
        raise AssayError(f"no answer with correct points to perturb: review answers or run {judge_name} first")
    report = StressReport(judge_name, base=base_points[0][1])
    found: dict[str, list[bool]] = defaultdict(list)
    for answer_id, _, correct in base_points[:limit]:
        if cancel.is_set():
            break
        answer = project.answer(answer_id)
        assert answer is not None
        passages = project.passages(answer.document_id)
        report.answers += 1
        for kind in PERTURBATIONS:
            case_made = next((p for point in correct if (p := perturb(answer.text, point, correct, kind))), None)
            if case_made is None:
                continue
            with project.sessions() as session:
                evidence = select_evidence(
                    session, judge.backend, passages, answer.question, case_made.answer, judge.strictness
                )
            verdict = judge.evaluate(
                JudgeCase(
                    f"{answer_id}:{kind}",
                    answer.question,
                    case_made.answer,
                    evidence,
                    frozenset(p.citation_id for p in passages),
                    DocumentEvidence(passages).resolve,
                ),
                cancel,
            )
            if verdict.failed:
                found[kind].append(False)
                continue
            found[kind].append(_detected(case_made, verdict.points))
            for s, e in case_made.untouched:
                report.untouched_points += 1
                report.false_alarms += any(
                    p.tag is Tag.INCORRECT and p.start is not None and _overlap((p.start, p.end or 0), (s, e)) > 0.5
                    for p in verdict.points
                )
    report.per_type = {
        kind: {
            "cases": len(found[kind]),
            "detected": sum(found[kind]),
            "detection_recall": sum(found[kind]) / len(found[kind]) if found[kind] else None,
        }
        for kind in PERTURBATIONS
    }
    return report


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> float:
    shared = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    return shared / max(1, b[1] - b[0])


def _detected(case: Perturbed, points) -> bool:
    if case.span is None:  # removed: the judge must name it as missing
        return any(p.tag is Tag.MISSING and fuzz.partial_ratio(p.text, case.removed or "") >= 60 for p in points)
    return any(
        p.tag is Tag.INCORRECT and p.start is not None and _overlap((p.start, p.end or 0), case.span) > 0.3
        for p in points
    )


def _base(project: Project, judge_name: str) -> list[tuple[str, str, list[tuple[int, int]]]]:
    """Answers with correct points: from submitted human reviews when there are any (the point of a
    stress test), else from the judge run itself."""
    with project.sessions() as session:
        everyone = raters.raters(session)
        # the adjudicated consensus first, where an answer has one
        humans = sorted((r for r in everyone if r.kind is RaterKind.HUMAN), key=lambda r: r.name != CONSENSUS)
        out = []
        for answer in project.answers():
            for human in humans:
                if reviews.review(session, answer.id, human.id).status.value != "submitted":
                    continue
                correct = [
                    (p.span_start, p.span_end)
                    for p in judgements.data_points_of(session, answer.id, human.id)
                    if p.tag is Tag.CORRECT and p.span_start is not None and p.span_end is not None
                ]
                if correct:
                    out.append((answer.id, human.name, correct))
                    break
        if out:
            return out
        judge = raters.rater_named(session, judge_name)
        if judge is None:
            raise AssayError(f"no judge run named {judge_name!r}")
        for answer in project.answers():
            correct = [
                (p.span_start, p.span_end)
                for p in judgements.data_points_of(session, answer.id, judge.id)
                if p.tag is Tag.CORRECT and p.span_start is not None and p.span_end is not None
            ]
            if correct:
                out.append((answer.id, judge_name, correct))
    return out
