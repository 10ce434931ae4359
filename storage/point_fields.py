"""A data point's one writer: `write_points` writes a rater's whole points (row, that rater's tag, the
evidence, the identity key), `label_points` and `cite_points` put tags and citations on points that
exist (an import labels other raters' points). Nothing else in the code base builds a point's row, label
or citation (tests/test_point_writer.py walks the code for it).

The row is written from a `PointRecord`, a frozen dataclass with exactly the point's own columns, built
field by field: a misspelt field is a TypeError where the record is made (and a mypy error), never a
value left out, and a column added to `DataPointRow` without its field stops this module from loading.

A data point has other shapes, each for a reason of its own, and they are converted to and from a
`PointRecord` by name, field by field, where they meet storage:
- models: `Segment` (the segmenter's span and lead-in, before any rater), `JudgedPoint` (a judge's parsed
  output: tag, evidence by citation id, not yet in any project), `PointReport` (the claim checker's
  finding, with its reasons), `PointContent` (only what decides identity: span, words, passages);
- storage: `PointRecord` (the row), `NewDataPoint` (a judge's point to save: passage ids and their
  bases), `StoredDataPoint` (a rater's point read back, with its evidence by citation id),
  `PointSnapshot` (a reviewer's point as undo restores it: its id, the passages cited and carried),
  `ReviewPoint` (that snapshot with every other rater's tag beside it), `TaggedPoint` (a comparison's
  text, tag and passages, whoever recorded the point);
- app: `CasePoint` (a disputed point as an adjudicator sees it: the reviewers' opinions and the
  decision), and an imported line's point (JSON, checked by app/ingest/labels.py before it is written).
Merging two would give one of them fields that mean nothing to it (a segment has no tag, a judge's new
point no id, a reviewer's snapshot no confidence), which is the mismatch reflection used to hide."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

from sqlalchemy import ColumnElement, Table, insert, select, update
from sqlalchemy.orm import Session

from models.vocabulary import Tag
from storage.points import key_points
from storage.schema import Base, CitationRow, DataPointRow, LabelRow


@dataclass(frozen=True, slots=True, kw_only=True)
class PointRecord:
    """What a rater's record of a data point says of the point itself: exactly its row's columns but its
    place (answer, rater, ordinal), its identity (id, key) and what the database sets."""

    text: str
    span_start: int | None = None  # None for a `missing` point
    span_end: int | None = None
    context_start: int | None = None  # the lead-in the point is read with, as offsets into the answer
    context_end: int | None = None
    source_id: int | None = None  # a reviewer's copy: the judge's point it was copied from
    comment: str | None = None
    replaces: tuple[str, ...] = ()  # identity keys of the points a split, merge or edit replaced
    unverified_citations: tuple[str, ...] = ()  # ids a judge cited that its document does not have


# The row's columns that are not the record's: its place and identity, written by write_points from
# WholePoint, and those the database fills (matter_id by a trigger, created_at by default).
NOT_RECORDED = frozenset({"id", "answer_id", "matter_id", "rater_id", "ordinal", "point_key", "created_at"})


def check_record(columns: Iterable[str]) -> None:
    """Refuse a data point table whose own columns are not exactly `PointRecord`'s fields."""
    differ = (set(columns) - NOT_RECORDED) ^ {f.name for f in fields(PointRecord)}
    if differ:
        raise TypeError(f"PointRecord and the data point's row differ in {sorted(differ)}: add each to both")


check_record(c.name for c in DataPointRow.__table__.columns)  # at import: no write can leave a column out


@dataclass(frozen=True, slots=True, kw_only=True)
class PointLabel:
    """One rater's tag on a point."""

    tag: Tag
    confidence: float | None = None
    rationale: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """A passage a point cites or came with."""

    passage_id: int
    rank: int | None = None  # most relevant first; None: unranked (an import's)
    basis: str | None = None  # where it comes from (a judge's: cited, section, shown, answer; CARRIED)


@dataclass(frozen=True, slots=True, kw_only=True)
class WholePoint:
    """Everything one rater writes of one of their points."""

    rater_id: int
    ordinal: int
    record: PointRecord
    label: PointLabel | None = None  # this rater's tag; None: left untagged
    evidence: tuple[Evidence, ...] = ()
    id: int | None = None  # the id to keep (undo restores a point exactly); None: a new one
    key: str | None = None  # the identity to give it (a consensus settles a known point); None: found


@dataclass(frozen=True, slots=True, kw_only=True)
class RaterLabel:
    """A rater's tag on a point that exists, whoever recorded it (an import labels a judge's points)."""

    point_id: int
    rater_id: int
    label: PointLabel


