"""Questions and the answers to them: adding, updating and reading an answer, and the answer list."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

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
    """Set these columns of an existing answer."""
    row = session.get(AnswerRow, answer_id)
    if row is None:
        raise LookupError(f"no answer {answer_id}")
    for name, value in changes.items():
        setattr(row, name, value)


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
