"""A document as a reader names it: its file name without the extension, or, where that name is only
an identifier (`contractnli-dev-0015`), the title the document states on its first line."""

from __future__ import annotations

import re

# A name that says nothing to a reader: a word or two, then a number (a dataset's row id).
_IDENTIFIER = re.compile(r"[A-Za-z]+(?:[-_][A-Za-z]+)*[-_]?\d+")
_SMALL_WORDS = {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"}
_MOST_TITLE = 90  # characters: longer, the first line is a sentence, not a title


def short_name(document: str) -> str:
    """A document's file name without its folder and extension."""
    name = document.rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    return stem if dot and stem and len(extension) <= 4 else name


def stated_title(opening: str) -> str | None:
    """The title a document opens with (its first line, when it reads as a title), in title case."""
    line = next((ln.strip(" \t\ufeff") for ln in opening.splitlines() if ln.strip(" \t\ufeff")), "")
    words = line.split()
    if not 2 <= len(words) <= 14 or len(line) > _MOST_TITLE or line.endswith((".", ",", ";", ":")):
        return None
    if sum(ch.isalpha() for ch in line) < 0.6 * len(line.replace(" ", "")):
        return None
    if line.upper() != line:  # already in mixed case: as written
        return line
    return " ".join(_title_word(word, first=n == 0) for n, word in enumerate(line.lower().split()))


def _title_word(word: str, first: bool) -> str:
    if not first and word in _SMALL_WORDS:
        return word
    return re.sub(r"[a-z]+(?:'[a-z]+)?", lambda m: m.group(0).capitalize(), word)


def display_name(document: str, opening: str = "") -> str:
    """How a window or a report names a document: its short name, unless that is a mere identifier
    and the document states a title."""
    short = short_name(document)
    if _IDENTIFIER.fullmatch(short) and (title := stated_title(opening)):
        return title
    return short
