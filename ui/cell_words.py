"""How a table cell says a tag, a header and a point's citations, in every table of the window: a tag by a
symbol, a word and a colour (never by colour alone), headers over short lines, citations one a line."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from app.figures.tag_colours import PALE, UNTAGGED_PALE
from models.vocabulary import Tag

# Colour plus a symbol and a word: a tag is never told by colour alone.
TAG_STYLE: dict[Tag | None, tuple[str, str]] = {
    Tag.CORRECT: ("✓ correct", PALE["correct"]),  # one colour a tag, the charts' too: app/figures/tag_colours.py
    Tag.INCORRECT: ("✗ incorrect", PALE["incorrect"]),
    Tag.IRRELEVANT: ("∅ irrelevant", PALE["irrelevant"]),
    Tag.MISSING: ("+ missing", PALE["missing"]),
    None: ("? untagged", UNTAGGED_PALE),
}


def tag_text(tag: Tag | None) -> str:
    return TAG_STYLE[tag][0]


def header_lines(text: str, width: int = 16) -> str:
    """A column header over a few short lines, so that the column is as narrow as its cells."""
    return textwrap.fill(text, width, break_long_words=False, break_on_hyphens=False)


def citation_lines(citations: Sequence[str]) -> str:
    """A point's cited passages, one a line: the column stays narrow and the row grows instead."""
    return "\n".join(citations)
