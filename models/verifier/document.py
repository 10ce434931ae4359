"""A document prepared once for checking: its passages in canonical form, the words of the whole text
for finding quotations, and the parties it names."""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from functools import cached_property

from rapidfuzz import fuzz, process

from models.verifier.text import STOPWORDS, TOKEN, canonical, content_words, typographic, words
from models.verifier.values import Reading, read_values


@dataclass(frozen=True)
class Source:
    """One passage of the document, by its citation id."""

    id: str
    text: str


@dataclass(frozen=True)
class CitedRef:
    """A citation the claim writes, with the passages it resolves to (none: the document lacks it)."""

    written: str
    start: int
    end: int
    passages: tuple[str, ...]


# Defined roles that come in pairs; a pair of "-or"/"-ee" words the document uses is found as well.
_ROLE_PAIRS = (
    ("disclosing party", "receiving party"),
    ("disclosing", "receiving"),
    ("buyer", "seller"),
    ("purchaser", "seller"),
    ("landlord", "tenant"),
    ("employer", "employee"),
    ("lender", "borrower"),
    ("parent", "company"),
    ("customer", "supplier"),
    ("customer", "vendor"),
    ("client", "contractor"),
)
_DEFINED = re.compile(r'\(\s*(?:the\s+|hereinafter\s+(?:referred\s+to\s+as\s+)?)?"([A-Z][\w.&\- ]{0,40}?)"\s*\)')
_NAMED = re.compile(
    r"([A-Z][A-Za-z0-9.,&\- ]{2,60}?),?\s+(?:an?\s+[^()]{0,100}?)?"  # "Inovalon Holdings, Inc., a Delaware corporation"
    r'\(\s*(?:the\s+|hereinafter\s+)?"([A-Z][\w ]{1,30})"\s*\)'  # (the "Company")
)
_NOT_NAMES = {"corp", "company", "limited", "corporation", "agreement", "with", "among", "between"}
_NOT_PARTIES = {"agreement", "effective date", "confidential information", "parties", "party", "term", "territory"}


