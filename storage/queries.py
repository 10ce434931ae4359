"""Repository functions: each takes a session and never commits it; results are plain dataclasses."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, text
from sqlalchemy.orm import Session

from models.vocabulary import PassageKind, RaterKind, Tag
from storage.schema import (
    AnswerRow,
    AuditRow,
    CitationRow,
    DataPointRow,
    DocumentRow,
    JudgeOutcomeRow,
    LabelRow,
    PassageRow,
    QuestionRow,
    RaterRow,
    RubricResultRow,
    utcnow,
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
    ocr_confidence: float | None = None  # a scan's passage: OCR's mean word confidence, 0-1


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
        ocr_confidence=row.ocr_confidence,
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


def audit_hash(
    prev_hash: str, at: datetime, actor: str, action: str, entity: str, entity_id: str, payload: dict[str, Any]
) -> str:
    """The chain link: SHA-256 over the previous hash and this entry's content, canonically written."""
    stamp = at.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
    content = json.dumps(
        [prev_hash, stamp, actor, action, entity, entity_id, payload],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(content.encode()).hexdigest()


GENESIS = "0" * 64


def append_audit(
    session: Session, actor: str, action: str, entity: str, entity_id: str, payload: dict[str, Any]
) -> None:
    session.flush()  # earlier entries of this transaction first, so the chain sees them
    prev = session.scalar(select(AuditRow.hash).order_by(AuditRow.id.desc()).limit(1)) or GENESIS
    at = utcnow()
    payload = json.loads(json.dumps(payload, default=str))  # exactly what the JSON column will give back
    session.add(
        AuditRow(
            at=at,
            actor=actor,
            action=action,
            entity=entity,
            entity_id=entity_id,
            payload=payload,
            prev_hash=prev,
            hash=audit_hash(prev, at, actor, action, entity, entity_id, payload),
        )
    )
    session.flush()


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


def _sqlite_search(session: Session, document_id: int, words: list[str], every_word: bool, limit: int):
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


def _postgres_search(session: Session, document_id: int, words: list[str], every_word: bool, limit: int):
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


def _hits(session: Session, ranked: list[Any]) -> list[SearchHit]:
    rows = {row.id: row for row in session.scalars(select(PassageRow).where(PassageRow.id.in_([r[0] for r in ranked])))}
    return [SearchHit(_passage(rows[passage_id]), float(score)) for passage_id, score in ranked]


# ---------------------------------------------------------------- raters and judge runs


@dataclass(frozen=True)
class Rater:
    id: int
    name: str
    kind: RaterKind
    config: dict[str, Any]


def rater_named(session: Session, name: str) -> Rater | None:
    row = session.scalar(select(RaterRow).where(RaterRow.name == name))
    return None if row is None else Rater(row.id, row.name, RaterKind(row.kind), row.config or {})


def raters(session: Session) -> list[Rater]:
    rows = session.scalars(select(RaterRow).order_by(RaterRow.id))
    return [Rater(row.id, row.name, RaterKind(row.kind), row.config or {}) for row in rows]


def add_rater(session: Session, name: str, kind: RaterKind, config: dict[str, Any], actor: str) -> Rater:
    row = RaterRow(name=name, kind=kind.value, config=config)
    session.add(row)
    session.flush()
    append_audit(session, actor, "rater.created", "rater", str(row.id), {"name": name, "kind": kind.value})
    return Rater(row.id, name, kind, config)


def last_answer_position(session: Session) -> int:
    return session.scalar(select(func.max(AnswerRow.position))) or 0


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
                JudgeOutcomeRow.rater_id == rater_id, JudgeOutcomeRow.status == "judged"
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


def passage_ids_by_citation(session: Session, document_id: int) -> dict[str, int]:
    rows = session.execute(select(PassageRow.citation_id, PassageRow.id).where(PassageRow.document_id == document_id))
    return {citation: pid for citation, pid in rows}


@dataclass(frozen=True)
class NewDataPoint:
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


@dataclass(frozen=True)
class JudgeOutcome:
    status: str  # judged | failed
    attempts: int
    error: str | None
    raw_output: str | None
    passages_seen: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    rejected: dict[str, int] | None = None  # judge points refused by validation, by reason


def save_judgement(
    session: Session, rater_id: int, answer_id: str, points: list[NewDataPoint], outcome: JudgeOutcome, actor: str
) -> None:
    """Replace what this rater said about the answer: data points, labels, citations and the outcome."""
    from storage.points import key_points

    old = select(DataPointRow.id).where(DataPointRow.answer_id == answer_id, DataPointRow.rater_id == rater_id)
    session.execute(delete(DataPointRow).where(DataPointRow.id.in_(old)))
    new_ids = []
    for ordinal, point in enumerate(points):
        row = DataPointRow(
            answer_id=answer_id,
            rater_id=rater_id,
            ordinal=ordinal,
            text=point.text,
            span_start=point.span_start,
            span_end=point.span_end,
            context_start=point.context_start,
            context_end=point.context_end,
            unverified_citations=list(point.unverified_citations) or None,
        )
        session.add(row)
        session.flush()
        new_ids.append(row.id)
        if point.tag is not None:
            session.add(
                LabelRow(
                    data_point_id=row.id,
                    rater_id=rater_id,
                    tag=point.tag.value,
                    confidence=point.confidence,
                    rationale=point.rationale,
                )
            )
        bases = dict(zip(point.passage_ids, point.bases, strict=False))
        session.add_all(
            CitationRow(data_point_id=row.id, passage_id=pid, rank=rank, basis=bases.get(pid))
            for rank, pid in enumerate(dict.fromkeys(point.passage_ids))
        )
    key_points(session, answer_id, new_ids)  # the same points as other raters' get their keys
    _replace_outcome(session, rater_id, answer_id, outcome)
    append_audit(
        session, actor, f"judge.{outcome.status}", "answer", answer_id, {"rater_id": rater_id, "points": len(points)}
    )


@dataclass(frozen=True)
class StoredDataPoint:
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
        .where(CitationRow.data_point_id.in_(ids))
        .order_by(CitationRow.rank.is_(None), CitationRow.rank, PassageRow.ordinal)
    ):
        cited.setdefault(point_id, []).append(
            {"citation_id": citation, "rank": rank, "basis": basis, "section": section}
        )
    return [
        StoredDataPoint(
            id=point.id,
            ordinal=point.ordinal,
            text=point.text,
            span_start=point.span_start,
            span_end=point.span_end,
            tag=Tag(label.tag) if label else None,
            confidence=label.confidence if label else None,
            rationale=label.rationale if label else None,
            citations=tuple(e["citation_id"] for e in cited.get(point.id, ())),
            unverified_citations=tuple(point.unverified_citations or ()),
            source_id=point.source_id,
            comment=point.comment,
            evidence=tuple(cited.get(point.id, ())),
            context_start=point.context_start,
            context_end=point.context_end,
            context=context_text(answer or "", point.context_start, point.context_end),
            key=point.point_key,
        )
        for point, label in rows
    ]


