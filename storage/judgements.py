"""What a rater said about an answer: its data points with their labels and evidence, and the
outcome of the judge's attempt (judged or failed, tokens, time). Also which answers a run has left."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from models.vocabulary import OutcomeStatus, Tag
from storage.audit import append_audit
from storage.point_fields import (
    Evidence,
    PointLabel,
    PointRecord,
    WholePoint,
    made_citation,
    point_record,
    write_points,
)
from storage.schema import AnswerRow, CitationRow, DataPointRow, JudgeOutcomeRow, LabelRow, PassageRow, QuestionRow


def answers_to_judge(
    session: Session, rater_id: int, answer_ids: list[str] | None, *, first: int | None = None, more: int | None = None
) -> tuple[list[str], int]:
    """Answers this judge run has still to judge (failed ones are tried again). `first`: only among
    the first N answers of the selection in dataset order, so the same command again (or after a
    crash) finishes those N and takes no others; `more`: the next N not judged yet. The answers
    come grouped by document, so that consecutive prompts share the document's prefix. Also: how
    many of the answers in scope this run judged before."""
    judged = set(
        session.scalars(
            select(JudgeOutcomeRow.answer_id).where(
                JudgeOutcomeRow.rater_id == rater_id, JudgeOutcomeRow.status == OutcomeStatus.JUDGED.value
            )
        )
    )
    statement = (
        select(AnswerRow.id, QuestionRow.document_id)
        .join(QuestionRow, AnswerRow.question_id == QuestionRow.id)
        .order_by(AnswerRow.position.is_(None), AnswerRow.position, AnswerRow.id)
    )
    if answer_ids is not None:
        statement = statement.where(AnswerRow.id.in_(answer_ids))
    selection = session.execute(statement).all()
    if first is not None:
        selection = selection[: max(first, 0)]
    pending = [(a, document) for a, document in selection if a not in judged]
    done_before = len(selection) - len(pending)
    if more is not None:
        pending = pending[: max(more, 0)]
    place = {a: i for i, (a, _) in enumerate(pending)}
    return [a for a, document in sorted(pending, key=lambda p: (p[1], place[p[0]]))], done_before


@dataclass(frozen=True, kw_only=True)
class NewDataPoint:
    """A judge's data point to save, with its label and evidence: written as a `WholePoint`
    (storage/point_fields.py)."""

    text: str
    span_start: int | None
    span_end: int | None
    tag: Tag | None
    confidence: float | None
    rationale: str | None
    passage_ids: tuple[int, ...]  # the evidence, most relevant first
    unverified_citations: tuple[str, ...]
    bases: tuple[str | None, ...] = ()  # where each passage comes from (cited, section, shown, answer)
    context_start: int | None = None  # the lead-in the point is read with, as offsets into the answer
    context_end: int | None = None


@dataclass(frozen=True, kw_only=True)
class JudgeOutcome:
    status: OutcomeStatus
    attempts: int
    error: str | None
    raw_output: str | None
    passages_seen: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    rejected: dict[str, int] | None = None  # judge points refused by validation, by reason


def _whole(rater_id: int, ordinal: int, point: NewDataPoint) -> WholePoint:
    bases = dict(zip(point.passage_ids, point.bases, strict=False))
    return WholePoint(
        rater_id=rater_id,
        ordinal=ordinal,
        record=PointRecord(
            text=point.text,
            span_start=point.span_start,
            span_end=point.span_end,
            context_start=point.context_start,
            context_end=point.context_end,
            unverified_citations=point.unverified_citations,
        ),
        label=None
        if point.tag is None
        else PointLabel(tag=point.tag, confidence=point.confidence, rationale=point.rationale),
        evidence=tuple(
            Evidence(passage_id=pid, rank=rank, basis=bases.get(pid))
            for rank, pid in enumerate(dict.fromkeys(point.passage_ids))
        ),
    )


def save_judgement(
    session: Session, rater_id: int, answer_id: str, points: list[NewDataPoint], outcome: JudgeOutcome, actor: str
) -> None:
    """Replace what this rater said about the answer: data points, labels, citations and the outcome."""
    old = select(DataPointRow.id).where(DataPointRow.answer_id == answer_id, DataPointRow.rater_id == rater_id)
    session.execute(delete(DataPointRow).where(DataPointRow.id.in_(old)))
    write_points(session, answer_id, [_whole(rater_id, ordinal, point) for ordinal, point in enumerate(points)])
    replace_outcome(session, rater_id, answer_id, outcome)
    append_audit(
        session,
        actor,
        f"judge.{outcome.status.value}",
        "answer",
        answer_id,
        {"rater_id": rater_id, "points": len(points)},
    )


@dataclass(frozen=True)
class StoredDataPoint:
    """A rater's stored data point with that rater's label and evidence (its row read as a `PointRecord`,
    storage/point_fields.py)."""

    id: int
    ordinal: int
    text: str
    span_start: int | None
    span_end: int | None
    tag: Tag | None
    confidence: float | None
    rationale: str | None
    citations: tuple[str, ...]  # the evidence: most relevant first (ranked), then document order
    unverified_citations: tuple[str, ...]
    source_id: int | None = None  # a reviewer's copy: the judge's point it was copied from
    comment: str | None = None
    evidence: tuple[dict[str, Any], ...] = ()  # per passage: citation_id, rank, basis, section
    context_start: int | None = None  # the lead-in the point is read with, as offsets into the answer
    context_end: int | None = None
    context: str = ""  # that lead-in's text; "" when none
    key: str | None = None  # its identity: every rater's record of the same point has this key


def data_points_of(session: Session, answer_id: str, rater_id: int) -> list[StoredDataPoint]:
    """The data points a rater created for an answer, with that rater's own labels."""
    rows = session.execute(
        select(DataPointRow, LabelRow)
        .outerjoin(LabelRow, (LabelRow.data_point_id == DataPointRow.id) & (LabelRow.rater_id == rater_id))
        .where(DataPointRow.answer_id == answer_id, DataPointRow.rater_id == rater_id)
        .order_by(DataPointRow.ordinal)
    ).all()
    answer = session.scalar(select(AnswerRow.text).where(AnswerRow.id == answer_id)) if rows else ""
    cited: dict[int, list[dict[str, Any]]] = {}
    ids = [point.id for point, _ in rows]
    for point_id, citation, rank, basis, section in session.execute(
        select(
            CitationRow.data_point_id, PassageRow.citation_id, CitationRow.rank, CitationRow.basis, PassageRow.section
        )
        .join(PassageRow, PassageRow.id == CitationRow.passage_id)
        .where(CitationRow.data_point_id.in_(ids), made_citation())  # never what a reviewer's copy came with
        .order_by(CitationRow.rank.is_(None), CitationRow.rank, PassageRow.ordinal)
    ):
        cited.setdefault(point_id, []).append(
            {"citation_id": citation, "rank": rank, "basis": basis, "section": section}
        )
    stored = []
    for point, label in rows:
        r = point_record(point)
        stored.append(
            StoredDataPoint(
                id=point.id,
                ordinal=point.ordinal,
                key=point.point_key,
                text=r.text,
                span_start=r.span_start,
                span_end=r.span_end,
                unverified_citations=r.unverified_citations,
                source_id=r.source_id,
                comment=r.comment,
                context_start=r.context_start,
                context_end=r.context_end,
                tag=Tag(label.tag) if label else None,
                confidence=label.confidence if label else None,
                rationale=label.rationale if label else None,
                citations=tuple(e["citation_id"] for e in cited.get(point.id, ())),
                evidence=tuple(cited.get(point.id, ())),
                context=context_text(answer or "", point.context_start, point.context_end),
            )
        )
    return stored


