"""What makes two raters' data points the same point: what they say, not who wrote them down.

A point of the answer is its span; a `missing` point (no span) is its words and the passage it
points to. Near-identical variants (whitespace, punctuation, case, a few characters) are the same
point when their normalised words score at least MATCH_THRESHOLD with rapidfuzz's `ratio`: the
threshold is measured on the shared set by bench/point_identity.py (the figures are in its output).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

# Measured on the shared set (bench/point_identity.py, 726 segments of 119 answers): the lowest whole
# threshold at which no split half or merged pair is taken for the point it came from (highest
# 93.9); it still matches 99.86 % of a rater's variants (whitespace, punctuation, case, typos).
MATCH_THRESHOLD = 94.0

_PUNCT = re.compile(r"[^\w\s]", re.UNICODE)
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Words only: case, punctuation, quotes and runs of whitespace do not make a point different."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACE.sub(" ", _PUNCT.sub(" ", text)).strip()


_NUMBER = re.compile(r"\d+")


def similarity(a: str, b: str) -> float:
    """rapidfuzz's ratio of the normalised words, 0 to 100; 0 when their numbers differ, as a
    different amount, date or section is a different point however alike the words."""
    from rapidfuzz import fuzz

    a, b = normalise(a), normalise(b)
    if _NUMBER.findall(a) != _NUMBER.findall(b):
        return 0.0
    return float(fuzz.ratio(a, b))


@dataclass(frozen=True)
class PointContent:
    """What a data point says: its span of the answer (None for a missing point), its words, and
    the citation ids of the passages it points to."""

    text: str
    span_start: int | None
    span_end: int | None
    passages: tuple[str, ...] = ()

    @property
    def exact_key(self) -> str:
        if self.span_start is not None:
            return f"span:{self.span_start}-{self.span_end}"
        first = min(self.passages) if self.passages else ""
        digest = hashlib.sha256(f"{first}\n{normalise(self.text)}".encode()).hexdigest()[:24]
        return f"missing:{digest}"  # short enough to index, whatever the length of the words


def same_point(a: PointContent, b: PointContent, threshold: float = MATCH_THRESHOLD) -> bool:
    """Whether two raters' points are one: the same span or words (near-identical allowed); a missing
    point is the same as a point of the answer that says the same words."""
    if a.exact_key == b.exact_key:
        return True
    if a.span_start is not None and b.span_start is not None:
        overlap = min(a.span_end or 0, b.span_end or 0) - max(a.span_start, b.span_start)
        return overlap > 0 and similarity(a.text, b.text) >= threshold
    both_missing = a.span_start is None and b.span_start is None
    if both_missing and a.passages and b.passages and not set(a.passages) & set(b.passages):
        return False  # the same words about another clause are another omission
    return similarity(a.text, b.text) >= threshold


def key_for(content: PointContent, existing: Iterable[tuple[str, PointContent]]) -> str:
    """The identity key of a new point, given the answer's points that already have one: the key of
    the point it is the same as (exact match first, then the closest near-identical one), else its own.
    Exact matches never depend on the order points came in, nor does a best match among variants."""
    candidates = list(existing)
    for key, other in candidates:
        if other.exact_key == content.exact_key:
            return key
    best: tuple[float, str] | None = None
    for key, other in candidates:
        if same_point(content, other):
            score = similarity(content.text, other.text)
            if best is None or (score, key) > best:
                best = (score, key)
    return best[1] if best else content.exact_key