def context_text(answer: str, start: int | None, end: int | None) -> str:
    """A data point's lead-in, read from its answer; "" when it has none."""
    return answer[start:end] if start is not None and end is not None else ""


def judge_outcomes(session: Session, rater_id: int) -> dict[str, JudgeOutcome]:
    rows = session.scalars(select(JudgeOutcomeRow).where(JudgeOutcomeRow.rater_id == rater_id))
    return {
        row.answer_id: JudgeOutcome(
            row.status,
            row.attempts,
            row.error,
            row.raw_output,
            tuple(row.passages_seen or ()),
            row.prompt_tokens,
            row.completion_tokens,
            row.seconds,
            dict(row.rejected or {}),
        )
        for row in rows
    }


def _replace_outcome(session: Session, rater_id: int, answer_id: str, outcome: JudgeOutcome) -> None:
    session.execute(
        delete(JudgeOutcomeRow).where(JudgeOutcomeRow.answer_id == answer_id, JudgeOutcomeRow.rater_id == rater_id)
    )
    session.add(
        JudgeOutcomeRow(
            rater_id=rater_id,
            answer_id=answer_id,
            status=outcome.status,
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
    _replace_outcome(session, rater_id, answer_id, outcome)
    append_audit(
        session, actor, f"judge.{outcome.status}", "answer", answer_id, {"rater_id": rater_id, "rubric": rubric}
    )


@dataclass(frozen=True)
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
            row.answer_id,
            rater,
            row.rubric,
            row.label,
            row.score,
            row.payload or {},
            generator,
            (meta or {}).get("source"),
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


def audit_entries(session: Session, actor: str | None = None) -> list[AuditRow]:
    statement = select(AuditRow).order_by(AuditRow.id)
    if actor is not None:
        statement = statement.where(AuditRow.actor == actor)
    return list(session.scalars(statement))


def audit_has(session: Session, action: str, sha256: str | None) -> bool:
    """Whether an entry of this action already records this content hash (bundles import once)."""
    for payload in session.scalars(select(AuditRow.payload).where(AuditRow.action == action)):
        if (payload or {}).get("sha256") == sha256:
            return True
    return False


def data_point_ref(session: Session, point_id: int) -> tuple[str, int] | None:
    row = session.execute(
        select(RaterRow.name, DataPointRow.ordinal)
        .join(RaterRow, RaterRow.id == DataPointRow.rater_id)
        .where(DataPointRow.id == point_id)
    ).first()
    return None if row is None else (row[0], row[1])


def data_point_id(session: Session, answer_id: str, rater: str, ordinal: int) -> int | None:
    return session.scalar(
        select(DataPointRow.id)
        .join(RaterRow, RaterRow.id == DataPointRow.rater_id)
        .where(DataPointRow.answer_id == answer_id, RaterRow.name == rater, DataPointRow.ordinal == ordinal)
    )