def context_text(answer: str, start: int | None, end: int | None) -> str:
    """A data point's lead-in, read from its answer; "" when it has none."""
    return answer[start:end] if start is not None and end is not None else ""


def judge_outcomes(session: Session, rater_id: int) -> dict[str, JudgeOutcome]:
    rows = session.scalars(select(JudgeOutcomeRow).where(JudgeOutcomeRow.rater_id == rater_id))
    return {
        row.answer_id: JudgeOutcome(
            status=OutcomeStatus(row.status),
            attempts=row.attempts,
            error=row.error,
            raw_output=row.raw_output,
            passages_seen=tuple(row.passages_seen or ()),
            prompt_tokens=row.prompt_tokens,
            completion_tokens=row.completion_tokens,
            seconds=row.seconds,
            rejected=dict(row.rejected or {}),
        )
        for row in rows
    }


def replace_outcome(session: Session, rater_id: int, answer_id: str, outcome: JudgeOutcome) -> None:
    """Record the outcome of a rater's latest attempt at an answer, in place of the one before."""
    session.execute(
        delete(JudgeOutcomeRow).where(JudgeOutcomeRow.answer_id == answer_id, JudgeOutcomeRow.rater_id == rater_id)
    )
    session.add(
        JudgeOutcomeRow(
            rater_id=rater_id,
            answer_id=answer_id,
            status=outcome.status.value,
            attempts=outcome.attempts,
            error=outcome.error,
            raw_output=outcome.raw_output,
            passages_seen=list(outcome.passages_seen),
            prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens,
            seconds=outcome.seconds,
            rejected=dict(outcome.rejected) if outcome.rejected else None,
        )
    )


def raw_output_of(session: Session, rater_id: int, answer_id: str) -> str | None:
    """A rater's raw output on one answer (the claim checker's whole report, as JSON); None if none."""
    return session.scalar(
        select(JudgeOutcomeRow.raw_output).where(
            JudgeOutcomeRow.rater_id == rater_id, JudgeOutcomeRow.answer_id == answer_id
        )
    )
