"""Verbatim quotes: a claim that quotes its document word for word is confirmed as quoted.

What is confirmed is the quotation, and nothing else: that these words are the document's, in this
order, in the passage named. What the answer draws from them ("This imposes a return obligation after
each meeting") is a claim of its own, left to the other checks and to the reviewer; `Quoted.rest` is
what the claim says besides its quotation and its attribution ("Section 3 states that"), unchecked.

Trivial differences are not misquotes (`trivial`): a determiner or a word's number changed ("This
restriction" for "These restrictions"), an article dropped, a one- or two-letter slip that corrects
the contract's own typo ("party" for its "part"). A number, a negation, a modal verb or any other
word is never a trivial difference: "may" for "shall" is a different clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from models.verifier.checks import differences
from models.verifier.document import Document
from models.verifier.text import fragments, quotations, typographic, words

QUOTED = "quoted"  # the verdict: the point's quotation is the document's, word for word
MIN_QUOTE_WORDS = 6  # a quotation this long is a clause quoted, not a defined term's name
MIN_BARE_WORDS = 8  # a claim without quotation marks that is the document's words, this many of them
SIMILARITY = 0.75  # of the quotation's words and the document's stretch (edits per word): one stretch, not two
# Words a quotation may change without changing what the clause says.
_DETERMINERS = frozenset({"this", "these", "that", "those", "the", "a", "an", "such", "said", "each", "its"})
# Words whose slip the reader corrects without noticing: one for another is a typo, not another clause.
_FILLERS = _DETERMINERS | {"be", "is", "are", "to", "of"}
_ROLE_ENDS = ("or", "ee", "er")  # "lessor", "lessee", "lender": a party's role, never a typo
# Words that make a clause what it is: never a trivial difference.
_PROTECTED = frozenset(
    {"not", "no", "nor", "never", "none", "shall", "may", "must", "will", "can", "should", "any", "all", "only"}
    | {"or", "and", "unless", "except", "without", "including", "excluding"}
)
# What an answer writes around a quotation to say where it comes from: not a claim of its own.
_ATTRIBUTION_WORDS = """
    section sections clause clauses paragraph paragraphs article articles subsection schedule exhibit para par
    agreement contract document documents text excerpt context provided relevant quoted quote quotes quotation
    language provision provisions states stated state says said reads read provides provided specifies
    specified expressly explicitly also further simply verbatim word according here there it that which where
    as in of the a an to this these under by from with on at is are was be following above below thereof
    hereof hereunder recital recitals whereas preamble definition defined opening portion part sentence line
    lines notes note adds add continues continue clarifies
"""
_ATTRIBUTION = frozenset(_ATTRIBUTION_WORDS.split())
_LIST_MARK = re.compile(r"^\s*(?:[-*•–]|\(?(?:\d{1,2}(?:\.\d{1,2})*|[ivx]{1,4}|[a-z])[.)])\s+", re.I)
_CITED_NUMBER = re.compile(r"^(?:\d+[a-z]?|[ivxlc]{1,4}|[a-z])$")


@dataclass(frozen=True)
class Quoted:
    """A claim confirmed as a quotation of its document."""

    quote: str  # the claim's words that are the document's (its quotation, or the whole claim)
    passage: str  # the passage they are in
    differences: tuple[tuple[str, str], ...]  # trivial differences forgiven: (claim's words, document's)
    rest: str  # what the claim says besides the quotation and where it is from: not checked ("" if nothing)
    marked: bool = True  # in quotation marks; False: the whole claim is the document's words, unmarked

    def as_dict(self) -> dict[str, object]:
        return {
            "marked": self.marked,
            "quote": self.quote,
            "passage": self.passage,
            "differences": [list(d) for d in self.differences],
            "rest": self.rest,
        }


def verbatim_quote(claim: str, document: Document) -> Quoted | None:
    """The claim's quotation of the document, word for word (trivial differences aside); None when the
    claim quotes nothing that long, or misquotes it. A claim whose quotations are all the document's is
    quoted; one without quotation marks is when its own words are the document's (MIN_BARE_WORDS)."""
    found = [q for q in quotations(claim, min_words=2) if len(words(q.text)) >= MIN_QUOTE_WORDS]
    if found:
        matches = [_match(q.text, document) for q in found]
        if any(m is None for m in matches):
            return None  # one quotation misquoted: the quotations check says where
        first = matches[0]
        assert first is not None
        rest = claim
        for q in sorted(found, key=lambda q: -q.start):
            rest = rest[: q.start] + " " + rest[q.end :]
        diffs = tuple(d for m in matches if m is not None for d in m[1])
        quote = " … ".join(q.text.strip() for q in found)
        return Quoted(quote, first[0], diffs, _unchecked(rest))
    body = _LIST_MARK.sub("", claim, count=1).strip()
    if len(words(body)) < MIN_BARE_WORDS:
        return None
    where = document.find_words(words(body))  # unmarked, so word for word: a paraphrase is no quotation
    return Quoted(body, where, (), "", marked=False) if where is not None else None


