"""Repository functions: each takes a session and never commits it; results are plain dataclasses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, func, or_, select, text
from sqlalchemy.orm import Session

from models.vocabulary import PassageKind
from storage.schema import (
    AnswerRow,
    AuditRow,
    DataPointRow,
    DocumentRow,
    LabelRow,
    PassageRow,
    QuestionRow,
    RaterRow,
)


@dataclass(frozen=True)
class Passage:
    id: int
    document_id: int
    citation_id: str
    kind: PassageKind
    article: str | None
    section: str | None
    heading_path: str
    text: str
    page: int | None
    char_start: int | None
    char_end: int | None
    footnote_label: str | None
    refers_to_id: int | None


@dataclass(frozen=True)
class SearchHit:
    passage: Passage
    score: float  # BM25 as SQLite reports it: lower is better


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


def _passage(row: PassageRow) -> Passage:
    return Passage(
        id=row.id,
        document_id=row.document_id,
        citation_id=row.citation_id,
        kind=PassageKind(row.kind),
        article=row.article,
        section=row.section,
        heading_path=row.heading_path,
        text=row.text,
        page=row.page,
        char_start=row.char_start,
        char_end=row.char_end,
        footnote_label=row.footnote_label,
        refers_to_id=row.refers_to_id,
    )


def counts(session: Session) -> dict[str, int]:
    """How many of each thing the project holds (what `assay info` prints)."""
    tables = {
        "documents": DocumentRow,
        "passages": PassageRow,
        "questions": QuestionRow,
        "answers": AnswerRow,
        "data_points": DataPointRow,
        "labels": LabelRow,
        "raters": RaterRow,
    }
    return {name: session.scalar(select(func.count()).select_from(table)) or 0 for name, table in tables.items()}


def append_audit(
    session: Session, actor: str, action: str, entity: str, entity_id: str, payload: dict[str, Any]
) -> None:
    session.add(AuditRow(actor=actor, action=action, entity=entity, entity_id=entity_id, payload=payload))


def document_by_name(session: Session, name: str) -> DocumentRow | None:
    return session.scalar(select(DocumentRow).where(DocumentRow.name == name))


def document_id_by_name(session: Session, name: str) -> int | None:
    return session.scalar(select(DocumentRow.id).where(DocumentRow.name == name))


def document_names(session: Session) -> list[str]:
    return list(session.scalars(select(DocumentRow.name).order_by(DocumentRow.name)))


def passages_of(session: Session, document_id: int) -> list[Passage]:
    rows = session.scalars(select(PassageRow).where(PassageRow.document_id == document_id).order_by(PassageRow.ordinal))
    return [_passage(row) for row in rows]


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


def answer_row(session: Session, answer_id: str) -> AnswerRow | None:
    return session.get(AnswerRow, answer_id)


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
    )


_WORD = re.compile(r"\w+", re.UNICODE)


def search_passages(session: Session, document_id: int, query: str, limit: int = 20) -> list[SearchHit]:
    """BM25-ranked passages of one document: all words first; any word when none has them all."""
    words = _WORD.findall(query)
    if not words:
        return []
    quoted = [f'"{w}"' for w in words]  # quoted: the user's words are never FTS5 syntax
    for match in (" ".join(quoted), " OR ".join(quoted)):
        hits = _fts(session, document_id, match, limit)
        if hits:
            return hits
    return []


def _fts(session: Session, document_id: int, match: str, limit: int) -> list[SearchHit]:
    if session.get_bind().dialect.name != "sqlite":
        return _search_without_fts(session, document_id, match, limit)
    # A heading names what a clause is about, so it weighs more than one word in the body.
    ranked = session.execute(
        text(
            "SELECT passages_fts.rowid, bm25(passages_fts, 1.0, 2.0) AS score FROM passages_fts "
            "JOIN passages ON passages.id = passages_fts.rowid "
            "WHERE passages_fts MATCH :match AND passages.document_id = :document_id "
            "ORDER BY score LIMIT :limit"
        ),
        {"match": match, "document_id": document_id, "limit": limit},
    ).all()
    rows = {row.id: row for row in session.scalars(select(PassageRow).where(PassageRow.id.in_([r[0] for r in ranked])))}
    return [SearchHit(_passage(rows[rowid]), float(score)) for rowid, score in ranked]


def _search_without_fts(session: Session, document_id: int, match: str, limit: int) -> list[SearchHit]:
    """Servers without FTS5 (PostgreSQL): passages holding the words, shortest first."""
    words = [w.strip('"') for w in match.replace(" OR ", " ").split()]
    statement = select(PassageRow).where(PassageRow.document_id == document_id, PassageRow.kind != "toc")
    condition = [PassageRow.text.ilike(f"%{w}%") for w in words]
    statement = statement.where(or_(*condition) if " OR " in match else and_(*condition))
    rows = session.scalars(statement.order_by(func.length(PassageRow.text)).limit(limit))
    return [SearchHit(_passage(row), 0.0) for row in rows]
