"""Text normalisation shared by the checks: one canonical form for the claim and the document, so
that typography (curly quotes, non-breaking spaces, hyphen variants, case) never counts as a difference.

Each function that changes more than typography says so in the normalisations it reports.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

_TYPOGRAPHY = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u00a0": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u00ad": "",
    }
)
_NON = re.compile(r"\bnon[\s-]+(?=[a-z])", re.IGNORECASE)  # "non-exclusive", "non exclusive" -> "nonexclusive"
_CONTRACTION = re.compile(r"\b(ca|wo|do|does|did|is|are|was|were|has|have|had|should|would|could|must)n't\b", re.I)
TOKEN = re.compile(r"[a-z0-9]+")
# Words that carry no claim of their own: left out when deciding whether two texts talk about the same thing.
_STOPWORDS = """a an the of to in on for by with and or as at is are be been being was were this that these those it
its any all such which who whom whose from into under upon than then there their they them he she his her has have had
do does did not no shall will may must can would should could so if but also each other per within without between
about after before during including include includes see"""
STOPWORDS = frozenset(_STOPWORDS.split())


def typographic(text: str) -> str:
    """Curly quotes, dashes and odd spaces as plain ASCII; Unicode compatibility forms folded."""
    return unicodedata.normalize("NFKC", text.translate(_TYPOGRAPHY))


@lru_cache(maxsize=8192)  # a claim is compared by several checks; a passage by several claims
def canonical(text: str) -> str:
    """Lower-case text with typography, contractions ("can't") and "non-" prefixes made uniform."""
    text = typographic(text).casefold()
    text = text.replace("cannot", "can not")
    text = _CONTRACTION.sub(
        lambda m: ("can" if m.group(1) == "ca" else "will" if m.group(1) == "wo" else m.group(1)) + " not", text
    )
    return _NON.sub("non", text)


def words(text: str) -> list[str]:
    """The words of a text in canonical form: punctuation, quotes and case never differ."""
    return TOKEN.findall(canonical(text))


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS and len(w) > 2}


@dataclass(frozen=True)
class Quotation:
    text: str  # without its quotation marks
    start: int  # offsets in the claim
    end: int


_QUOTED = re.compile(r'"([^"]{3,}?)"')


def quotations(claim: str, min_words: int = 4) -> list[Quotation]:
    """Text in double quotation marks (straight or typographic) of at least `min_words` words;
    shorter quoted strings are names of defined terms rather than quotations of a clause."""
    plain = typographic(claim)  # same length: the translation maps one character to one
    if len(plain) != len(claim):
        plain = claim.translate(_TYPOGRAPHY)
    found = []
    for m in _QUOTED.finditer(plain):
        if len(words(m.group(1))) >= min_words:
            found.append(Quotation(claim[m.start(1) : m.end(1)], m.start(1), m.end(1)))
    return found


_ELLIPSIS = re.compile(r"\.\s*\.\s*\.|…|\[[^\]]*\]")


def fragments(quotation: str) -> list[str]:
    """The pieces of a quotation between ellipses and bracketed insertions ("[the Company]")."""
    return [piece for piece in _ELLIPSIS.split(quotation) if words(piece)]


@lru_cache(maxsize=65536)  # a contract's words are stemmed for every claim about it: 700,000 calls on the sample
def stem(word: str) -> str:
    """A crude stem, enough to match "terminates" with "terminated": a common suffix off a long word."""
    for suffix in ("ing", "ed", "es", "s", "e", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word
