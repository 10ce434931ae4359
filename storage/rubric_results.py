"""Answer-level results under the rubrics other than LeMAJ's data points (one label or score per answer)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from storage.audit import append_audit
from storage.judgements import JudgeOutcome, replace_outcome
from storage.schema import AnswerRow, RaterRow, RubricResultRow


def save_rubric_result(
    session: Session,
    rater_id: int,
    answer_id: str,
    rubric: str,
    result: tuple[str | None, float | None, dict[str, Any]] | None,
    outcome: JudgeOutcome,
    actor: str,
) -> None:
    """Replace a rater's answer-level result under a rubric (None when the judge failed) and its outcome."""
    session.execute(
        delete(RubricResultRow).where(
            RubricResultRow.rater_id == rater_id,
            RubricResultRow.answer_id == answer_id,
            RubricResultRow.rubric == rubric,
        )
    )
    if result is not None:
        label, score, payload = result
        session.add(
            RubricResultRow(
                rater_id=rater_id, answer_id=answer_id, rubric=rubric, label=label, score=score, payload=payload
            )
        )
    replace_outcome(session, rater_id, answer_id, outcome)
    append_audit(
        session, actor, f"judge.{outcome.status.value}", "answer", answer_id, {"rater_id": rater_id, "rubric": rubric}
    )


@dataclass(frozen=True, kw_only=True)
class RubricRecord:
    answer_id: str
    rater: str
    rubric: str
    label: str | None
    score: float | None
    payload: dict[str, Any]
    generator: str | None
    source: str | None


def rubric_results(session: Session, rubric: str | None = None, answer_id: str | None = None) -> list[RubricRecord]:
    statement = (
        select(RubricResultRow, RaterRow.name, AnswerRow.generator, AnswerRow.meta)
        .join(RaterRow, RaterRow.id == RubricResultRow.rater_id)
        .join(AnswerRow, AnswerRow.id == RubricResultRow.answer_id)
        .order_by(RubricResultRow.answer_id, RaterRow.name)
    )
    if rubric is not None:
        statement = statement.where(RubricResultRow.rubric == rubric)
    if answer_id is not None:
        statement = statement.where(RubricResultRow.answer_id == answer_id)
    return [
        RubricRecord(
            answer_id=row.answer_id,
            rater=rater,
            rubric=row.rubric,
            label=row.label,
            score=row.score,
            payload=row.payload or {},
            generator=generator,
            source=(meta or {}).get("source"),
        )
        for row, rater, generator, meta in session.execute(statement)
    ]


def update_rubric_payload(
    session: Session, answer_id: str, rater: str, rubric: str, payload: dict[str, Any], score: float | None
) -> None:
    row = session.scalar(
        select(RubricResultRow)
        .join(RaterRow, RaterRow.id == RubricResultRow.rater_id)
        .where(RubricResultRow.answer_id == answer_id, RaterRow.name == rater, RubricResultRow.rubric == rubric)
    )
    if row is None:
        raise LookupError(f"no {rubric} result of {rater} for {answer_id}")
    row.payload = payload
    row.score = score
