"""Writing an imported labels file (app/ingest/labels.py reads and checks it first), an answer at a time:
the answer's points read once, its new points flushed once, its labels, citations, reviews and judge runs
written in a few statements, one audit entry for the answer. (A line at a time took 4 ms; 259 k lines,
19 minutes.) Rows that need no ORM object are inserted through their tables (Core executemany): the
ORM's bulk path spent as long preparing each row as SQLite spent writing it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Table, insert, select, update
from sqlalchemy.orm import Session

from models.vocabulary import OutcomeStatus, RaterKind, ReviewStatus, Tag
from storage import audit, documents, raters
from storage.point_fields import PointFields, point_row
from storage.points import key_points
from storage.schema import (
    AnswerRow,
    Base,
    CitationRow,
    DataPointRow,
    JudgeOutcomeRow,
    LabelRow,
    PassageRow,
    QuestionRow,
    ReviewRow,
)

# Where a point's text lies in the answer (line's place, point's number, point, answer text): (None, None)
# for a missing point; refuses (the caller's error) when it is not there.
Locate = Callable[[str, int, dict[str, Any], str], tuple[int | None, int | None]]


@dataclass(frozen=True, kw_only=True)
class AnswerText:
    id: str
    text: str
    document_id: int


def answer_texts(session: Session, ids: Iterable[str]) -> dict[str, AnswerText]:
    """The answers these lines name, read in chunks (a file may name hundreds of thousands)."""
    found: dict[str, AnswerText] = {}
    wanted = sorted(set(ids))
    for at in range(0, len(wanted), 500):
        rows = session.execute(
            select(AnswerRow.id, AnswerRow.text, QuestionRow.document_id)
            .join(QuestionRow, AnswerRow.question_id == QuestionRow.id)
            .where(AnswerRow.id.in_(wanted[at : at + 500]))
        )
        found |= {row.id: AnswerText(id=row.id, text=row.text, document_id=row.document_id) for row in rows}
    return found


def has_point(session: Session, answer_id: str, point_id: int) -> bool:
    """Whether data point `point_id` is one of the answer's."""
    found = session.scalar(
        select(DataPointRow.id).where(DataPointRow.id == point_id, DataPointRow.answer_id == answer_id)
    )
    return found is not None


def point_texts(session: Session, answer_id: str) -> list[str]:
    """The texts of the answer's stored data points (any rater's, as a reviewer may have edited them)."""
    return list(session.scalars(select(DataPointRow.text).where(DataPointRow.answer_id == answer_id)))


@dataclass
class Written:
    """What a writer wrote so far."""

    labels: int = 0
    points_created: int = 0
    raters_created: list[str] = field(default_factory=list)
    sampled: list[str] = field(default_factory=list)  # answers a human line says were drawn at random


def _table(row: type[Base]) -> Table:
    """The table an ORM class maps, for a Core insert."""
    return Base.metadata.tables[row.__tablename__]


