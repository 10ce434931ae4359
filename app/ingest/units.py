"""What every reader of a document (text, Markdown, Word, PDF, a scan's OCR) cuts its text into before
app/ingest/documents.py outlines it: units of text with where they sit, and the two rules the readers
share (a line that ends a sentence, a running header or footer told apart from its page number)."""

from __future__ import annotations

import re
from dataclasses import dataclass

TERMINAL = tuple('.;:!?"”’)')  # a line ending in one of these ends its sentence
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Unit:
    start: int
    end: int
    page: int | None = None
    heading: bool = False  # the format itself says so (a Word heading style, a Markdown '#')
    footnote_label: str | None = None
    footnote_markers: tuple[str, ...] = ()
    cite: str | None = None  # a transcript's page:line numbers ("4:12-15"), cited instead of a section
    confidence: float | None = None  # OCR's mean word confidence (0-1); None for a text layer


def normalise_running(line: str) -> str:
    """A running header or footer as every page prints it: its page number (any digits) left out."""
    return _DIGITS.sub("#", line.strip().lower())
