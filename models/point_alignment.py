"""Two answers to one question, their data points side by side: a point of one answer is aligned with
a point of the other when the project's identity rule (models/identity.py) says they are one point.

Spans of two answers are offsets into different texts, so a point is compared as what it says and
the passages it cites (the identity rule for a point without a span): the same words, near-identical
allowed (rapidfuzz ratio at least MATCH_THRESHOLD, numbers equal), and not about two different
clauses. Each point is aligned at most once, best match first; the rest are one answer's only.

A point only one answer makes is laid out beside the other answer's most related point of its own
(rapidfuzz's token_set_ratio of the words at least RELATED_THRESHOLD, three words or more each): a
reading aid, as a short answer often says in one sentence what a long one says in three. Such a row
is not an alignment (`same` is False): both points stay their answer's only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from models.identity import PointContent, normalise, same_point, similarity

RELATED_THRESHOLD = 70.0  # a layout choice, not an identity: below it the words share too little


@dataclass(frozen=True)
class AlignedRow:
    """One row of the side-by-side view: the index of a point in the left answer's list and in the
    right's; None where that answer makes no such point."""

    left: int | None
    right: int | None
    same: bool = True  # False: two points side by side for reading, each its answer's only

    @property
    def aligned(self) -> bool:
        """Both answers make this point (the identity rule says so)."""
        return self.same and self.left is not None and self.right is not None


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
    beside = _related(left, right, set(pair_of_left), taken)
    for i, j in beside.items():
        rows[i] = AlignedRow(i, j, same=False)
    for j in range(len(right)):
        if j in taken or j in beside.values():
            continue
        before = [n for n, row in enumerate(rows) if row.right is not None and row.right < j]
        rows.insert(before[-1] + 1 if before else _first_unpaired(rows), AlignedRow(None, j))
    return rows


def _first_unpaired(rows: list[AlignedRow]) -> int:
    """Where a right-only point with no right point before it goes: before the first aligned row."""
    return next((n for n, row in enumerate(rows) if row.right is not None), len(rows))


def _related(
    left: Sequence[PointContent], right: Sequence[PointContent], left_taken: set[int], right_taken: set[int]
) -> dict[int, int]:
    """Left index -> right index of the points of each answer's own laid out side by side."""
    from rapidfuzz import fuzz

    words = {("l", i): normalise(p.text) for i, p in enumerate(left)} | {
        ("r", j): normalise(p.text) for j, p in enumerate(right)
    }
    scored = sorted(
        (-fuzz.token_set_ratio(words["l", i], words["r", j]), i, j)
        for i in range(len(left))
        for j in range(len(right))
        if i not in left_taken
        and j not in right_taken
        and min(len(words["l", i].split()), len(words["r", j].split())) >= 3
    )
    beside: dict[int, int] = {}
    for score, i, j in scored:
        if -score >= RELATED_THRESHOLD and i not in beside and j not in beside.values():
            beside[i] = j
    return beside