def _row(answer_id: str, point: WholePoint) -> DataPointRow:
    r = point.record
    return DataPointRow(
        id=point.id,
        answer_id=answer_id,
        rater_id=point.rater_id,
        ordinal=point.ordinal,
        point_key=point.key,
        text=r.text,
        span_start=r.span_start,
        span_end=r.span_end,
        context_start=r.context_start,
        context_end=r.context_end,
        source_id=r.source_id,
        comment=r.comment,
        replaces=list(r.replaces) or None,
        unverified_citations=list(r.unverified_citations) or None,
    )


def point_record(row: DataPointRow) -> PointRecord:
    """A stored row's record."""
    return PointRecord(
        text=row.text,
        span_start=row.span_start,
        span_end=row.span_end,
        context_start=row.context_start,
        context_end=row.context_end,
        source_id=row.source_id,
        comment=row.comment,
        replaces=tuple(row.replaces or ()),
        unverified_citations=tuple(row.unverified_citations or ()),
    )


def _table(row: type[Base]) -> Table:
    return Base.metadata.tables[row.__tablename__]


def write_points(session: Session, answer_id: str, points: Sequence[WholePoint], *, key: bool = True) -> list[int]:
    """Add these points to the answer, each with its rater's tag and evidence, and return their ids in
    order. `key`: give those without a key their identity now (an import first adds the citations other
    lines make, as a missing point's identity is its words and passage, then calls key_points)."""
    rows = [_row(answer_id, p) for p in points]
    # Points that keep their ids go first, so that a new point's fresh id cannot take one.
    session.add_all(row for row, p in zip(rows, points, strict=True) if p.id is not None)
    session.flush()
    session.add_all(row for row, p in zip(rows, points, strict=True) if p.id is None)
    session.flush()
    ids = [row.id for row in rows]
    labelled = [(i, p.rater_id, p.label) for i, p in zip(ids, points, strict=True) if p.label is not None]
    _insert_labels(session, [RaterLabel(point_id=i, rater_id=r, label=label) for i, r, label in labelled])
    evidence = [
        {"data_point_id": i, "passage_id": e.passage_id, "rank": e.rank, "basis": e.basis}
        for i, p in zip(ids, points, strict=True)
        for e in p.evidence
    ]
    if evidence:
        session.execute(insert(_table(CitationRow)), evidence)
    if key:
        key_points(session, answer_id, [i for i, p in zip(ids, points, strict=True) if p.key is None])
    return ids


def _label_values(label: PointLabel) -> dict[str, object]:
    return {"tag": label.tag.value, "confidence": label.confidence, "rationale": label.rationale}


def _insert_labels(session: Session, labels: Sequence[RaterLabel]) -> None:
    if labels:  # Core executemany: an import writes hundreds of thousands
        session.execute(
            insert(_table(LabelRow)),
            [{"data_point_id": x.point_id, "rater_id": x.rater_id} | _label_values(x.label) for x in labels],
        )


def label_points(session: Session, labels: Sequence[RaterLabel], comments: dict[int, str] | None = None) -> None:
    """Tag points that exist, a label a point and rater (a pair given twice takes its last), in place of
    the rater's tag on it; `comments` by point id, in place of each point's comment."""
    wanted = {(x.point_id, x.rater_id): x for x in labels}
    here = {
        (row.data_point_id, row.rater_id): row.id
        for row in session.execute(
            select(LabelRow.id, LabelRow.data_point_id, LabelRow.rater_id).where(
                LabelRow.data_point_id.in_({p for p, _ in wanted})
            )
        )
    }
    _insert_labels(session, [x for pair, x in wanted.items() if pair not in here])
    old = [{"id": here[pair]} | _label_values(x.label) for pair, x in wanted.items() if pair in here]
    if old:  # by primary key, in one statement
        session.execute(update(LabelRow), old)
    for point_id, comment in (comments or {}).items():
        row = session.get(DataPointRow, point_id)
        if row is not None:
            row.comment = comment


def cite_points(session: Session, pairs: Iterable[tuple[int, int]]) -> None:
    """Cite these passages from these points, (point id, passage id), unranked; those cited already stay."""
    wanted = set(pairs)
    if not wanted:
        return
    here = {
        (row[0], row[1])
        for row in session.execute(
            select(CitationRow.data_point_id, CitationRow.passage_id).where(
                CitationRow.data_point_id.in_({p for p, _ in wanted})
            )
        ).all()
    }
    new = [{"data_point_id": p, "passage_id": q} for p, q in sorted(wanted - here)]
    if new:
        session.execute(insert(_table(CitationRow)), new)


# A citation row's basis on a reviewer's copy of a point: a passage the point came with (the judge's
# evidence, the answer's own citation), which the reviewer did not cite. Every other row is a citation
# its rater made: a judge's, an import's, a reviewer's chosen passage.
CARRIED = "carried"


def made_citation() -> ColumnElement[bool]:
    """The citation rows their rater made (not a passage a reviewer's copy came with)."""
    return CitationRow.basis.is_(None) | (CitationRow.basis != CARRIED)
