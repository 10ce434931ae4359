"""A reviewer's edits of their data points, as pure functions of the points before: new words, a point
cut in two, two merged, one added. No database: app.review.service.ReviewService saves what they
return in one transaction (and records the step that undo puts back)."""

from __future__ import annotations

from dataclasses import replace

from app.errors import AssayError
from models.verdict import align
from models.vocabulary import Tag
from storage.reviews import PointSnapshot

Points = list[PointSnapshot]


def edited(points: Points, point_id: int, text: str, answer_text: str) -> Points:
    """New words for a point; a point of the answer keeps a span only if the words are the answer's."""
    out = []
    for p in points:
        if p.id == point_id:
            found = align(text, answer_text) if p.span_start is not None else None
            span = (found[0], found[1]) if found else (None, None)
            if text != p.text:  # another point now: it keeps a link to the one it replaces
                p = replace(p, replaces=lineage(p))
            p = replace(p, text=text, span_start=span[0], span_end=span[1])
        out.append(p)
    return out


def split(points: Points, point_id: int, at: int) -> Points:
    """Cut a point in two at a character offset of its text; both halves keep the tag."""
    out = []
    for p in points:
        if p.id != point_id:
            out.append(p)
            continue
        left, right = p.text[:at].rstrip(), p.text[at:].lstrip()
        if not left or not right:
            raise AssayError("split inside the text of the data point, not at its ends")
        start = p.span_start
        p = replace(p, replaces=lineage(p))  # both halves replace the point they were cut from
        out.append(replace(p, text=left, span_end=None if start is None else start + len(left)))
        right_start = None if start is None else start + p.text.index(right, len(left))
        out.append(
            replace(
                p,
                id=0,
                text=right,
                span_start=right_start,
                span_end=None if right_start is None else right_start + len(right),
                source_id=None,
            )
        )
    return out


def merged(points: Points, point_id: int, answer_text: str) -> Points:
    """A point and the next one as one point (the answer's text between them, for points of the answer)."""
    index = next(i for i, p in enumerate(points) if p.id == point_id)
    if index + 1 >= len(points):
        raise AssayError("the last data point has nothing after it to merge with")
    a, b = points[index], points[index + 1]
    if (a.span_start is None) != (b.span_start is None):
        raise AssayError("a missing point cannot be merged with a point of the answer")
    if a.span_start is not None and b.span_end is not None:
        start, end = min(a.span_start, b.span_start or 0), max(a.span_end or 0, b.span_end)
        one = replace(a, text=answer_text[start:end], span_start=start, span_end=end)
    else:
        one = replace(a, text=f"{a.text} {b.text}")
    one = replace(
        one,
        passage_ids=tuple(sorted(set(a.passage_ids) | set(b.passage_ids))),
        evidence_ids=tuple(dict.fromkeys(a.evidence_ids + b.evidence_ids)),
        replaces=tuple(dict.fromkeys(lineage(a) + lineage(b))),
    )
    return [*points[:index], one, *points[index + 2 :]]


def added(points: Points, point: PointSnapshot) -> Points:
    """A point of answer text no point holds yet, in its place in the answer (missing points last)."""
    start, end = point.span_start or 0, point.span_end or 0
    for p in points:
        if p.span_start is not None and p.span_end is not None and p.span_start < end and start < p.span_end:
            raise AssayError(f"“{p.text[:40]}” is already a data point: split or edit it instead")
    at = next((i for i, p in enumerate(points) if p.span_start is None or p.span_start > start), len(points))
    return [*points[:at], point, *points[at:]]


def lineage(point: PointSnapshot) -> tuple[str, ...]:
    """What an edited point replaces: the point as it was (or, if it was already an edit of
    unsaved-as-such points, what that one replaced)."""
    return (point.key,) if point.key else point.replaces


def new_point(
    *,
    text: str,
    ordinal: int = 0,
    span_start: int | None = None,
    span_end: int | None = None,
    source_id: int | None = None,
    tag: Tag | None = None,
    passage_ids: tuple[int, ...] = (),
    evidence_ids: tuple[int, ...] = (),
    context_start: int | None = None,
    context_end: int | None = None,
) -> PointSnapshot:
    """A new point of the reviewer's (id 0: given on saving), named field by field: `passage_ids` the
    passages the reviewer cites, `evidence_ids` those it comes with (the judge's, the answer's)."""
    return PointSnapshot(
        id=0,
        ordinal=ordinal,
        text=text,
        span_start=span_start,
        span_end=span_end,
        source_id=source_id,
        comment=None,
        tag=tag,
        passage_ids=passage_ids,
        evidence_ids=evidence_ids,
        context_start=context_start,
        context_end=context_end,
    )