class Document:
    def __init__(self, passages: list[Source]) -> None:
        self.passages = [p for p in passages if p.text.strip()]
        self.by_id = {p.id: p for p in self.passages}
        self.canonical = {p.id: canonical(p.text) for p in self.passages}
        tokens = {pid: TOKEN.findall(text) for pid, text in self.canonical.items()}
        self.content = {pid: {w for w in ws if w not in STOPWORDS and len(w) > 2} for pid, ws in tokens.items()}
        # One string of all words, for quotations that cross punctuation or line breaks.
        self._starts: list[int] = []
        pieces, at = [], 1
        for p in self.passages:
            self._starts.append(at)
            joined = " ".join(tokens[p.id])
            pieces.append(joined)
            at += len(joined) + 1
        self.joined = " " + " ".join(pieces) + " "
        self._values: dict[str, Reading] = {}
        self._index: dict[str, list[str]] = {}
        for p in self.passages:
            for word in self.content[p.id]:
                self._index.setdefault(word, []).append(p.id)

    def search(self, text: str, limit: int = 5) -> list[str]:
        """Passages sharing the most rare words with `text` (a BM25-like ranking on word presence, which
        is all a claim of one sentence needs), best first."""
        n = len(self.passages)
        scores: dict[str, float] = {}
        for word in content_words(text):
            holders = self._index.get(word, ())
            if not holders:
                continue
            idf = math.log(1 + (n - len(holders) + 0.5) / (len(holders) + 0.5))
            for pid in holders:
                scores[pid] = scores.get(pid, 0.0) + idf
        return sorted(scores, key=lambda pid: -scores[pid])[:limit]

    def values(self, passage_id: str) -> Reading:
        if passage_id not in self._values:
            self._values[passage_id] = read_values(self.by_id[passage_id].text)
        return self._values[passage_id]

    def find_words(self, wanted: list[str]) -> str | None:
        """The passage where these words occur in this order, or None."""
        at = self.joined.find(" " + " ".join(wanted) + " ")
        if at < 0:
            return None
        return self.passages[bisect.bisect_right(self._starts, at + 1) - 1].id

    def closest(self, text: str) -> tuple[str, str] | None:
        """The passage most like `text`, and the stretch of it that aligns with `text`."""
        if not self.passages:
            return None
        query = canonical(text)
        ids = [i for i, t in self.canonical.items() if len(t) >= len(query) // 2]  # not a one-letter passage
        if not ids:
            return None
        best = process.extractOne(query, [self.canonical[i] for i in ids], scorer=fuzz.partial_ratio)
        if best is None:
            return None
        passage_id = ids[best[2]]
        return passage_id, aligned(query, self.canonical[passage_id], self.by_id[passage_id].text, margin=0)

    @cached_property
    def roles(self) -> dict[str, str]:
        """Role phrase (canonical) -> the role it is paired with; defined parties pair with each other."""
        text = " ".join(self.canonical.values())
        vocabulary = set(re.findall(r"[a-z]+", text))
        counter: dict[str, str] = {}
        for a, b in _ROLE_PAIRS:
            if set(a.split()) <= vocabulary and set(b.split()) <= vocabulary and a in text and b in text:
                counter.setdefault(a, b)
                counter.setdefault(b, a)
        for word in vocabulary:
            if len(word) > 5 and word.endswith("or") and word[:-2] + "ee" in vocabulary:
                counter[word], counter[word[:-2] + "ee"] = word[:-2] + "ee", word
        parties = self.defined_parties
        if len(parties) == 2:
            a, b = parties
            counter.setdefault(a, b)
            counter.setdefault(b, a)
        return counter

    @cached_property
    def role_contexts(self) -> dict[tuple[str, str], int]:
        from models.verifier.checks.roles import role_contexts

        return role_contexts(" \n ".join(self.canonical.values()), self.roles)

    @cached_property
    def named_parties(self) -> dict[str, str]:
        """A party's name (its last three words, canonical) -> the role the opening defines it as:
        "Inovalon Holdings, Inc. ... (the "Company")" gives "inovalon holdings inc" -> "company"."""
        names: dict[str, str] = {}
        for passage in self.passages[:300]:  # the preamble, after any table of contents
            if '"' not in typographic(passage.text):
                continue
            for m in _NAMED.finditer(typographic(passage.text)[:4000]):
                role, name = canonical(m.group(2)).strip(), words(m.group(1))[-3:]
                if role in self.roles and any(len(w) >= 4 and w not in _NOT_NAMES for w in name):
                    names.setdefault(" ".join(name), role)
            if len(names) >= 2:
                break
        return names

    @cached_property
    def defined_parties(self) -> list[str]:
        """Names defined in the opening of the document (`("Producer")`, `(the "Company")`)."""
        opening = typographic(" ".join(p.text for p in self.passages[:8]))[:4000]
        between = re.search(r"\bbetween\b", opening, re.I)
        if between is None:
            return []
        names = []
        for m in _DEFINED.finditer(opening, between.end(), between.end() + 600):
            name = canonical(m.group(1)).strip()
            if name not in _NOT_PARTIES and name not in names:
                names.append(name)
        return names[:4]


def aligned(query: str, passage_canonical: str, passage_text: str, margin: int = 60) -> str:
    """The part of a passage that aligns with `query` (rapidfuzz), widened by `margin` characters."""
    alignment = fuzz.partial_ratio_alignment(query, passage_canonical)
    if alignment is None:
        return passage_text
    start = max(0, alignment.dest_start - margin)
    end = min(len(passage_canonical), alignment.dest_end + margin)
    while start > 0 and passage_canonical[start - 1].isalnum():  # whole words only
        start -= 1
    while end < len(passage_canonical) and passage_canonical[end].isalnum():
        end += 1
    if len(passage_canonical) == len(passage_text):
        return passage_text[start:end]
    return passage_canonical[start:end]
