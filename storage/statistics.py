"""What the statistics need from a project: the random review sample, each answer's document and
slice, and judge tags with confidences beside a reviewer's tags on the same data point."""

from __future__ import annotations

from typing import Any

from sqlalchemy import String, cast, func, select
from sqlalchemy.orm import Session

from models.vocabulary import OutcomeStatus, ReviewStatus
from storage.schema import (
    AnswerRow,
    DataPointRow,
    DocumentRow,
    JudgeOutcomeRow,
    LabelRow,
    QuestionRow,
    RaterRow,
    ReviewRow,
    ReviewSampleRow,
)


def sampled_answers(session: Session) -> dict[str, int]:
    """Answers drawn at random for review, with the number of their draw."""
    return dict(session.connection().execute(select(ReviewSampleRow.answer_id, ReviewSampleRow.draw)).all())


def add_sampled(session: Session, answer_ids: list[str], seed: int | None, population: int, actor: str) -> int:
    """Record one draw; returns its number. Answers already in a sample are kept as they were."""
    draw = (session.scalar(select(func.max(ReviewSampleRow.draw))) or 0) + 1
    known = set(sampled_answers(session))
    for answer_id in answer_ids:
        if answer_id not in known:
            session.add(
                ReviewSampleRow(answer_id=answer_id, draw=draw, seed=seed, population=population, drawn_by=actor)
            )
    session.flush()
    return draw


def latest_judge_per_answer(session: Session, verifier: str = "verifier") -> dict[str, int]:
    """The rater of each answer's latest successful judge run, the model-free verifier aside: it tags
    only what it can disprove and leaves the rest untagged, so as "the judge" it would clear nothing."""
    latest = (
        select(JudgeOutcomeRow.answer_id, func.max(JudgeOutcomeRow.id).label("outcome"))
        .join(RaterRow, RaterRow.id == JudgeOutcomeRow.rater_id)
        .where(JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value, RaterRow.name != verifier)
        .group_by(JudgeOutcomeRow.answer_id)
        .subquery()
    )
    rows = session.connection().execute(  # Core: ORM rows cost a third of a second at 100,000 answers
        select(JudgeOutcomeRow.answer_id, JudgeOutcomeRow.rater_id).join(latest, latest.c.outcome == JudgeOutcomeRow.id)
    )
    return dict(rows.all())


def answer_ids(session: Session) -> list[str]:
    return list(session.scalars(select(AnswerRow.id).order_by(AnswerRow.id)))


def answer_slices(session: Session) -> list[dict[str, Any]]:
    """Per answer: its document, question, generator and source (the groups figures are given by)."""
    source = AnswerRow.meta["source"].as_string()  # read in SQL: 100,000 JSON objects parsed here took seconds
    rows = session.connection().execute(
        select(AnswerRow.id, DocumentRow.name, QuestionRow.id, AnswerRow.generator, source)
        .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
        .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
    )
    return [
        {
            "answer_id": answer,
            "document": document,
            "question": question,
            "generator": generator or "unknown",
            "source": source or "unknown",
        }
        for answer, document, question, generator, source in rows.all()
    ]


def point_labels(session: Session, *, reviewed_only: bool = False, judges_only: bool = False) -> dict[str, list[Any]]:
    """Labels on data points with a span, as columns (answer_id, item, rater_id, kind, tag, confidence,
    submitted): every rater's record of the same point (its identity, storage/points.py) is one item.
    `submitted` says whether that rater submitted a review of the answer. `reviewed_only` keeps
    answers someone submitted a review of; `judges_only` keeps judges' labels."""
    item = func.coalesce(DataPointRow.point_key, "id:" + cast(DataPointRow.id, String))
    submitted = (
        select(ReviewRow.answer_id, ReviewRow.rater_id)
        .where(ReviewRow.status == ReviewStatus.SUBMITTED.value)
        .subquery()
    )
    statement = (
        select(
            DataPointRow.answer_id,
            item.label("item"),
            LabelRow.rater_id,
            RaterRow.kind,
            LabelRow.tag,
            LabelRow.confidence,
            submitted.c.rater_id.is_not(None).label("submitted"),
        )
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .join(RaterRow, RaterRow.id == LabelRow.rater_id)
        .outerjoin(
            submitted,
            (submitted.c.answer_id == DataPointRow.answer_id) & (submitted.c.rater_id == LabelRow.rater_id),
        )
        .where(DataPointRow.span_start.is_not(None))
    )
    if reviewed_only:
        statement = statement.where(DataPointRow.answer_id.in_(select(submitted.c.answer_id)))
    if judges_only:
        statement = statement.where(RaterRow.kind == "judge")
    # Core on the connection, as columns: at a million labels, per-row objects dominate the time.
    rows = session.connection().execute(statement).all()
    keys = ("answer_id", "item", "rater_id", "kind", "tag", "confidence", "submitted")
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(keys)
    return dict(zip(keys, map(list, columns), strict=True))
