"""Summaries of the answer-level rubrics, and the reviewer's validation of DeCE criteria."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from app.errors import AssayError
from app.project import Project
from models.rubrics import Rubric, coverage_score, f_beta
from storage import audit, rubric_results

CRITERION_STATUSES = ("proposed", "accepted", "edited", "rejected", "added")


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def rubric_summary(project: Project, rubric: Rubric) -> dict[str, Any]:
    """Per rater (judge run): the rubric's own figures."""
    with project.sessions() as session:
        records = rubric_results.rubric_results(session, rubric.value)
    by_rater: dict[str, list[rubric_results.RubricRecord]] = defaultdict(list)
    for record in records:
        by_rater[record.rater].append(record)
    summary: dict[str, Any] = {"rubric": rubric.value, "raters": {}}
    for rater, rows in by_rater.items():
        figures: dict[str, Any] = {"answers": len(rows)}
        if rubric is Rubric.POINTWISE:
            by_generator: dict[str, list[float]] = defaultdict(list)
            for r in rows:
                by_generator[r.generator or "unknown"].append(r.score or 0.0)
            figures["gpa_by_generator"] = {g: sum(v) / len(v) for g, v in by_generator.items()}
            figures["gpa"] = _mean([r.score for r in rows])
            figures["issues"] = dict(Counter(i for r in rows for i in r.payload.get("issues", ())))
        elif rubric is Rubric.COVERAGE:
            decisions = [r.label for r in rows if r.label]
            figures |= {"counts": dict(Counter(decisions)), "coverage_score": coverage_score(decisions)}
        elif rubric is Rubric.TWO_DIMENSIONAL:
            figures["matrix"] = dict(
                Counter(f"{r.payload.get('truthfulness')} × {r.payload.get('reasoning_soundness')}" for r in rows)
            )
            figures["truthfulness"] = dict(Counter(r.payload.get("truthfulness") for r in rows))
            figures["reasoning_soundness"] = dict(Counter(r.payload.get("reasoning_soundness") for r in rows))
            figures["bias_warnings"] = sum(1 for r in rows if r.payload.get("bias_warning"))
        elif rubric is Rubric.DECE:
            figures |= {
                "precision": _mean([r.payload.get("precision") for r in rows]),
                "recall": _mean([r.payload.get("recall") for r in rows]),
                "f2": _mean([r.score for r in rows]),
                "revision_rate": revision_rate([c for r in rows for c in r.payload.get("criteria", ())]),
            }
        elif rubric is Rubric.SCORE:
            figures |= {
                "flesch_reading_ease": _mean([r.payload.get("flesch_reading_ease") for r in rows]),
                "flesch_kincaid_grade": _mean([r.payload.get("flesch_kincaid_grade") for r in rows]),
                "context_utilisation": _mean([r.payload.get("context_utilisation") for r in rows]),
            }
        summary["raters"][rater] = figures
    return summary


def revision_rate(criteria: list[dict[str, Any]]) -> float | None:
    """Share of the judge's criteria the reviewer changed (DeCE reports 11.95 % modified): edited,
    rejected or added, over the criteria the judge proposed."""
    proposed = [c for c in criteria if c.get("status") != "added"]
    reviewed = [c for c in criteria if c.get("status") != "proposed"]
    if not proposed or not reviewed:
        return None
    return sum(c.get("status") in ("edited", "rejected", "added") for c in criteria) / len(proposed)


def review_criteria(
    project: Project,
    answer_id: str,
    run: str,
    *,
    accept: list[int] = (),  # type: ignore[assignment]
    reject: list[int] = (),  # type: ignore[assignment]
    edit: dict[int, str] | None = None,
    add: list[str] = (),  # type: ignore[assignment]
    satisfied: dict[int, bool] | None = None,
    reviewer: str = "reviewer",
) -> dict[str, Any]:
    """Accept, edit, reject or add DeCE criteria (1-based numbers); recall is recomputed over the
    criteria that stand, and the audit log records who changed what."""
    with project.sessions.begin() as session:
        record = next(
            (
                r
                for r in rubric_results.rubric_results(session, Rubric.DECE.value)
                if r.answer_id == answer_id and r.rater == run
            ),
            None,
        )
        if record is None:
            raise AssayError(f"no DeCE result of {run!r} for answer {answer_id!r}")
        payload = dict(record.payload)
        criteria = [dict(c) for c in payload.get("criteria", [])]
        for number in [*accept, *reject, *(edit or {}), *(satisfied or {})]:
            if not 1 <= number <= len(criteria):
                raise AssayError(f"there is no criterion {number} (this answer has {len(criteria)})")
        for number in accept:
            criteria[number - 1]["status"] = "accepted"
        for number in reject:
            criteria[number - 1]["status"] = "rejected"
        for number, text in (edit or {}).items():
            criteria[number - 1] |= {"text": text, "status": "edited"}
        for number, value in (satisfied or {}).items():
            criteria[number - 1]["satisfied"] = value
        criteria += [{"text": text, "satisfied": False, "status": "added"} for text in add]
        standing = [c for c in criteria if c["status"] != "rejected"]
        payload["criteria"] = criteria
        payload["recall"] = sum(c["satisfied"] for c in standing) / len(standing) if standing else None
        payload["f2"] = f_beta(payload.get("precision"), payload["recall"], 2.0)
        payload["revision_rate"] = revision_rate(criteria)
        rubric_results.update_rubric_payload(session, answer_id, run, Rubric.DECE.value, payload, payload["f2"])
        audit.append_audit(
            session,
            reviewer,
            "dece.criteria_reviewed",
            "answer",
            answer_id,
            {"run": run, "statuses": [c["status"] for c in criteria]},
        )
    return payload
