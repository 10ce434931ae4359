"""Deterministic segmentation of an answer into candidate data points ("segment once, tag many").

Bullets and numbered items are units of their own; inside a unit, sentences are split at their
ends, but not after abbreviations common in legal text (``Inc.``, ``i.e.``, ``No.``, ``U.S.``).
Short heading lines ("1. Term and Expiration", "Specifically:") carry no assertion and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Segment:
    start: int
    end: int
    text: str


_LINE = re.compile(r"[^\n]+")
_BULLET = re.compile(r"(?:[-*•–]|\d{1,2}[.)]|\([a-z0-9]{1,4}\)|[a-z][.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"”’)]*\s+(?=[\"“‘(]?[A-Z0-9])")
_ABBREVIATIONS = re.compile(
    r"(?:\b(?:Inc|Ltd|Corp|Co|No|Nos|Sec|Secs|Art|Para|para|cl|pp?|vs|v|Mr|Mrs|Ms|Dr|St|etc|approx|Jan|Feb|Mar|Apr"
    r"|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)|\b(?:[A-Za-z]\.){1,3}[A-Za-z]?|\d)\.$"
)
_MIN_WORDS = 4


def segment_answer(answer: str) -> list[Segment]:
    """Candidate data points of an answer, each a span of the answer's own text."""
    segments: list[Segment] = []
    for line in _LINE.finditer(answer):
        start, end = strip_span(answer, line.start(), line.end())
        if start >= end:
            continue
        bullet = _BULLET.match(answer, start, end)
        body_start = bullet.end() if bullet else start
        if _is_heading(answer[body_start:end]):
            continue
        for s, e in _sentences(answer, body_start, end):
            text = answer[s:e]
            if segments and len(text.split()) < _MIN_WORDS and segments[-1].end >= line.start() - 1:
                # A fragment ("(¶ 2).") belongs with the sentence before it on the same line.
                last = segments.pop()
                segments.append(Segment(last.start, e, answer[last.start : e]))
            else:
                segments.append(Segment(s, e, text))
    return segments


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the whitespace at its ends."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _is_heading(line: str) -> bool:
    stripped = line.strip().strip("*#_ ")
    words = stripped.split()
    if not words:
        return True
    return (stripped.endswith(":") and len(words) <= 12) or (len(words) <= 6 and not stripped.endswith((".", "?", "!")))


def _sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    pieces, cursor = [], start
    for boundary in _SENTENCE_END.finditer(text, start, end):
        candidate = text[cursor : boundary.start()].rstrip('"”’)')
        if _ABBREVIATIONS.search(candidate):
            continue
        pieces.append(strip_span(text, cursor, boundary.start()))
        cursor = boundary.end()
    pieces.append(strip_span(text, cursor, end))
    return [(s, e) for s, e in pieces if e > s]
