"""The "Check this model" of the picker: how good a chosen model is on this project, and how long it would take, before
the user commits hours to a full run.

The model judges a small set of answers people have labelled (the project's submitted human reviews:
its randomly drawn reviews and imported labels), drawn at random, as its own judge run `check:<model>`.
Its figures are those of `standing.real_label_figures` (answer-level recall and false alarms, Wilson 95 %
intervals) with the answer-level agreement with the humans, and, being an ordinary judge run of that
model, they become the model's standing in the window and the report.

The estimate of the whole project's judging time comes from what each checked answer cost: prompt
tokens the model computed (`evaluated`) and tokens it wrote (`completion`). A least-squares fit (no
negative terms) of seconds = a fixed cost per answer + evaluated / prefill speed + completion /
generation speed gives the three (prefill is tens of times faster than generation on a CPU, so one
tokens/s figure would mis-weigh long contracts; each answer's several short calls cost a fixed time).
Each answer of the project is then costed: its contract read once when the whole contract fits the
context (the judge keeps it, and the answers after the first read only their own part), the context's
worth of chosen passages for each answer when it does not, the answer's own prompt as measured, and a
reply as long per data point as the check's were.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from sqlalchemy import func, select

from app.errors import AssayError
from app.judging.runs import GENERATION_RESERVE, JudgeSettings, Progress, make_backend, run_judge
from app.judging.standing import Standing, real_label_figures, standing_of_run, wilson_interval
from app.project import Project
from models.backends.base import JudgeBackend
from models.judge import JudgeCase, LemajJudge
from models.prompts import EvidencePassage, Strictness, evidence_text, one_pass_prompt
from models.segmentation import segment_answer
from models.verdict import Verdict
from models.vocabulary import PassageKind, RaterKind, ReviewStatus
from storage import reviews
from storage.schema import AnswerRow, DocumentRow, QuestionRow, RaterRow, ReviewRow

CHECK_ANSWERS = 12  # a few minutes with a 7B model on a laptop; enough for a first interval
CHECK_SETTING = "model_check.{}"  # the latest check of each run: its timing, for a check that judged nothing new


@dataclass(frozen=True)
class AnswerCost:
    answer_id: str
    seconds: float
    evaluated: int  # prompt tokens computed (the rest came from the model's cache)
    completion: int
    points: int


@dataclass
class ModelCheck:
    run: str  # the judge run holding the check's tags
    model: str
    answers: int  # labelled answers judged and compared
    labelled: int  # labelled answers the project has
    timed: list[str]  # answers judged only for their time (about the longest contract)
    seconds: float  # the check's judging time
    figures: dict[str, Any] | None  # real_label_figures, with agreement and agreement_ci
    project_answers: int
    estimate_seconds: float | None  # judging every answer of the project on this computer
    seconds_per_answer: float | None  # the fitted cost of an answer beyond its tokens
    prefill_per_second: float | None  # None: too fast to show in the check's times
    generated_per_second: float | None
    standing: str
    costs: list[AnswerCost] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lines(self) -> list[str]:
        """The check in words, figure by figure."""
        timed = f" and {len(self.timed)} about the longest contract, for its time" if self.timed else ""
        lines = [f"{self.model}: judged {self.answers} human-labelled answers{timed} in {_duration(self.seconds)}"]
        f = self.figures
        if f:
            if f["with_errors"]:
                lines.append(f"recall: caught {f['caught']} of {f['with_errors']} wrong answers ({_ci(f, 'recall')})")
            if f["correct"]:
                lines.append(
                    f"false alarms: {f['false_alarms']} of {f['correct']} correct answers "
                    f"({_ci(f, 'false_alarm_rate', 'false_alarm_ci')})"
                )
            lines.append(
                f"agreement with the humans: {f['agreed']} of {f['answers']} answers "
                f"({_ci(f, 'agreement', 'agreement_ci')})"
            )
        if self.estimate_seconds is not None:
            lines.append(
                f"judging all {self.project_answers} answers of the project here: "
                f"about {_duration(self.estimate_seconds)}"
            )
        lines.append(f"standing: {self.standing}")
        return lines


def _ci(figures: dict[str, Any], key: str, ci: str = "recall_ci") -> str:
    lo, hi = figures[ci]
    return f"{figures[key]:.0%}; 95% CI {lo:.0%}–{hi:.0%}"


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def labelled_answers(project: Project) -> list[str]:
    """The answers a person submitted a review of (the project's human labels), in id order."""
    with project.sessions() as session:
        found = session.scalars(
            select(ReviewRow.answer_id)
            .join(RaterRow, RaterRow.id == ReviewRow.rater_id)
            .where(ReviewRow.status == ReviewStatus.SUBMITTED.value, RaterRow.kind == RaterKind.HUMAN.value)
            .distinct()
        )
        return sorted(found)


class _CostedJudge(LemajJudge):
    """The judge, keeping what each answer cost it."""

    costs: list[AnswerCost]

    def evaluate(self, case: JudgeCase, cancel: threading.Event | None = None) -> Verdict:
        verdict = super().evaluate(case, cancel)
        if not verdict.failed:
            points = sum(p.start is not None for p in verdict.points) or len(segment_answer(case.answer))
            self.costs.append(
                AnswerCost(case.answer_id, verdict.seconds, verdict.evaluated_tokens, verdict.completion_tokens, points)
            )
        return verdict


def check_name(backend: JudgeBackend) -> str:
    from pathlib import Path

    described = backend.describe()
    return f"check:{Path(str(described.get('model', 'model'))).name}"


def check_model(
    project: Project,
    settings: JudgeSettings,
    *,
    size: int = CHECK_ANSWERS,
    seed: int = 0,
    name: str | None = None,
    on_progress: Callable[[Progress], None] = lambda _p: None,
    cancel: threading.Event | None = None,
) -> ModelCheck:
    """Judge `size` human-labelled answers drawn at random (seeded) with the chosen model, and measure
    it against the humans and the clock. AssayError when the project has no human labels."""
    labelled = labelled_answers(project)
    if not labelled:
        raise AssayError(
            "this project has no human-labelled answers to check a model against: review a random sample "
            "(assay sample) or import labels (assay import-labels) first"
        )
    chosen = sorted(random.Random(seed).sample(labelled, min(size, len(labelled))))
    timed = _on_longest_contract(project, set(labelled))
    # No saved document states: the check reads each contract afresh, as a first full run would.
    backend = make_backend(settings, None)
    try:
        judge = _CostedJudge(
            backend,
            settings.mode,
            settings.strictness,
            seed=settings.seed,
            find_missing=settings.find_missing,
            tagging=settings.tagging,
        )
        judge.costs = []
        run = name or check_name(backend)
        started = time.perf_counter()
        run_judge(project.sessions, judge, run, answer_ids=chosen + timed, on_progress=on_progress, cancel=cancel)
        seconds = time.perf_counter() - started
        costs = judge.costs
        with project.sessions.begin() as session:
            if costs:  # remembered: checking again judges nothing new, and keeps these timings
                reviews.set_setting(session, CHECK_SETTING.format(run), [asdict(c) for c in costs])
            else:
                costs = [AnswerCost(**c) for c in reviews.setting(session, CHECK_SETTING.format(run), [])]
                seconds = sum(c.seconds for c in costs)
        rates = fit_costs(costs)
        estimate = estimate_seconds(project, backend, costs, rates) if rates else None
    finally:
        backend.close()
    figures = _with_agreement(real_label_figures(project.sessions, run))
    standing: Standing = standing_of_run(project.sessions, run)
    return ModelCheck(
        run=run,
        model=str(backend.describe().get("model")),
        answers=figures["answers"] if figures else 0,
        labelled=len(labelled),
        timed=timed,
        seconds=seconds,
        figures=figures,
        project_answers=len(project.answers()),
        estimate_seconds=estimate,
        seconds_per_answer=rates[0] if rates else None,
        prefill_per_second=1 / rates[1] if rates and rates[1] else None,
        generated_per_second=1 / rates[2] if rates and rates[2] else None,
        standing=standing.text,
        costs=costs,
    )


def _on_longest_contract(project: Project, labelled: set[str]) -> list[str]:
    """One answer about the project's longest contract, judged only for its time: labelled answers are
    often about short ones, and a long contract is read differently (passages chosen to fill the
    context for each answer), so the estimate needs both. Empty when that contract's answers are all
    labelled (they are timed anyway)."""
    with project.sessions() as session:
        longest = session.scalars(
            select(DocumentRow.id).order_by(func.length(DocumentRow.text).desc(), DocumentRow.id).limit(1)
        ).first()
        about = session.scalars(
            select(AnswerRow.id)
            .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
            .where(QuestionRow.document_id == longest)
            .order_by(AnswerRow.id)
        )
        return [a for a in about if a not in labelled][:1]


def _with_agreement(figures: dict[str, Any] | None) -> dict[str, Any] | None:
    """Answer-level agreement: the answers where the judge flagged exactly those the humans found wrong."""
    if figures is None:
        return None
    agreed = figures["caught"] + figures["correct"] - figures["false_alarms"]
    return figures | {
        "agreed": agreed,
        "agreement": agreed / figures["answers"],
        "agreement_ci": wilson_interval(agreed, figures["answers"]),
    }


def fit_costs(costs: list[AnswerCost]) -> tuple[float, float, float] | None:
    """Seconds per answer, per prompt token computed and per token written that best explain the
    checked answers' times (none negative); None without a measured answer."""
    import numpy as np
    from scipy.optimize import nnls

    costs = [c for c in costs if c.seconds > 0]
    if not costs:
        return None
    terms = np.array([[1.0, c.evaluated, c.completion] for c in costs])
    (per_answer, per_read, per_written), _ = nnls(terms, np.array([c.seconds for c in costs]))
    return float(per_answer), float(per_read), float(per_written)


def estimate_seconds(
    project: Project,
    backend: JudgeBackend,
    costs: list[AnswerCost],
    rates: tuple[float, float, float],
    answer_ids: list[str] | None = None,
) -> float:
    """Seconds to judge every answer of the project (or those of `answer_ids`) with this backend, from
    a cold start (module docstring)."""
    from storage import answers as answer_store
    from storage import documents

    per_answer, per_read, per_written = rates
    written_per_point = sum(c.completion for c in costs) / max(sum(c.points for c in costs), 1)
    # What an answer reads beyond its contract: the least any checked answer computed (one whose contract
    # the judge had already read), in proportion to its own prompt.
    own = min(costs, key=lambda c: c.evaluated)
    with project.sessions() as session:
        own_prompt = _prompt_tokens(backend, answer_store.answer_detail(session, own.answer_id))
        read_per_prompt_token = own.evaluated / max(own_prompt, 1)
        total = 0.0
        contract_tokens: dict[int, int] = {}
        for answer_id in answer_ids if answer_ids is not None else [a.id for a in project.answers()]:
            answer = answer_store.answer_detail(session, answer_id)
            assert answer is not None
            prompt = _prompt_tokens(backend, answer)
            budget = backend.context_tokens - GENERATION_RESERVE - prompt
            if answer.document_id not in contract_tokens:
                passages = documents.passages_of(session, answer.document_id)
                shown = [
                    EvidencePassage(p.citation_id, p.section, p.text) for p in passages if p.kind is not PassageKind.TOC
                ]
                contract_tokens[answer.document_id] = backend.count_tokens(evidence_text(shown))
                first = True
            else:
                first = False
            contract = contract_tokens[answer.document_id]
            read = prompt * read_per_prompt_token
            if contract > budget:
                read += budget  # chosen passages fill the context, anew for each answer
            elif first:
                read += contract
            points = len(segment_answer(answer.text)) or 1
            total += per_answer + read * per_read + points * written_per_point * per_written
    return total


def _prompt_tokens(backend: JudgeBackend, answer: Any) -> int:
    frame = one_pass_prompt([], answer.question, answer.text, Strictness.STANDARD)
    return sum(backend.count_tokens(m.text) for m in frame.messages)
