"""The figures as first defined, one by one, that the fast ones are tested against: scores as SQL
aggregates (NULLIF, so a score whose denominator is 0 is NULL, never 0), the labels as rows, and the
judge-human alignment answer by answer and point by point. Slow at scale; nothing in the product uses
them."""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import Float, String, case, cast, func, select
from sqlalchemy.orm import Session
from sqlalchemy.sql import ColumnElement, Subquery

from app.figures import analytics
from app.project import Project
from models.vocabulary import Tag
from storage.analytics import ScoreRow
from storage.schema import AnswerRow, DataPointRow, DocumentRow, LabelRow, QuestionRow, RaterRow
from storage.slices import slice_column


def _count(tag: Tag) -> ColumnElement[Any]:
    return func.sum(case((LabelRow.tag == tag.value, 1), else_=0))


def _ratio(numerator: ColumnElement[Any], denominator: ColumnElement[Any]) -> ColumnElement[Any]:
    return cast(numerator, Float) / func.nullif(denominator, 0)


def _per_answer(rater_ids: list[int] | None) -> Subquery:
    """A subquery: one row per (answer, rater) with tag counts and LeMAJ scores."""
    tagged = (
        select(
            DataPointRow.answer_id.label("answer_id"),
            LabelRow.rater_id.label("rater_id"),
            _count(Tag.CORRECT).label("c"),
            _count(Tag.INCORRECT).label("i"),
            _count(Tag.IRRELEVANT).label("irr"),
            _count(Tag.MISSING).label("m"),
        )
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .group_by(DataPointRow.answer_id, LabelRow.rater_id)
    )
    if rater_ids is not None:
        tagged = tagged.where(LabelRow.rater_id.in_(rater_ids))
    counts = tagged.subquery()
    precision = _ratio(counts.c.c, counts.c.c + counts.c.irr)
    recall = _ratio(counts.c.c, counts.c.c + counts.c.m)
    return select(
        counts.c.answer_id,
        counts.c.rater_id,
        counts.c.c,
        counts.c.i,
        counts.c.irr,
        counts.c.m,
        _ratio(counts.c.c, counts.c.c + counts.c.i).label("correctness"),
        precision.label("precision"),
        recall.label("recall"),
        (2 * precision * recall / func.nullif(precision + recall, 0)).label("f1"),
    ).subquery()


def scores_in_sql(session: Session, by: str = "answer", rater_ids: list[int] | None = None) -> list[ScoreRow]:
    """`storage.analytics.scores` as SQL aggregates: the definition the numpy figures are tested against."""
    scored = _per_answer(rater_ids)
    if by == "answer":  # one row per answer and rater already: no regrouping, no joins
        per_row = (
            select(
                scored.c.answer_id,
                RaterRow.name,
                scored.c.c,
                scored.c.i,
                scored.c.irr,
                scored.c.m,
                scored.c.correctness,
                scored.c.precision,
                scored.c.recall,
                scored.c.f1,
            )
            .join(RaterRow, RaterRow.id == scored.c.rater_id)
            .order_by(scored.c.answer_id, RaterRow.name)
        )
        return [
            ScoreRow(answer, rater, 1, c, i, irr, m, correctness, precision, recall, f1)
            for answer, rater, c, i, irr, m, correctness, precision, recall, f1 in session.execute(per_row)
        ]
    key = slice_column(by).label("key")
    statement = (
        select(
            key,
            RaterRow.name,
            func.count(),
            func.sum(scored.c.c),
            func.sum(scored.c.i),
            func.sum(scored.c.irr),
            func.sum(scored.c.m),
            func.avg(scored.c.correctness),
            func.avg(scored.c.precision),
            func.avg(scored.c.recall),
            func.avg(scored.c.f1),
        )
        .select_from(scored)
        .join(RaterRow, RaterRow.id == scored.c.rater_id)
        .join(AnswerRow, AnswerRow.id == scored.c.answer_id)
        .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
        .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
        .group_by(key, RaterRow.name)
        .order_by(key, RaterRow.name)
    )
    return [
        ScoreRow(str(k), rater, n, int(c), int(i), int(irr), int(m), *(None if v is None else float(v) for v in rest))
        for k, rater, n, c, i, irr, m, *rest in session.execute(statement)
    ]


def item_labels(session: Session, rater_ids: list[int]) -> dict[str, list[Any]]:
    """Columns answer, item, rater_id, tag: an item is a data point by its identity (what it says),
    so every rater's record of the same point is one item, spans or not, whatever order they came in."""
    item = func.coalesce(DataPointRow.point_key, "id:" + cast(DataPointRow.id, String))
    statement = (
        select(DataPointRow.answer_id, item, LabelRow.rater_id, LabelRow.tag)
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .where(LabelRow.rater_id.in_(rater_ids))
    )
    # Core on the connection, as columns: at a million labels, per-row objects dominate the time.
    rows = session.connection().execute(statement).all()
    columns = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
    return dict(zip(("answer", "item", "rater_id", "tag"), map(list, columns), strict=True))


def answer_sources(session: Session) -> dict[str, str | None]:
    """Each answer's source as written (None where none is): the plain read that
    storage.scoring.answer_keys is tested against."""
    return dict(session.connection().execute(select(AnswerRow.id, AnswerRow.meta["source"].as_string())).all())


def alignment_by_rows(project: Project, judge: str, human: str) -> dict[str, Any]:
    """`analytics.alignment` as defined, answer by answer and point by point."""
    size = len(analytics.TAG_ORDER)
    counts = np.zeros((size, size), dtype=np.int64)
    disagreements: list[dict[str, Any]] = []
    for answer in project.answers():
        by_rater = project.data_points(answer.id)
        pairs, found = analytics._match_answer(answer.id, by_rater.get(judge), by_rater.get(human))
        for j, h in pairs:
            counts[analytics.TAG_ORDER.index(Tag(h)), analytics.TAG_ORDER.index(Tag(j))] += 1
        disagreements += found
    paired = paired_score_rows(analytics.scores(project, "answer", [judge, human]), judge, human)
    shown = sorted(disagreements, key=lambda d: -(d["judge_confidence"] or 0))
    return analytics._alignment_result(judge, human, counts, shown, paired)


def paired_score_rows(
    answer_scores: list[dict[str, Any]], judge: str, human: str
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """`analytics._paired_scores` from rows of `analytics.scores`: the definition it is tested against."""
    by_answer = {(s["answer_id"], s["rater"]): s for s in answer_scores}
    paired = {}
    for metric, key in (("correctness", "correctness"), ("relevance", "f1")):
        both = [
            (by_answer[(a, judge)][key], by_answer[(a, human)][key])
            for a in sorted({a for a, _ in by_answer})
            if (a, judge) in by_answer
            and (a, human) in by_answer
            and by_answer[(a, judge)][key] is not None
            and by_answer[(a, human)][key] is not None
        ]
        paired[metric] = (np.array([x for x, _ in both], dtype=float), np.array([y for _, y in both], dtype=float))
    return paired