class LabelWriter:
    """The write half of an import: `answer` writes the checked lines of one answer."""

    def __init__(self, session: Session, source: str, actor: str, locate: Locate) -> None:
        self.session, self.source, self.actor, self.locate = session, source, actor, locate
        self.raters: dict[str, raters.Rater] = {}
        self.passages: dict[int, dict[str, int]] = {}
        self.written = Written()

    def rater(self, record: dict[str, Any]) -> raters.Rater:
        name = record["rater"]
        if name not in self.raters:
            found = raters.rater_named(self.session, name)
            if found is None:
                kind = RaterKind(record.get("kind", "human"))
                found = raters.add_rater(self.session, name, kind, {"imported_from": self.source}, self.actor)
                self.written.raters_created.append(found.name)
            self.raters[name] = found
        return self.raters[name]

    def citations_of(self, document_id: int) -> dict[str, int]:
        if document_id not in self.passages:
            self.passages[document_id] = {p.citation_id: p.id for p in documents.passages_of(self.session, document_id)}
        return self.passages[document_id]

    def answer(self, answer: AnswerText, lines: list[tuple[str, dict[str, Any]]]) -> None:
        session = self.session
        points = _Points(session, answer, self.locate)
        chosen: list[tuple[raters.Rater, DataPointRow, dict[str, Any]]] = []
        for place, record in lines:
            rater = self.rater(record)
            used: dict[str, int] = {}
            for i, point in enumerate(record["data_points"], start=1):
                if "spans" in record:
                    row = points.own(rater.id, point)
                else:
                    row = points.target(place, i, point, rater.id, used)
                chosen.append((rater, row, point))
        session.flush()  # the new points' ids, once for the answer
        self.written.points_created += len(points.new)
        self._labels(chosen)
        self._citations(answer, chosen)
        key_points(session, answer.id, [row.id for row in points.new])  # after citations: a missing point's
        self._reviews(answer.id, [(self.rater(record), record) for _, record in lines])
        counts: dict[str, int] = {}
        for _, record in lines:
            counts[record["rater"]] = counts.get(record["rater"], 0) + len(record["data_points"])
        audit.append_audit(session, self.actor, "labels.imported", "answer", answer.id, {"raters": counts})

    def _labels(self, chosen: list[tuple[raters.Rater, DataPointRow, dict[str, Any]]]) -> None:
        """One label a point and rater: a point given twice takes its last tag, as a re-import does."""
        wanted: dict[tuple[int, int], dict[str, Any]] = {}
        for rater, row, point in chosen:
            wanted[(row.id, rater.id)] = {
                "tag": point["tag"],
                "confidence": point.get("confidence"),
                "rationale": point.get("rationale"),
            }
            if point.get("comment"):
                row.comment = point["comment"]
            self.written.labels += 1
        ids = {point_id for point_id, _ in wanted}
        here = {
            (row.data_point_id, row.rater_id): row.id
            for row in self.session.execute(
                select(LabelRow.id, LabelRow.data_point_id, LabelRow.rater_id).where(LabelRow.data_point_id.in_(ids))
            )
        }
        new = [{"data_point_id": p, "rater_id": r, **v} for (p, r), v in wanted.items() if (p, r) not in here]
        old = [{"id": here[(p, r)], **v} for (p, r), v in wanted.items() if (p, r) in here]
        if new:
            self.session.execute(insert(_table(LabelRow)), new)
        if old:  # by primary key, in one statement
            self.session.execute(update(LabelRow), old)

    def _citations(self, answer: AnswerText, chosen: list[tuple[raters.Rater, DataPointRow, dict[str, Any]]]) -> None:
        pairs: set[tuple[int, int]] = set()
        for _, row, point in chosen:
            if point.get("citations"):
                passages = self.citations_of(answer.document_id)
                pairs |= {(row.id, passages[c]) for c in point["citations"] if c in passages}
        if not pairs:
            return
        here = {
            (row[0], row[1])
            for row in self.session.execute(
                select(CitationRow.data_point_id, CitationRow.passage_id).where(
                    CitationRow.data_point_id.in_({p for p, _ in pairs})
                )
            ).all()
        }
        new = [{"data_point_id": p, "passage_id": q} for p, q in sorted(pairs - here)]
        if new:
            self.session.execute(insert(_table(CitationRow)), new)

    def _reviews(self, answer_id: str, lines: list[tuple[raters.Rater, dict[str, Any]]]) -> None:
        """A human's line is a submitted review of the answer; a judge's, that judge's run on it."""
        humans = {r.id for r, _ in lines if r.kind is not RaterKind.JUDGE}
        judges = {r.id for r, _ in lines if r.kind is RaterKind.JUDGE}
        self.written.sampled += [answer_id for r, record in lines if r.id in humans and record.get("sampled")][:1]
        session = self.session
        if humans:
            reviewed = set(
                session.scalars(
                    select(ReviewRow.rater_id).where(ReviewRow.answer_id == answer_id, ReviewRow.rater_id.in_(humans))
                )
            )
            if reviewed:
                session.execute(
                    update(ReviewRow)
                    .where(ReviewRow.answer_id == answer_id, ReviewRow.rater_id.in_(reviewed))
                    .values(status=ReviewStatus.SUBMITTED.value),
                    execution_options={"synchronize_session": False},
                )
            new = [
                {"answer_id": answer_id, "rater_id": r, "status": ReviewStatus.SUBMITTED.value}
                for r in sorted(humans - reviewed)
            ]
            if new:
                session.execute(insert(_table(ReviewRow)), new)
        for rater_id in sorted(judges):
            _judged(session, rater_id, answer_id)


