"""Two answers to one question, their data points side by side: a point of one answer is aligned with
a point of the other when the project's identity rule (models/identity.py) says they are one point.

Spans of two answers are offsets into different texts, so a point is compared as what it says and
the passages it cites (the identity rule for a point without a span): the same words, near-identical
allowed (rapidfuzz ratio at least MATCH_THRESHOLD, numbers equal), and not about two different
clauses. Each point is aligned at most once, best match first; the rest are one answer's only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from models.identity import PointContent, same_point, similarity


@dataclass(frozen=True)
class AlignedRow:
    """One row of the side-by-side view: the index of a point in the left answer's list and in the
    right's; None where that answer makes no such point."""

    left: int | None
    right: int | None


def content(text: str, passages: Sequence[str] = ()) -> PointContent:
    """A point as the identity rule compares it across answers: its words and cited passages."""
    return PointContent(text, None, None, tuple(sorted(set(passages))))


def align(left: Sequence[PointContent], right: Sequence[PointContent]) -> list[AlignedRow]:
    """The rows of the side-by-side view, in the left answer's order; a point only the right answer
    makes comes right after the row of the right answer's point before it."""
    candidates = sorted(
        (
            (-similarity(a.text, b.text), i, j)
            for i, a in enumerate(left)
            for j, b in enumerate(right)
            if same_point(a, b)
        )
    )
    pair_of_left: dict[int, int] = {}
    taken: set[int] = set()
    for _, i, j in candidates:
        if i not in pair_of_left and j not in taken:
            pair_of_left[i] = j
            taken.add(j)
    rows = [AlignedRow(i, pair_of_left.get(i)) for i in range(len(left))]
    for j in range(len(right)):
        if j in taken:
            continue
        before = [n for n, row in enumerate(rows) if row.right is not None and row.right < j]
        rows.insert(before[-1] + 1 if before else _first_unpaired(rows), AlignedRow(None, j))
    return rows


def _first_unpaired(rows: list[AlignedRow]) -> int:
    """Where a right-only point with no right point before it goes: before the first aligned row."""
    return next((n for n, row in enumerate(rows) if row.right is not None), len(rows))
