"""The passages a judge's tag relies on, and the checks that keep a judge from inventing points.

Evidence is ranked by relevance to the point (TF-IDF cosine, the standard lexical ranking), and only
passages that can support a claim count: form lines ("________________"), page numbers, table-of-
contents lines and other page furniture are never evidence. A point whose words come from the judge's
own prompt (instructions, field labels, the text that introduces the answer) is an echo, not a point.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from models.prompts import EvidencePassage, read_prompt

EVIDENCE_PER_POINT = 3  # what a reviewer reads first; more passages dilute the pointer

_WORD = re.compile(r"[^\W\d_]{2,}")
_PAGE = re.compile(r"(?i)^\W*(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*of\s*\d{1,4})?\W*$")
_TOC_LINE = re.compile(r"^[^.;:]{3,90}?(?:\.{3,}|\s)\s*\d{1,3}$")


def is_evidence(text: str) -> bool:
    """Whether a passage can support a claim: prose with words, not a form line or page furniture."""
    stripped = text.strip()
    if not stripped or _PAGE.match(stripped):
        return False
    if sum(c in "_.-–—=*·" for c in stripped) > 0.3 * len(stripped):
        return False  # a form line or a rule
    words = _WORD.findall(stripped)
    if len(words) < 3:
        return False  # "among", "Exhibit 2.1", "W I T N E S S E T H :"
    return not (_TOC_LINE.match(stripped) and len(words) <= 10)  # "Governing Law 88"


def rank_passages(query: str, passages: Sequence[EvidencePassage], limit: int = EVIDENCE_PER_POINT) -> list[str]:
    """Citation ids of the evidence passages most relevant to the query, best first (ties: document order)."""
    candidates = [p for p in passages if is_evidence(p.text)]
    if not candidates or not query.strip():
        return [p.citation_id for p in candidates[:limit]]
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, stop_words="english")
    try:
        matrix = vectorizer.fit_transform([p.text for p in candidates] + [query])
    except ValueError:  # nothing but stop words
        return [p.citation_id for p in candidates[:limit]]
    scores = (matrix[:-1] @ matrix[-1].T).toarray().ravel()
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))
    return [candidates[i].citation_id for i in order[:limit]]


@dataclass(frozen=True)
class Cited:
    """What one data point's citations name, after validation."""

    passages: tuple[str, ...]  # citation ids of evidence passages, most relevant first
    unverified: tuple[str, ...]  # what the judge cited that names no passage of the document
    fallback: bool = False  # a clause the document does not split out: its section's best passages


# (the judge's citations, the point's words) -> what they name in the document
CitationResolver = Callable[[Sequence[str], str], Cited]


# ---------------------------------------------------------------- prompt echoes

FIELD_LABELS = {
    "text",
    "tag",
    "tags",
    "citations",
    "rationale",
    "data points",
    "data_points",
    "missing",
    "document",
    "question",
    "answer",
    "data_point",
    "correct",
    "incorrect",
    "irrelevant",
    "correct|incorrect|irrelevant|missing",
    "par_1",
    "...",
}
ECHO_SCORE = 90.0  # rapidfuzz partial ratio at which a point repeats a line of the prompt


@cache
def _template_lines() -> tuple[str, ...]:
    from models.prompts import CASE_LINE

    texts = [read_prompt(name) for name in ("lemaj_system.txt", "lemaj_one_pass.txt", "lemaj_missing.txt")]
    texts += [read_prompt("lemaj_tag.txt"), read_prompt("lemaj_tag_all.txt"), CASE_LINE]
    texts.append("The document, one passage a line, each with its citation id:")
    lines = []
    for text in texts:
        for line in text.splitlines():
            lines += [s.strip(" -") for s in re.split(r"(?<=[.:])\s+", line) if len(s.strip(" -")) >= 12]
    return tuple(lines)


def echoes_prompt(text: str, answer: str = "") -> bool:
    """Whether a judge's point is text of its own prompt rather than of the answer or the document."""
    from rapidfuzz import fuzz

    norm = " ".join(text.split()).strip(" .:\"'{}[]")
    if norm.lower() in FIELD_LABELS or not _WORD.search(norm):
        return True
    if answer and norm in " ".join(answer.split()):
        return False  # the answer says it itself
    if len(norm) < 12:
        return False
    return any(
        fuzz.partial_ratio(norm, line) >= ECHO_SCORE
        for line in _template_lines()
        if len(line) >= 0.6 * len(norm) or len(norm) >= 0.6 * len(line)
    )
