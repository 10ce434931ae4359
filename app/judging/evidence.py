"""What a judge's citations name in its document: passage ids, or clause references ("Section 7.3(i)",
"§ 6.3", "Article IV") resolved through the document's section outline.

A clause the document does not split out (7.3(i) where the contract has only 7.03(a)–(d)) falls back
to its section's passages ranked by relevance to the point; form lines and page furniture never count.

A citation is shown first only if it holds the point's content (most of the point's words are in it);
where none of the judge's does, the passage of an operative clause that best matches the point goes
first — the title and recitals, which carry every defined name, never lead for a claim about a clause.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from app.ingest.citations import _NUM, CITATION, CitationIndex, _section_key
from models.evidence import EVIDENCE_PER_POINT, Cited, is_evidence, rank_passages
from models.prompts import EvidencePassage
from models.vocabulary import PassageKind
from storage.documents import Passage

_WORD = re.compile(r"[^\W\d_]{4,}")
# Words every clause of a contract shares: they say nothing of which clause holds a point.
_GENERIC = frozenset(
    {
        *("agreement", "party", "parties", "shall", "will", "which", "that", "this", "these", "those"),
        *("with", "from", "such", "other", "upon", "under", "document", "section", "clause", "provide"),
        *("provides", "provided", "states", "state", "stated", "does", "also", "have", "been", "being"),
    }
)
HOLDS_SHARE = 0.5  # of the point's content words in a passage: it holds the point


def content_words(text: str) -> set[str]:
    """A text's content words, lower case, cut to six letters (a light stem)."""
    return {w.lower()[:6] for w in _WORD.findall(text)} - {g[:6] for g in _GENERIC}


def holds(point: str, passage: str) -> bool:
    """Whether a passage holds most of the point's content words."""
    wanted = content_words(point)
    return bool(wanted) and len(wanted & content_words(passage)) >= HOLDS_SHARE * len(wanted)


_BARE = re.compile(rf"(?:Section|Clause|§|¶)?\s*(?P<bare>{_NUM})", re.IGNORECASE)


class DocumentEvidence:
    """A document's passages as evidence: resolves what a judge cites for one data point."""

    def __init__(self, passages: list[Passage]) -> None:
        self.index = CitationIndex(passages)
        self.passages = {
            p.citation_id: EvidencePassage(p.citation_id, p.section, p.text)
            for p in passages
            if p.kind is not PassageKind.TOC and is_evidence(p.text)
        }
        self._sections = [(p, _section_key(p.section)[0] if p.section else None) for p in passages]

    def resolve(self, cited: Sequence[str], point: str) -> Cited:
        found: list[str] = []
        unverified: list[str] = []
        fallback = False
        for raw in dict.fromkeys(c.strip().strip("[]") for c in cited if c.strip()):
            if raw in self.index.by_id:
                (found if raw in self.passages else unverified).append(raw)
                continue
            ids, broader = self._clause(raw, point)
            if ids:
                found += ids
                fallback = fallback or broader
            else:
                unverified.append(raw)
        return Cited(tuple(dict.fromkeys(found)), tuple(unverified), fallback)

    def first_holding(self, cited: Sequence[str], point: str) -> list[str]:
        """The judge's citations, those that hold the point first; where none does, the operative
        passage that best matches the point goes before them (module docstring)."""
        known = [c for c in cited if c in self.passages]
        holding = [c for c in known if holds(point, self.passages[c].text)]
        if holding or not content_words(point):
            return list(dict.fromkeys([*holding, *cited]))
        operative = [p for p in self.passages.values() if p.section] or list(self.passages.values())
        best = [c for c in rank_passages(point, operative, 1) if holds(point, self.passages[c].text)]
        return list(dict.fromkeys([*best, *cited]))

    def _clause(self, written: str, point: str) -> tuple[list[str], bool]:
        """The passages a clause reference names, most relevant first, and whether only its section
        (not the clause itself) was found."""
        match = CITATION.search(written) or _BARE.fullmatch(written.strip())
        if match is None:
            return [], False
        kind = next(name for name, value in match.groupdict().items() if value)
        target = match.group(kind)
        if kind == "par":
            return [], False
        exact = self.index.by_section.get(_section_key(target)) if kind != "article" else None
        candidates = exact or list(self.index.resolve(kind, target))
        broader = not exact and kind != "article"
        if broader:  # every passage of the section, its sub-clauses included
            number = _section_key(target)[0]
            candidates = [p.citation_id for p, key in self._sections if key == number]
        shown = [self.passages[c] for c in candidates if c in self.passages]
        return rank_passages(point, shown, EVIDENCE_PER_POINT), broader and bool(shown)
