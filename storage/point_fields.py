"""A data point's fields, and the one conversion each way between a record of a point and its row
(`DataPointRow`). Storage hands out several records of a point (a judge's new point, a stored one, a
reviewer's snapshot, an imported line's): each carries the fields of `PointFields` it needs, under the
same names, and is written and read here; so a new field is added to `PointFields`, its column to the
schema, and to the records that should carry it, never to each writer and reader."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy import ColumnElement

from storage.schema import CitationRow, DataPointRow


@dataclass(frozen=True, kw_only=True)
class PointFields:
    """What a data point's row says of the point itself (its rater, answer and place are the row's)."""

    text: str
    span_start: int | None = None  # None for a `missing` point
    span_end: int | None = None
    context_start: int | None = None  # the lead-in the point is read with, as offsets into the answer
    context_end: int | None = None
    source_id: int | None = None  # a reviewer's copy: the judge's point it was copied from
    comment: str | None = None
    replaces: tuple[str, ...] = ()  # identity keys of the points a split, merge or edit replaced
    unverified_citations: tuple[str, ...] = ()  # ids a judge cited that its document does not have


# A record holds a JSON list as a tuple; its row holds it as a list, or NULL when empty.
_LISTS = frozenset(f.name for f in fields(PointFields) if f.default == ())
# Read back, not written from a record: the row's id and place, and the identity key_points gives it.
_READ_ONLY = {"id": "id", "ordinal": "ordinal", "key": "point_key"}


_known: dict[type, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {}


def _names(record: type) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The point fields a record type carries (written and read), and the read-only ones with their columns."""
    if record not in _known:  # once a type: an import writes hundreds of thousands of points
        own = {f.name for f in fields(record)}
        point = tuple(f.name for f in fields(PointFields) if f.name in own)
        _known[record] = point, tuple((name, column) for name, column in _READ_ONLY.items() if name in own)
    return _known[record]


def point_row(record: object, *, answer_id: str, rater_id: int, ordinal: int, id: int | None = None) -> DataPointRow:
    """`record`'s row: each point field it carries; the columns of those it does not are left empty."""
    columns: dict[str, Any] = {} if id is None else {"id": id}
    for name in _names(type(record))[0]:
        value = getattr(record, name)
        if name in _LISTS:
            value = list(value) or None
        if value is not None:  # left out, it is NULL all the same (no point column has a default), and quicker
            columns[name] = value
    return DataPointRow(answer_id=answer_id, rater_id=rater_id, ordinal=ordinal, **columns)


def point_values(row: DataPointRow, record: type) -> dict[str, Any]:
    """The fields of `row` that a `record` carries (its point fields, id, ordinal and key), as keyword
    arguments of that record; the caller adds what the row does not hold (tags, citations)."""
    point, read_only = _names(record)
    values = {name: getattr(row, column) for name, column in read_only}
    for name in point:
        value = getattr(row, name)
        values[name] = tuple(value or ()) if name in _LISTS else value
    return values


# A citation row's basis on a reviewer's copy of a point: a passage the point came with (the judge's
# evidence, the answer's own citation), which the reviewer did not cite. Every other row is a citation
# its rater made: a judge's, an import's, a reviewer's chosen passage.
CARRIED = "carried"


def made_citation() -> ColumnElement[bool]:
    """The citation rows their rater made (not a passage a reviewer's copy came with)."""
    return CitationRow.basis.is_(None) | (CitationRow.basis != CARRIED)
