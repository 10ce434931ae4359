"""Questions and the answers to them: adding, updating and reading an answer, and the answer list."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, func, select, update
from sqlalchemy import text as sql
from sqlalchemy.orm import Session

from models.segmentation import SEGMENTER_VERSION, Segment, segment_answer
from storage.schema import AnswerRow, DataPointRow, DocumentRow, QuestionRow


@dataclass(frozen=True)
class AnswerSummary:
    id: str
    document: str
    question: str
    generator: str | None
    source: str | None


@dataclass(frozen=True)
class AnswerDetail:
    id: str
    document_id: int
    document: str
    question: str
    text: str
    generator: str | None
    gold_answer: str | None
    gold_spans: list[Any] | None
    meta: dict[str, Any]
    gold_required: str | None = None  # what a complete answer must say (rubric judges)
    gold_helpful: str | None = None  # what would help beyond that


def question_id(session: Session, document_id: int, question: str) -> int:
    """The id of a question about a document, adding it when new."""
    found = session.scalar(
        select(QuestionRow.id).where(QuestionRow.document_id == document_id, QuestionRow.text == question)
    )
    if found is not None:
        return found
    row = QuestionRow(document_id=document_id, text=question)
    session.add(row)
    session.flush()
    return row.id


def answer_exists(session: Session, answer_id: str) -> bool:
    return session.get(AnswerRow, answer_id) is not None


def answer_fields(session: Session, answer_id: str, names: Iterable[str]) -> dict[str, Any] | None:
    """An answer's stored values of these columns (what a re-import compares with); None when it is new."""
    row = session.get(AnswerRow, answer_id)
    return None if row is None else {name: getattr(row, name) for name in names}


def add_answer(session: Session, answer_id: str, position: int, fields: dict[str, Any]) -> None:
    """Add an answer at its place in dataset order; `fields` are its columns by name."""
    session.add(AnswerRow(id=answer_id, position=position, **fields))


def update_answer(session: Session, answer_id: str, changes: dict[str, Any]) -> None:
    """Set these columns of an existing answer (a new text is segmented again when next read)."""
    row = session.get(AnswerRow, answer_id)
    if row is None:
        raise LookupError(f"no answer {answer_id}")
    for name, value in changes.items():
        setattr(row, name, value)
    if "text" in changes:
        row.segmentation = None


def segmentations(session: Session, answer_ids: Iterable[str], *, keep: bool = True) -> dict[str, list[Segment]]:
    """The answers' data points as the segmenter cuts them, read as stored with each answer; an answer
    never segmented, or stored by another segmenter version, is segmented now and, with `keep`, stored in
    the caller's transaction (committed with it, else segmented again next time). The window reads with
    `keep=False`: a read that writes would take the project's write lock from a pool thread, and the
    window would no longer see another process's saves as they come. Unknown ids are left out."""
    found: dict[str, list[Segment]] = {}
    wanted = list(dict.fromkeys(answer_ids))
    for at in range(0, len(wanted), 500):
        stale = []
        for answer_id, text, stored in session.execute(
            select(AnswerRow.id, AnswerRow.text, AnswerRow.segmentation).where(AnswerRow.id.in_(wanted[at : at + 500]))
        ):
            segments = _stored_segments(text, stored)
            if segments is None:
                segments = segment_answer(text)
                stale.append({"answer": answer_id, "segmentation": _stored_form(segments)})
            found[answer_id] = segments
        if keep:
            _store(session, stale)
    return found


def keep_segmentations(session: Session, segmentations: dict[str, list[Segment]]) -> None:
    """Store these answers' segmentations (read in another transaction) under this segmenter version."""
    _store(session, [{"answer": a, "segmentation": _stored_form(segments)} for a, segments in segmentations.items()])


def _store(session: Session, values: list[dict[str, Any]]) -> None:
    if values and _may_update_answers(session):  # Core, by id: a matter wall makes a hidden answer's a no-op
        table = AnswerRow.metadata.tables[AnswerRow.__tablename__]
        session.execute(
            update(table).where(table.c.id == bindparam("answer")).values(segmentation=bindparam("segmentation")),
            values,
        )


def _may_update_answers(session: Session) -> bool:
    """Whether this login may write answers: on a server a reviewer may not (0018's grants), and keeps no
    segmentation then, segmenting again when next asked (about 0.1 ms an answer)."""
    if session.get_bind().dialect.name != "postgresql":
        return True
    return bool(session.scalar(sql("SELECT has_table_privilege('public.answers', 'UPDATE')")))


def segmentation(session: Session, answer_id: str, *, keep: bool = True) -> list[Segment]:
    """One answer's data points (`segmentations`); none for an unknown answer."""
    return segmentations(session, [answer_id], keep=keep).get(answer_id, [])


def _stored_form(segments: list[Segment]) -> dict[str, Any]:
    points = [[s.start, s.end, s.context_start, s.context_end] for s in segments]
    return {"version": SEGMENTER_VERSION, "points": points}


def _stored_segments(text: str, stored: dict[str, Any] | None) -> list[Segment] | None:
    """The stored segmentation, or None when there is none of this segmenter version."""
    if not stored or stored.get("version") != SEGMENTER_VERSION:
        return None
    return [
        Segment(s, e, text[s:e], cs, ce, text[cs:ce] if cs is not None and ce is not None else "")
        for s, e, cs, ce in stored["points"]
    ]


def has_data_points(session: Session, answer_id: str) -> bool:
    return session.scalar(select(func.count()).where(DataPointRow.answer_id == answer_id)) != 0


def list_answers(session: Session) -> list[AnswerSummary]:
    rows = session.execute(
        select(AnswerRow.id, DocumentRow.name, QuestionRow.text, AnswerRow.generator, AnswerRow.meta)
        .join(QuestionRow, AnswerRow.question_id == QuestionRow.id)
        .join(DocumentRow, QuestionRow.document_id == DocumentRow.id)
        .order_by(AnswerRow.id)
    )
    return [
        AnswerSummary(id=a, document=d, question=q, generator=g, source=(m or {}).get("source"))
        for a, d, q, g, m in rows
    ]


def answer_detail(session: Session, answer_id: str) -> AnswerDetail | None:
    row = session.execute(
        select(AnswerRow, QuestionRow.text, DocumentRow.id, DocumentRow.name)
        .join(QuestionRow, AnswerRow.question_id == QuestionRow.id)
        .join(DocumentRow, QuestionRow.document_id == DocumentRow.id)
        .where(AnswerRow.id == answer_id)
    ).first()
    if row is None:
        return None
    answer, question, document_id, document = row
    return AnswerDetail(
        id=answer.id,
        document_id=document_id,
        document=document,
        question=question,
        text=answer.text,
        generator=answer.generator,
        gold_answer=answer.gold_answer,
        gold_spans=answer.gold_spans,
        meta=answer.meta or {},
        gold_required=answer.gold_required,
        gold_helpful=answer.gold_helpful,
    )


def last_answer_position(session: Session) -> int:
    return session.scalar(select(func.max(AnswerRow.position))) or 0


def answers_about_longest_document(session: Session) -> list[str]:
    """The answers about the project's longest document (by its text; ties: the lowest id), in id order."""
    longest = session.scalars(
        select(DocumentRow.id).order_by(func.length(DocumentRow.text).desc(), DocumentRow.id).limit(1)
    ).first()
    about = session.scalars(
        select(AnswerRow.id)
        .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
        .where(QuestionRow.document_id == longest)
        .order_by(AnswerRow.id)
    )
    return list(about)