class _Points:
    """An answer's data points while an import writes to it: those stored, and those it adds."""

    def __init__(self, session: Session, answer: AnswerText, locate: Locate) -> None:
        self.session, self.answer, self.locate = session, answer, locate
        rows = list(session.scalars(select(DataPointRow).where(DataPointRow.answer_id == answer.id)))
        self.by_id = {row.id: row for row in rows}
        self.all: list[DataPointRow] = list(rows)
        self.new: list[DataPointRow] = []
        self.cited: dict[int, set[str]] = {}  # a new point's citations, by id(row), before they are stored
        # A text that occurs twice in an answer names its points in order: first, then second.
        self.by_text: dict[str, list[DataPointRow]] = {}
        for row in sorted(rows, key=lambda r: (r.rater_id, r.ordinal, r.id)):
            self.by_text.setdefault(" ".join(row.text.split()), []).append(row)

    def _add(self, row: DataPointRow, text: str | None = None) -> DataPointRow:
        self.session.add(row)
        self.all.append(row)
        self.new.append(row)
        if text is not None:
            self.by_text.setdefault(text, []).append(row)
        return row

    def own(self, rater_id: int, point: dict[str, Any]) -> DataPointRow:
        """The rater's own record of a segment, found again on a re-import: their review then holds every
        point of the answer, and key_points pairs it with other raters' points of the same span."""
        start, end = point["span"]
        for row in self.all:
            if row.rater_id == rater_id and (row.span_start, row.span_end) == (start, end):
                return row
        return self._add(
            point_row(
                PointFields(
                    text=point["text"],
                    span_start=start,
                    span_end=end,
                    context_start=point["context"][0],
                    context_end=point["context"][1],
                ),
                answer_id=self.answer.id,
                rater_id=rater_id,
                ordinal=len(self.all),
            )
        )

    def _cited(self, row: DataPointRow) -> set[str]:
        if id(row) in self.cited:
            return self.cited[id(row)]
        return _cited(self.session, row.id) if row.id is not None else set()

    def target(self, place: str, i: int, point: dict[str, Any], rater_id: int, used: dict[str, int]) -> DataPointRow:
        if isinstance(point.get("data_point_id"), int):
            return self.by_id[point["data_point_id"]]  # checked before anything was written
        text = " ".join(point["text"].split())
        nth = used.get(text, 0)
        used[text] = nth + 1
        same = self.by_text.get(text, [])
        if point["tag"] == Tag.MISSING.value and point.get("citations"):
            # An omission is its words and the passage it points to: the same words about another
            # clause are another point.
            cited = {c for c in point["citations"] if isinstance(c, str)}
            same = [r for r in same if r.span_start is not None or self._cited(r) & cited]
        if nth < len(same):
            return same[nth]
        start, end = self.locate(place, i, point, self.answer.text)
        row = self._add(
            point_row(
                PointFields(
                    text=point["text"] if start is None else self.answer.text[start:end], span_start=start, span_end=end
                ),
                answer_id=self.answer.id,
                rater_id=rater_id,
                ordinal=len(self.all),
            ),
            text,
        )
        if point.get("citations"):
            self.cited[id(row)] = {c for c in point["citations"] if isinstance(c, str)}
        return row


def _judged(session: Session, rater_id: int, answer_id: str) -> None:
    """An imported judge's labels on an answer stand for a judge run on it (triage looks for runs)."""
    found = session.scalar(
        select(JudgeOutcomeRow).where(JudgeOutcomeRow.rater_id == rater_id, JudgeOutcomeRow.answer_id == answer_id)
    )
    if found is None:
        session.add(
            JudgeOutcomeRow(rater_id=rater_id, answer_id=answer_id, status=OutcomeStatus.JUDGED.value, attempts=0)
        )
    elif found.status != OutcomeStatus.JUDGED:
        found.status, found.error = OutcomeStatus.JUDGED.value, None
    session.flush()


def _cited(session: Session, point_id: int) -> set[str]:
    return set(
        session.scalars(
            select(PassageRow.citation_id)
            .join(CitationRow, CitationRow.passage_id == PassageRow.id)
            .where(CitationRow.data_point_id == point_id)
        )
    )