def misquote_forgiven(quotation: str, document_stretch: str) -> tuple[tuple[str, str], ...] | None:
    """The differences between a quotation and the stretch of the document it aligns with, when every
    one of them is trivial (see `trivial`); None when one is not, or the two differ too much."""
    from rapidfuzz.distance import Levenshtein

    mine, theirs = words(quotation), words(document_stretch)
    if not mine or Levenshtein.normalized_similarity(mine, theirs) < SIMILARITY:
        return None
    diffs = differences(quotation, document_stretch)
    return diffs if all(trivial(a, b) for a, b in diffs) else None


def trivial(claim_words: str, document_words: str) -> bool:
    """One differing stretch that changes nothing a lawyer would read: a determiner or a word's number
    ("this restriction" for "these restrictions"), a dropped article, a corrected typo."""
    a, b = claim_words.split(), document_words.split()
    if any(w in _PROTECTED or any(c.isdigit() for c in w) for w in a + b):
        return False
    if len(a) == len(b) == 1 and a[0] in _FILLERS and b[0] in _FILLERS:  # "to be bound" for its "to the bound"
        return True
    a = [w for w in a if w not in ("the", "a", "an")]
    b = [w for w in b if w not in ("the", "a", "an")]
    if len(a) != len(b):
        return False
    return all(_same_word(x, y) for x, y in zip(a, b, strict=True))


def _same_word(x: str, y: str) -> bool:
    from rapidfuzz.distance import Levenshtein

    if x == y or (x in _DETERMINERS and y in _DETERMINERS):
        return True
    if x.removesuffix("s") == y.removesuffix("s"):  # "restriction" for "restrictions"
        return True
    if not (x.isalpha() and y.isalpha()) or min(len(x), len(y)) < 3 or max(len(x), len(y)) < 4:
        return False  # "you" for the contract's "your" is a typo corrected; "may" for "way" is not ours to say
    # one letter: a typo or its correction; two would make "licensor" of "licensee"
    return Levenshtein.distance(x, y) <= 1 and not (x[-2:] in _ROLE_ENDS and y[-2:] in _ROLE_ENDS)


def _match(quotation: str, document: Document) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    """The passage holding the quotation (its pieces between ellipses each found), with the trivial
    differences forgiven; None when a piece is not the document's."""
    passage: str | None = None
    forgiven: list[tuple[str, str]] = []
    for piece in fragments(quotation) or [quotation]:
        if len(words(piece)) < 2:
            continue
        where = document.find_words(words(piece))
        if where is None:
            closest = document.closest(piece)
            if closest is None:
                return None
            diffs = misquote_forgiven(piece, closest[1])
            if diffs is None:
                return None
            where = closest[0]
            forgiven += diffs
        passage = passage or where
    return (passage, tuple(forgiven)) if passage else None


def _unchecked(rest: str) -> str:
    """What a claim says besides its quotations: "" when that is only where they come from ("Section 3
    states that"), else the words themselves, trimmed."""
    text = typographic(_LIST_MARK.sub("", rest, count=1))
    text = re.sub(r"\s+", " ", text.replace('"', " ").replace("'", " ")).strip(" :;,.-()")
    said = [w for w in words(text) if w not in _ATTRIBUTION and not _CITED_NUMBER.match(w)]
    return text if said else ""
