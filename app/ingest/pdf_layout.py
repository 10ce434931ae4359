"""A PDF page's text lines in reading order, from pdfplumber's word positions.

Columns are read one after another (a recursive XY cut: split at a vertical gutter first, else at
a horizontal gap, then again inside each part); rotated margin text (a Federal Register's
"jbell on DSKJLSW7X2PROD") is dropped; words keep their spaces even in tightly set type; and
line-numbered paper (transcripts, pleadings) is recognised so that each line keeps its number.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any

Word = dict[str, Any]

# A gap of 0.15 x the type size splits words: the default 3 pt glued "FORFURTHERINFORMATION" in 7 pt bold.
_X_TOLERANCE_RATIO = 0.15
_GUTTER = 0.8  # x the body size: a column gutter is wider than any word space
_BAND = 1.0  # x the body size: a horizontal gap wider than line spacing separates blocks
_LINE_NUMBER = re.compile(r"^\d{1,2}$")


@dataclass
class Line:
    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    chars: list[dict[str, Any]]
    block: int  # the column or block it was read in; a new block starts a new paragraph
    indent: float  # how far right of its block's left edge it starts
    number: int | None = None  # its printed line number on line-numbered paper
    page: int = 0


@dataclass
class PageText:
    lines: list[Line] = field(default_factory=list)
    numbered: bool = False  # transcript or pleading paper: lines carry their numbers
    printed_page: int | None = None  # a numbered page's own page number, printed in its margin


def read_page(page: Any, body_size: float) -> PageText:
    """The page's upright text lines in reading order."""
    words = [
        w
        for w in page.extract_words(x_tolerance_ratio=_X_TOLERANCE_RATIO, return_chars=True)
        if w["upright"] and w["text"].strip()
    ]
    text = _numbered_page(words, body_size, float(page.height))
    if text is None:
        text = PageText()
        for index, block in enumerate(_blocks(words, body_size)):
            left = min(w["x0"] for w in block)
            text.lines += [_line(row, block=index, indent=row[0]["x0"] - left) for row in _lines(block)]
    for line in text.lines:
        line.page = page.page_number
    return text


def _blocks(words: list[Word], size: float) -> list[list[Word]]:
    """Recursive XY cut: columns left to right (vertical gutters win), else bands top to bottom."""
    if len(words) <= 1:
        return [words] if words else []
    for lo, hi, gap in (("x0", "x1", _GUTTER * size), ("top", "bottom", _BAND * size)):
        groups = _split(words, lo, hi, gap)
        if lo == "x0":
            groups = _without_thin_columns(groups, size)
        if len(groups) > 1:
            return [block for group in groups for block in _blocks(group, size)]
    return [words]


def _split(words: list[Word], lo: str, hi: str, gap: float) -> list[list[Word]]:
    """Groups of words separated by an empty stripe at least `gap` wide along one axis."""
    ordered = sorted(words, key=lambda w: w[lo])
    groups = [[ordered[0]]]
    reach = ordered[0][hi]
    for word in ordered[1:]:
        if word[lo] - reach >= gap:
            groups.append([])
        groups[-1].append(word)
        reach = max(reach, word[hi])
    return groups


def _without_thin_columns(groups: list[list[Word]], size: float) -> list[list[Word]]:
    """A "column" without two lines set as running text (a superscript, a page number set apart)
    joins the column before it."""
    kept: list[list[Word]] = []
    for group in groups:
        if kept and not (_is_column(group, size) and _is_column(kept[-1], size)):
            kept[-1] = kept[-1] + group
        else:
            kept.append(group)
    return kept


def _is_column(words: list[Word], size: float) -> bool:
    rows = _lines(words)
    return any(min(w["top"] for w in b) - max(w["bottom"] for w in a) < size for a, b in itertools.pairwise(rows))


def _lines(words: list[Word]) -> list[list[Word]]:
    """Words grouped into rows (a word whose middle lies inside a row's height joins it)."""
    rows: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w["top"], w["x0"])):
        middle = (word["top"] + word["bottom"]) / 2
        row = next((r for r in reversed(rows[-3:]) if r[0]["top"] <= middle <= r[0]["bottom"]), None)
        if row is None:
            rows.append([word])
        else:
            row.append(word)
    return [sorted(row, key=lambda w: w["x0"]) for row in rows]


def _line(row: list[Word], *, block: int, indent: float, number: int | None = None) -> Line:
    return Line(
        text=" ".join(w["text"] for w in row),
        x0=min(w["x0"] for w in row),
        x1=max(w["x1"] for w in row),
        top=min(w["top"] for w in row),
        bottom=max(w["bottom"] for w in row),
        chars=[c for w in row for c in w["chars"]],
        block=block,
        indent=indent,
        number=number,
    )


def _numbered_page(words: list[Word], size: float, height: float) -> PageText | None:
    """Line-numbered paper: a left margin column of numbers 1, 2, 3, … (at least 10) down the page."""
    leftmost: dict[int, Word] = {}
    for row in _lines(words):
        first = row[0]
        if _LINE_NUMBER.match(first["text"]):
            leftmost[id(first)] = first
    candidates = sorted(leftmost.values(), key=lambda w: w["top"])
    # Right-aligned numbers share their right edge; keep the largest such family.
    by_edge: dict[int, list[Word]] = {}
    for word in candidates:
        by_edge.setdefault(round(word["x1"] / 3), []).append(word)
    numbers = max(by_edge.values(), key=len, default=[])
    values = [int(w["text"]) for w in numbers]
    if len(values) < 10 or values != list(range(values[0], values[0] + len(values))) or values[0] > 1:
        return None
    margin = max(w["x1"] for w in numbers)
    first_top = numbers[0]["top"] - size
    last_bottom = numbers[-1]["bottom"] + size
    text_words = [
        w
        for w in words
        if w["x0"] > margin and first_top <= w["top"] and w["bottom"] <= last_bottom and w not in numbers
    ]
    centres = [((w["top"] + w["bottom"]) / 2, int(w["text"])) for w in numbers]
    rows: dict[int, list[Word]] = {}
    for word in text_words:
        middle = (word["top"] + word["bottom"]) / 2
        _, number = min(centres, key=lambda c: abs(c[0] - middle))
        rows.setdefault(number, []).append(word)
    left = min((w["x0"] for w in text_words), default=margin)
    lines = [
        _line(sorted(row, key=lambda w: w["x0"]), block=0, indent=min(w["x0"] for w in row) - left, number=number)
        for number, row in sorted(rows.items())
    ]
    # Blank numbered lines end a paragraph: mark them with empty lines.
    present = {line.number for line in lines}
    blanks = [Line("", 0, 0, 0, 0, [], 0, 0, number=v) for v in values if v not in present]
    ordered = sorted(lines + blanks, key=lambda line: line.number or 0)
    footer = [w for w in words if w["top"] > last_bottom and w["text"].isdigit() and len(w["text"]) <= 4]
    printed = int(footer[0]["text"]) if len(footer) == 1 and footer[0]["top"] > 0.8 * height else None
    return PageText(ordered, numbered=True, printed_page=printed)
