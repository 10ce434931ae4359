"""An answer's Markdown as the words it marks: where a cell or a sentence shows plain text, `**not**`
reads "not" (the answer pane renders the marks themselves)."""

from __future__ import annotations

import re

_MARKS = (
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", re.S), r"\1"),  # **bold**
    (re.compile(r"(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)", re.S), r"\1"),  # __bold__
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])", re.S), r"\1"),  # *emphasis*
    (re.compile(r"`([^`\n]+)`"), r"\1"),  # `code`
)


def plain_text(markdown: str) -> str:
    """The text without Markdown's emphasis and code marks; every other character as written."""
    for pattern, words in _MARKS:
        markdown = pattern.sub(words, markdown)
    return markdown


def counted(n: int, noun: str, nouns: str | None = None) -> str:
    """A count with its noun in the right number: "1 new document", "2 new documents", "0 answers"."""
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"
