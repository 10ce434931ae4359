"""Repository functions of adjudication: the reviews that can disagree, the adjudicator's decisions,
and the consensus rater whose points and labels are the adjudicated truth of an answer.

The consensus is an ordinary human rater named CONSENSUS with a submitted review of each answer it
settled, so scores, alignment and the rest read it like any reviewer; the figures that pick "the
human" reference prefer it where it exists (`prefer_consensus`), and agreement leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from models.vocabulary import RaterKind, ReviewStatus, Tag
from storage import raters, reviews
from storage.audit import append_audit
from storage.db import StorageError
from storage.reviews import PointSnapshot
from storage.schema import AdjudicationRow, DataPointRow, LabelRow, PassageRow, RaterRow, ReviewRow

CONSENSUS = "consensus"
REASONS = ("guideline unclear", "reviewer error", "both defensible")


@dataclass(frozen=True, kw_only=True)
class Decision:
    answer_id: str
    point_key: str
    tag: Tag | None  # None: left out of the consensus
    reason: str | None
    adjudicator: str
    reviewers: dict[str, str | None]  # what each reviewer had said when it was decided
    guideline_version: str | None
    decided_at: datetime


def consensus_id(session: Session, actor: str | None = None) -> int | None:
    """The consensus rater's id; made (and audited) when `actor` is given and there is none yet."""
    found = raters.rater_named(session, CONSENSUS)
    if found is not None:
        if found.kind is not RaterKind.HUMAN or not found.config.get("consensus"):
            raise StorageError(f"a rater named {CONSENSUS!r} already exists and is not the consensus: rename it first")
        return found.id
    if actor is None:
        return None
    return raters.add_rater(session, CONSENSUS, RaterKind.HUMAN, {"consensus": True}, actor).id


def submitted_reviewers(session: Session, answer_ids: Iterable[str] | None = None) -> dict[str, list[tuple[int, str]]]:
    """Per answer, the human raters (id, name) who submitted a review of it, the consensus aside."""
    statement = (
        select(ReviewRow.answer_id, RaterRow.id, RaterRow.name)
        .join(RaterRow, RaterRow.id == ReviewRow.rater_id)
        .where(
            ReviewRow.status == ReviewStatus.SUBMITTED.value,
            RaterRow.kind == RaterKind.HUMAN.value,
            RaterRow.name != CONSENSUS,
        )
        .order_by(ReviewRow.answer_id, RaterRow.name)
    )
    if answer_ids is not None:
        statement = statement.where(ReviewRow.answer_id.in_(list(answer_ids)))
    found: dict[str, list[tuple[int, str]]] = {}
    for answer_id, rater_id, name in session.connection().execute(statement).all():
        found.setdefault(answer_id, []).append((rater_id, name))
    return found


def answers_reviewed_twice(session: Session, leave_out: Iterable[str] = ()) -> list[str]:
    """Answers two or more humans (not the consensus, not the raters left out) submitted a review of."""
    left_out = [CONSENSUS, *leave_out]
    return list(
        session.scalars(
            select(ReviewRow.answer_id)
            .join(RaterRow, RaterRow.id == ReviewRow.rater_id)
            .where(
                ReviewRow.status == ReviewStatus.SUBMITTED.value,
                RaterRow.kind == RaterKind.HUMAN.value,
                RaterRow.name.not_in(left_out),
            )
            .group_by(ReviewRow.answer_id)
            .having(func.count() >= 2)
            .order_by(ReviewRow.answer_id)
        )
    )


def settled_answers() -> Select[str]:
    """A query of the answers the consensus settled (its review is submitted)."""
    return (
        select(ReviewRow.answer_id)
        .join(RaterRow, RaterRow.id == ReviewRow.rater_id)
        .where(RaterRow.name == CONSENSUS, ReviewRow.status == ReviewStatus.SUBMITTED.value)
    )


def consensus_answers(session: Session) -> set[str]:
    """Answers the consensus settled (its review is submitted)."""
    return set(session.connection().execute(settled_answers()).scalars().all())


def prefer_consensus(rows: list[Any], answer_of: Any, rater_of: Any, settled: set[str]) -> list[Any]:
    """The rows of human reviews with, on every answer the consensus settled, the consensus's alone:
    where reviewers were adjudicated, the figures read the adjudicated tags, not each reviewer's."""
    return [r for r in rows if answer_of(r) not in settled or rater_of(r) == CONSENSUS]


