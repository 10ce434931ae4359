"""A judge's verdict on one answer, and the checks that make a model's output safe to store.

Nothing the model returns is trusted: the JSON must match the schema, each asserted data point must
be found in the answer (fuzzy matching gives its span), duplicates are dropped, answer text that no
point covers becomes an untagged point for the reviewer, and cited ids the document lacks are kept
apart as unverified.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from models.errors import JudgeOutputInvalid
from models.segmentation import Segment
from models.vocabulary import Tag

MIN_ALIGNMENT = 80.0  # rapidfuzz partial ratio (0-100) for a data point to count as quoted from the answer


@dataclass(frozen=True)
class JudgedPoint:
    text: str
    start: int | None  # span in the answer; None for a missing point
    end: int | None
    tag: Tag | None  # None: answer text the judge did not tag, left for the reviewer
    confidence: float | None = None
    rationale: str | None = None
    citations: tuple[str, ...] = ()  # ids the document has
    unverified_citations: tuple[str, ...] = ()  # ids the judge cited that the document lacks
    context_start: int | None = None  # the lead-in the point is read with (see models.segmentation)
    context_end: int | None = None
    context: str = ""  # that lead-in's text; "" when none


@dataclass(kw_only=True)
class JudgeWork:
    """How judging one answer went, whatever the rubric: failure, raw output, attempts, cost."""

    failed: bool = False
    error: str | None = None
    raw_output: str | None = None
    attempts: int = 0
    prompt_tokens: int = 0
    evaluated_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class Verdict(JudgeWork):
    answer_id: str
    points: list[JudgedPoint] = field(default_factory=list)


def load_json(raw: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Parse and validate a model's JSON output; JudgeOutputInvalid keeps the raw text."""
    import jsonschema

    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise JudgeOutputInvalid(f"the judge's output is not JSON ({exc.msg} at character {exc.pos})", raw) from exc
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        raise JudgeOutputInvalid(f"the judge's output does not match the schema ({exc.message[:200]})", raw) from exc
    return value


def split_citations(cited: Iterable[str], known: frozenset[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    ids = list(dict.fromkeys(c.strip().strip("[]") for c in cited if c.strip()))
    return tuple(c for c in ids if c in known), tuple(c for c in ids if c not in known)


def align(text: str, answer: str) -> tuple[int, int, float] | None:
    """Where in the answer a data point's words are: (start, end, score), or None below MIN_ALIGNMENT."""
    from rapidfuzz import fuzz

    needle = " ".join(text.split())
    if not needle:
        return None
    exact = answer.find(text)
    if exact >= 0:
        return exact, exact + len(text), 100.0
    found = fuzz.partial_ratio_alignment(needle, answer, score_cutoff=MIN_ALIGNMENT)
    if found is None:
        return None
    return found.dest_start, found.dest_end, found.score


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def asserted_points(items: list[dict[str, Any]], answer: str, known: frozenset[str]) -> list[JudgedPoint]:
    """Align each asserted point to its span of the answer; drop unalignable ones and duplicates."""
    points: list[JudgedPoint] = []
    for item in items:
        found = align(item["text"], answer)
        if found is None:
            continue
        start, end, _score = found
        if any(_overlap((start, end), (p.start or 0, p.end or 0)) > 0.8 * (end - start) for p in points):
            continue  # the same words, tagged twice
        verified, unverified = split_citations(item.get("citations", ()), known)
        points.append(
            JudgedPoint(
                text=answer[start:end],
                start=start,
                end=end,
                tag=Tag(item["tag"]),
                confidence=item.get("confidence"),
                rationale=item.get("rationale") or None,
                citations=verified,
                unverified_citations=unverified,
            )
        )
    return points


def missing_points(items: list[dict[str, Any]], answer: str, known: frozenset[str]) -> list[JudgedPoint]:
    """Omissions the judge added: not already in the answer, not repeated."""
    from rapidfuzz import fuzz

    points: list[JudgedPoint] = []
    for item in items:
        text = " ".join(item["text"].split())
        if not text or fuzz.partial_ratio(text, answer) >= 95:
            continue  # the answer says it: not missing
        if any(fuzz.ratio(text, p.text) >= 90 for p in points):
            continue
        verified, unverified = split_citations(item.get("citations", ()), known)
        points.append(
            JudgedPoint(text, None, None, Tag.MISSING, None, item.get("rationale") or None, verified, unverified)
        )
    return points


def cover_the_rest(points: list[JudgedPoint], segments: list[Segment]) -> list[JudgedPoint]:
    """Answer sentences that no asserted point covers become untagged points, in answer order."""
    spans = [(p.start, p.end) for p in points if p.start is not None and p.end is not None]
    extra = [
        JudgedPoint(
            s.text, s.start, s.end, None, context_start=s.context_start, context_end=s.context_end, context=s.context
        )
        for s in segments
        if sum(_overlap((s.start, s.end), span) for span in spans) < 0.5 * (s.end - s.start)
    ]
    asserted = sorted([p for p in points if p.start is not None] + extra, key=lambda p: p.start or 0)
    return asserted + [p for p in points if p.start is None]
