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
from storage.point_fields import (
    PointLabel,
    PointRecord,
    RaterLabel,
    WholePoint,
    cite_points,
    label_points,
    write_points,
)
from storage.points import key_points
from storage.schema import (
    AnswerRow,
    Base,
    CitationRow,
    DataPointRow,
    JudgeOutcomeRow,
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
        chosen: list[tuple[raters.Rater, _Point, dict[str, Any]]] = []
        for place, record in lines:
            rater = self.rater(record)
            used: dict[str, int] = {}
            for i, point in enumerate(record["data_points"], start=1):
                if "spans" in record:
                    row = points.own(rater.id, point)
                else:
                    row = points.target(place, i, point, rater.id, used)
                chosen.append((rater, row, point))
        points.write()  # the new points, with their ids, once for the answer
        self.written.points_created += len(points.new)
        self._labels(chosen)
        self._citations(answer, chosen)
        # after the citations: a missing point's identity is its words and the passage it cites
        key_points(session, answer.id, [p.id for p in points.new if p.id is not None])
        self._reviews(answer.id, [(self.rater(record), record) for _, record in lines])
        counts: dict[str, int] = {}
        for _, record in lines:
            counts[record["rater"]] = counts.get(record["rater"], 0) + len(record["data_points"])
        audit.append_audit(session, self.actor, "labels.imported", "answer", answer.id, {"raters": counts})

    def _labels(self, chosen: list[tuple[raters.Rater, _Point, dict[str, Any]]]) -> None:
        """One label a point and rater: a point given twice takes its last tag, as a re-import does."""
        labels, comments = [], {}
        for rater, row, point in chosen:
            assert row.id is not None  # written
            label = PointLabel(
                tag=Tag(point["tag"]), confidence=point.get("confidence"), rationale=point.get("rationale")
            )
            labels.append(RaterLabel(point_id=row.id, rater_id=rater.id, label=label))
            if point.get("comment"):
                comments[row.id] = point["comment"]
            self.written.labels += 1
        label_points(self.session, labels, comments)

    def _citations(self, answer: AnswerText, chosen: list[tuple[raters.Rater, _Point, dict[str, Any]]]) -> None:
        pairs: set[tuple[int, int]] = set()
        for _, row, point in chosen:
            if point.get("citations"):
                assert row.id is not None  # written
                passages = self.citations_of(answer.document_id)
                pairs |= {(row.id, passages[c]) for c in point["citations"] if c in passages}
        cite_points(self.session, pairs)

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


@dataclass(eq=False)
class _New:
    """A point an import adds, until it is written (then it has its id)."""

    rater_id: int
    ordinal: int
    record: PointRecord
    id: int | None = None

    @property
    def text(self) -> str:
        return self.record.text

    @property
    def span_start(self) -> int | None:
        return self.record.span_start

    @property
    def span_end(self) -> int | None:
        return self.record.span_end


_Point = DataPointRow | _New


class _Points:
    """An answer's data points while an import writes to it: those stored, and those it adds."""

    def __init__(self, session: Session, answer: AnswerText, locate: Locate) -> None:
        self.session, self.answer, self.locate = session, answer, locate
        rows = list(session.scalars(select(DataPointRow).where(DataPointRow.answer_id == answer.id)))
        self.by_id = {row.id: row for row in rows}
        self.all: list[_Point] = list(rows)
        self.new: list[_New] = []
        self.cited: dict[int, set[str]] = {}  # a new point's citations, by id(point), before they are stored
        # A text that occurs twice in an answer names its points in order: first, then second.
        self.by_text: dict[str, list[_Point]] = {}
        for row in sorted(rows, key=lambda r: (r.rater_id, r.ordinal, r.id)):
            self.by_text.setdefault(" ".join(row.text.split()), []).append(row)

    def _add(self, rater_id: int, record: PointRecord, text: str | None = None) -> _New:
        point = _New(rater_id, len(self.all), record)
        self.all.append(point)
        self.new.append(point)
        if text is not None:
            self.by_text.setdefault(text, []).append(point)
        return point

    def write(self) -> None:
        """Write the points added (keyed later: after the citations the lines make)."""
        whole = [WholePoint(rater_id=p.rater_id, ordinal=p.ordinal, record=p.record) for p in self.new]
        for point, point_id in zip(self.new, write_points(self.session, self.answer.id, whole, key=False), strict=True):
            point.id = point_id

    def own(self, rater_id: int, point: dict[str, Any]) -> _Point:
        """The rater's own record of a segment, found again on a re-import: their review then holds every
        point of the answer, and key_points pairs it with other raters' points of the same span."""
        start, end = point["span"]
        for row in self.all:
            if row.rater_id == rater_id and (row.span_start, row.span_end) == (start, end):
                return row
        return self._add(
            rater_id,
            PointRecord(
                text=point["text"],
                span_start=start,
                span_end=end,
                context_start=point["context"][0],
                context_end=point["context"][1],
            ),
        )

    def _cited(self, row: _Point) -> set[str]:
        if id(row) in self.cited:
            return self.cited[id(row)]
        return _cited(self.session, row.id) if row.id is not None else set()

    def target(self, place: str, i: int, point: dict[str, Any], rater_id: int, used: dict[str, int]) -> _Point:
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
        words = point["text"] if start is None else self.answer.text[start:end]
        row = self._add(rater_id, PointRecord(text=words, span_start=start, span_end=end), text)
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