def decisions(session: Session, answer_id: str | None = None) -> list[Decision]:
    statement = select(AdjudicationRow).order_by(AdjudicationRow.answer_id, AdjudicationRow.id)
    if answer_id is not None:
        statement = statement.where(AdjudicationRow.answer_id == answer_id)
    return [
        Decision(
            answer_id=row.answer_id,
            point_key=row.point_key,
            tag=Tag(row.tag) if row.tag else None,
            reason=row.reason,
            adjudicator=row.adjudicator,
            reviewers=dict(row.reviewers or {}),
            guideline_version=row.guideline_version,
            decided_at=row.decided_at,
        )
        for row in session.scalars(statement)
    ]


def record_decision(session: Session, decision: Decision) -> None:
    """Save a decision (replacing an earlier one on the same point) and audit it."""
    row = session.scalar(
        select(AdjudicationRow).where(
            AdjudicationRow.answer_id == decision.answer_id, AdjudicationRow.point_key == decision.point_key
        )
    )
    if row is None:
        row = AdjudicationRow(answer_id=decision.answer_id, point_key=decision.point_key)
        session.add(row)
    row.tag = decision.tag.value if decision.tag else None
    row.reason = decision.reason
    row.adjudicator = decision.adjudicator
    row.reviewers = decision.reviewers
    row.guideline_version = decision.guideline_version
    row.decided_at = decision.decided_at
    session.flush()
    append_audit(
        session,
        decision.adjudicator,
        "adjudication.decided",
        "answer",
        decision.answer_id,
        {
            "point_key": decision.point_key,
            "tag": row.tag,
            "reason": decision.reason,
            "reviewers": decision.reviewers,
            "guideline_version": decision.guideline_version,
        },
    )


def write_consensus(session: Session, answer_id: str, points: list[tuple[PointSnapshot, str, str]], actor: str) -> None:
    """Make the consensus's points on the answer exactly these (point, identity key, rationale), each
    keyed as the reviewers' point it settles, and submit its review."""
    rater_id = consensus_id(session, actor)
    assert rater_id is not None
    reviews.restore(session, answer_id, rater_id, [p for p, _, _ in points], [(k, r) for _, k, r in points])
    reviews.update_review(session, answer_id, rater_id, status=ReviewStatus.SUBMITTED)
    append_audit(
        session,
        actor,
        "adjudication.consensus",
        "answer",
        answer_id,
        {"points": [(key, p.tag.value if p.tag else None) for p, key, _ in points]},
    )


def labels_by_key(session: Session, answer_ids: Iterable[str], rater_ids: Iterable[int]) -> list[tuple[Any, ...]]:
    """(answer, rater id, identity key, tag, rationale, comment, text) of these raters' labels on the
    points of these answers (their own, or another rater's they labelled, as an import does)."""
    return [
        tuple(row)
        for row in session.connection()
        .execute(
            select(
                DataPointRow.answer_id,
                LabelRow.rater_id,
                DataPointRow.point_key,
                LabelRow.tag,
                LabelRow.rationale,
                DataPointRow.comment,
                DataPointRow.text,
            )
            .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
            .where(DataPointRow.answer_id.in_(list(answer_ids)), LabelRow.rater_id.in_(list(rater_ids)))
            .order_by(DataPointRow.answer_id, DataPointRow.ordinal, DataPointRow.id)
        )
        .all()
    ]


def answers_labelled_by(session: Session, rater_ids: Iterable[int]) -> set[str]:
    """The answers these raters put a label on."""
    return set(
        session.scalars(
            select(DataPointRow.answer_id)
            .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
            .where(LabelRow.rater_id.in_(list(rater_ids)))
            .distinct()
        )
    )


def labelled_points(session: Session, answer_id: str, rater_ids: Iterable[int]) -> list[tuple[int, PointSnapshot]]:
    """(rater id, point) for each label these raters put on the answer's data points, whoever recorded
    the point: its words, span, lead-in, cited passages, identity key and this rater's tag; the comment
    only where the point is the rater's own."""
    rows = session.execute(
        select(DataPointRow, LabelRow.rater_id, LabelRow.tag)
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .where(DataPointRow.answer_id == answer_id, LabelRow.rater_id.in_(list(rater_ids)))
        .order_by(DataPointRow.ordinal, DataPointRow.id)
    ).all()
    cited = reviews.cited_passages(session, [p.id for p, _, _ in rows])
    return [
        (rater_id, reviews.point_snapshot(p, tag, p.comment if p.rater_id == rater_id else None, cited))
        for p, rater_id, tag in rows
    ]


def citation_ids(session: Session, passage_ids: Iterable[int]) -> dict[int, str]:
    """The citation id (par_14) of each of these passages."""
    wanted = list(passage_ids)
    if not wanted:
        return {}
    rows = session.execute(select(PassageRow.id, PassageRow.citation_id).where(PassageRow.id.in_(wanted)))
    return {passage: citation for passage, citation in rows.all()}
