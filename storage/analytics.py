"""What the figures read besides the label columns (storage/columns.py): scores as rows (numpy on
those columns, storage/scoring.py), raters, reviews, the details of the points where a judge and a
human differ, and every label flat for the exports; the large reads as the driver's tuples.

A rater's tags on an answer are the labels that rater put on the answer's data points (their own
copies, for a reviewer; their own points, for a judge). A score whose denominator is 0 is undefined
(None), never 0. The scores' SQL definition, which the numpy figures are tested against, is in the
tests (tests/reference_figures.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import Connection, String, func, select, text
from sqlalchemy.orm import Session, aliased

from models.vocabulary import RaterKind, ReviewStatus
from storage.db import StorageError
from storage.plain_rows import plain_rows
from storage.point_fields import made_citation
from storage.schema import (
    AnswerRow,
    CitationRow,
    DataPointRow,
    DocumentRow,
    LabelRow,
    PassageRow,
    QuestionRow,
    RaterRow,
    ReviewRow,
)

SLICES = ("answer", "document", "source", "question", "generator", "contract_type", "query_type", "rater")


@dataclass(frozen=True)
class ScoreRow:
    key: str  # the answer id, document name, source… that the row is about
    rater: str
    answers: int
    correct: int
    incorrect: int
    irrelevant: int
    missing: int
    correctness: float | None
    precision: float | None
    recall: float | None
    f1: float | None


def scores(session: Session, by: str = "answer", rater_ids: list[int] | None = None) -> list[ScoreRow]:
    """Scores per answer and rater, or their means over a slice (answers whose score is undefined
    are left out of that score's mean): numpy on the label columns (storage/scoring.py)."""
    from storage import scoring

    table = scoring.score_table(session, rater_ids)
    if by == "answer":
        return [ScoreRow(a, r, 1, *rest) for a, r, *rest in table.rows()]
    return [ScoreRow(*row) for row in scoring.slice_means(table, scoring.answer_keys(session, by))]


def pair_details(
    session: Session, judge_points: list[int], human_points: list[int], judge_id: int
) -> list[tuple[int, str, float | None]]:
    """For each pair of a judge's data point and a human's: the judge point's ordinal and the judge's
    confidence in it, the human point's words. One query for all the pairs on SQLite, given as one
    parameter: a JSON array that its json_each reads, a pair packed into one integer (judge point ×
    `base` + human point; as [judge, human] arrays, taking them apart with json_extract cost a third
    of the query's time). In chunks of 10,000 bound parameters, and a row per point rather than per
    pair, it took three times as long. PostgreSQL hashed the whole table for that join (2 s at
    140,000 pairs): there the points are read by id (`_points_by_id`)."""
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        return _points_by_id(connection, judge_points, human_points, judge_id)
    base = max(human_points, default=0) + 1
    if (max(judge_points, default=0) + 1) * base >= 2**63:  # ids are 32-bit integers (int4 on PostgreSQL)
        raise StorageError("data point ids too large to be paired in one query")
    pairs = json.dumps([j * base + h for j, h in zip(judge_points, human_points, strict=True)])
    details = plain_rows(  # a row per pair: the driver's tuples, not SQLAlchemy's rows (0.1 s at 120,000)
        connection,
        text(
            "SELECT j.ordinal, h.text, l.confidence FROM json_each(:pairs) AS p "
            "JOIN data_points j ON j.id = p.value / :base "
            "JOIN data_points h ON h.id = p.value % :base "
            "LEFT JOIN labels l ON l.data_point_id = j.id AND l.rater_id = :judge_id "
            "ORDER BY p.key"
        ).bindparams(pairs=pairs, base=base, judge_id=judge_id),
    )
    if len(details) != len(judge_points):  # a point deleted since its pair was made
        raise StorageError("data points changed while the figures were read: compute them again")
    return details


def _points_by_id(
    connection: Connection, judge_points: list[int], human_points: list[int], judge_id: int
) -> list[tuple[int, str, float | None]]:
    """`pair_details` on PostgreSQL: both raters' points in one scan of the table, each picked by id from
    an array given as one literal (as a list, psycopg took 0.3 s to send it), the words of the human's
    only; then the judge's confidence in its points, from its labels alone (joined to the points, the
    judge's million labels were hashed: at 133,000 pairs, under load, 1.4-1.6 s, now 1.1-1.3 s). Read as
    the driver's own tuples (SQLAlchemy's rows took 0.9 s of 2.5 at 133,000 pairs)."""

    def ids(points: list[int]) -> str:
        return "{" + ",".join(map(str, points)) + "}"

    cursor = connection.connection.cursor()
    try:
        cursor.execute(
            "SELECT id, ordinal, CASE WHEN rater_id = %s THEN NULL ELSE text END FROM data_points "
            "WHERE id = ANY(CAST(%s AS integer[]))",
            (judge_id, ids(judge_points + human_points)),
        )
        points = {point: (ordinal, words) for point, ordinal, words in cursor.fetchall()}
        cursor.execute(
            "SELECT data_point_id, confidence FROM labels "
            "WHERE rater_id = %s AND data_point_id = ANY(CAST(%s AS integer[]))",
            (judge_id, ids(judge_points)),
        )
        confidence: dict[int, float | None] = dict(cursor.fetchall())
    finally:
        cursor.close()
    if not points.keys() >= set(judge_points) | set(human_points):  # deleted since paired
        raise StorageError("data points changed while the figures were read: compute them again")
    return [(points[j][0], points[h][1], confidence.get(j)) for j, h in zip(judge_points, human_points, strict=True)]


def rater_ids(session: Session, names: list[str] | None) -> dict[str, int]:
    rows = session.execute(select(RaterRow.name, RaterRow.id).order_by(RaterRow.id)).all()
    found = dict(rows)
    if names is None:
        return found
    return {name: found[name] for name in names if name in found}


def rater_kinds(session: Session) -> dict[str, str]:
    return dict(session.execute(select(RaterRow.name, RaterRow.kind)).all())


class ReviewFacts(NamedTuple):
    answer_id: str
    reviewer: str
    status: str
    active_seconds: float
    holistic_correctness: int | None
    holistic_relevance: int | None


def reviews(session: Session) -> list[ReviewFacts]:
    """Every review, whatever its status: the driver's tuples made named tuples (100,000 of SQLAlchemy's
    rows made frozen dataclasses took 0.6 s)."""
    rows = plain_rows(
        session.connection(),
        select(
            ReviewRow.answer_id,
            RaterRow.name,
            ReviewRow.status,
            ReviewRow.active_seconds,
            ReviewRow.holistic_correctness,
            ReviewRow.holistic_relevance,
        ).join(RaterRow, RaterRow.id == ReviewRow.rater_id),
    )
    return list(map(ReviewFacts._make, rows))


def submitted_by_humans(session: Session) -> list[tuple[str, str, float]]:
    """(answer id, reviewer, active seconds) of every review a human submitted."""
    return plain_rows(  # 100,000 reviews: plain tuples, not SQLAlchemy's rows
        session.connection(),
        select(ReviewRow.answer_id, RaterRow.name, ReviewRow.active_seconds)
        .join(RaterRow, RaterRow.id == ReviewRow.rater_id)
        .where(ReviewRow.status == ReviewStatus.SUBMITTED.value, RaterRow.kind == RaterKind.HUMAN.value),
    )


def labelled_points(session: Session) -> list[dict[str, Any]]:
    """Every label on every data point, flat: what exports are made of."""
    creator = aliased(RaterRow)
    rows = session.execute(
        select(
            DataPointRow.answer_id,
            DocumentRow.name.label("document"),
            QuestionRow.text.label("question"),
            DataPointRow.id.label("data_point_id"),
            creator.name.label("created_by"),
            DataPointRow.ordinal,
            DataPointRow.text,
            DataPointRow.span_start,
            DataPointRow.span_end,
            DataPointRow.source_id,
            DataPointRow.point_key,
            DataPointRow.comment,
            RaterRow.name.label("rater"),
            RaterRow.kind.label("rater_kind"),
            LabelRow.tag,
            LabelRow.confidence,
            LabelRow.rationale,
            LabelRow.created_at.label("labelled_at"),
        )
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .join(RaterRow, RaterRow.id == LabelRow.rater_id)
        .join(creator, creator.id == DataPointRow.rater_id)
        .join(AnswerRow, AnswerRow.id == DataPointRow.answer_id)
        .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
        .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
        .order_by(DataPointRow.answer_id, RaterRow.name, DataPointRow.ordinal)
    ).mappings()
    points = [dict(row) for row in rows]
    cited: dict[int, list[str]] = {}
    for point_id, citation in session.execute(
        select(CitationRow.data_point_id, PassageRow.citation_id)
        .join(PassageRow, PassageRow.id == CitationRow.passage_id)
        .where(made_citation())  # a rater's own citations: not what a reviewer's copy came with
        .order_by(PassageRow.ordinal)
    ):
        cited.setdefault(point_id, []).append(citation)
    for point in points:
        point["citations"] = cited.get(point["data_point_id"], [])
        point["labelled_at"] = point["labelled_at"].isoformat() if point["labelled_at"] else None
    return points


def claims_made(session: Session) -> int:
    """The data points the answers make, each counted once: every rater keeps its own record of a point
    (the judge's, the jury's, each reviewer's copy), and records that say the same thing share a
    point_key. Points added as missing are not claims an answer makes."""
    key = func.coalesce(DataPointRow.point_key, func.cast(DataPointRow.id, String))
    found = select(DataPointRow.answer_id, key).where(DataPointRow.span_start.is_not(None)).distinct().subquery()
    return session.scalar(select(func.count()).select_from(found)) or 0
