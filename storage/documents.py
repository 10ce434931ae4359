"""Documents and their passages: looking them up, and ranked search within one document.

A document never changes in place once imported (citation ids must keep pointing at the same
words); its passages are what a citation names. What the claim checker's encoders read of it is kept with it
(`readings`), once, at import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select, text, update
from sqlalchemy.orm import Session

from models.vocabulary import PassageKind
from storage.schema import DocumentRow, PassageRow


@dataclass(frozen=True, kw_only=True)
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
    ocr_confidence: float | None = None  # a scan's passage: OCR's mean word confidence, 0-1


@dataclass(frozen=True, kw_only=True)
class SearchHit:
    passage: Passage
    score: float  # BM25 as SQLite reports it: lower is better


@dataclass(frozen=True, kw_only=True)
class StoredDocument:
    id: int
    name: str
    sha256: str


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
        ocr_confidence=row.ocr_confidence,
    )


def add_document(
    session: Session,
    *,
    name: str,
    format: str,
    sha256: str,
    parser_version: int,
    text: str,
    passages: Sequence[Mapping[str, Any]],
) -> int:
    """Store a document and its passages in reading order; each passage gives PassageRow's columns and, for
    a footnote, `refers_to`: the citation id of the passage that carries its marker. Returns its id."""
    document = DocumentRow(name=name, format=format, sha256=sha256, parser_version=parser_version, text=text)
    session.add(document)
    session.flush()
    rows = [
        PassageRow(document_id=document.id, ordinal=ordinal, **{k: v for k, v in p.items() if k != "refers_to"})
        for ordinal, p in enumerate(passages)
    ]
    session.add_all(rows)
    session.flush()
    by_citation = {row.citation_id: row for row in rows}
    for p in passages:
        if p.get("refers_to") is not None:
            by_citation[p["citation_id"]].refers_to_id = by_citation[p["refers_to"]].id
    return document.id


def document_by_name(session: Session, name: str) -> StoredDocument | None:
    row = session.scalar(select(DocumentRow).where(DocumentRow.name == name))
    return None if row is None else StoredDocument(id=row.id, name=row.name, sha256=row.sha256)


def document_id_by_name(session: Session, name: str) -> int | None:
    return session.scalar(select(DocumentRow.id).where(DocumentRow.name == name))


def document_names(session: Session) -> list[str]:
    return list(session.scalars(select(DocumentRow.name).order_by(DocumentRow.name)))


def document_openings(session: Session, length: int = 300) -> dict[str, str]:
    """Each document's first characters, by name: where a contract states its title."""
    rows = session.execute(select(DocumentRow.name, func.substr(DocumentRow.text, 1, length)))
    return {name: opening or "" for name, opening in rows}


def document_opening(session: Session, document_id: int, length: int) -> str:
    """A document's first characters as imported: its title, which segmenting may leave out of every passage."""
    opening = session.scalar(select(func.substr(DocumentRow.text, 1, length)).where(DocumentRow.id == document_id))
    return opening or ""


def readings(session: Session, document_id: int) -> bytes | None:
    """What the claim checker's encoders read of a document and kept with it (models/checker/engine.read_whole)."""
    return session.scalar(select(DocumentRow.readings).where(DocumentRow.id == document_id))


def unread(session: Session, document_ids: Sequence[int] | None = None) -> list[int]:
    """These documents (all by default) that have nothing of the encoders' kept with them, by id."""
    query = select(DocumentRow.id).where(DocumentRow.readings.is_(None)).order_by(DocumentRow.id)
    if document_ids is not None:
        query = query.where(DocumentRow.id.in_(list(document_ids)))
    return list(session.scalars(query))


def keep_readings(session: Session, document_id: int, kept: bytes) -> None:
    """Keep what the encoders read of a document with it: derived from its words, which never change."""
    session.execute(update(DocumentRow).where(DocumentRow.id == document_id).values(readings=kept))


def passages_of(session: Session, document_id: int) -> list[Passage]:
    rows = session.scalars(select(PassageRow).where(PassageRow.document_id == document_id).order_by(PassageRow.ordinal))
    return [_passage(row) for row in rows]


def passage_ids_by_citation(session: Session, document_id: int) -> dict[str, int]:
    rows = session.execute(select(PassageRow.citation_id, PassageRow.id).where(PassageRow.document_id == document_id))
    return {citation: pid for citation, pid in rows}


_WORD = re.compile(r"\w+", re.UNICODE)


def search_passages(session: Session, document_id: int, query: str, limit: int = 20) -> list[SearchHit]:
    """Ranked passages of one document: all words first; any word when none has them all.

    SQLite ranks with FTS5's BM25, PostgreSQL with its own full-text search; in both a heading
    names what a clause is about, so it weighs twice a word of the body. Lower scores rank first.
    """
    words = _WORD.findall(query)
    if not words:
        return []
    search = _sqlite_search if session.get_bind().dialect.name == "sqlite" else _postgres_search
    for every_word in (True, False):
        hits = search(session, document_id, words, every_word, limit)
        if hits:
            return hits
    return []


def _sqlite_search(
    session: Session, document_id: int, words: list[str], every_word: bool, limit: int
) -> list[SearchHit]:
    quoted = [f'"{w}"' for w in words]  # quoted: the user's words are never FTS5 syntax
    ranked = session.execute(
        text(
            "SELECT passages_fts.rowid, bm25(passages_fts, 1.0, 2.0) AS score FROM passages_fts "
            "JOIN passages ON passages.id = passages_fts.rowid "
            "WHERE passages_fts MATCH :match AND passages.document_id = :document_id "
            "ORDER BY score LIMIT :limit"
        ),
        {"match": (" " if every_word else " OR ").join(quoted), "document_id": document_id, "limit": limit},
    ).all()
    return _hits(session, ranked)


def _postgres_search(
    session: Session, document_id: int, words: list[str], every_word: bool, limit: int
) -> list[SearchHit]:
    # plainto_tsquery treats the words as plain text (never query syntax) and joins them with &.
    query = "plainto_tsquery('english', :words)"
    if not every_word:
        query = f"replace({query}::text, ' & ', ' | ')::tsquery"
    vector = (
        "setweight(to_tsvector('english', coalesce(heading_path, '')), 'B') || "
        "setweight(to_tsvector('english', text), 'D')"
    )
    ranked = session.execute(
        text(
            f"SELECT id, -ts_rank('{{0.5, 0.5, 1, 1}}', {vector}, q.query, 1) AS score "  # 1: long passages weigh less
            f"FROM passages, (SELECT {query} AS query) AS q "
            f"WHERE document_id = :document_id AND kind != 'toc' AND ({vector}) @@ q.query "
            "ORDER BY score, id LIMIT :limit"
        ),
        {"words": " ".join(words), "document_id": document_id, "limit": limit},
    ).all()
    return _hits(session, ranked)


def _hits(session: Session, ranked: Sequence[Any]) -> list[SearchHit]:
    rows = {row.id: row for row in session.scalars(select(PassageRow).where(PassageRow.id.in_([r[0] for r in ranked])))}
    return [SearchHit(passage=_passage(rows[passage_id]), score=float(score)) for passage_id, score in ranked]
