"""What the claim checker measures of one claim against its document: how much of the claim the
document holds (its content words, rare words, word pairs, numbers and names, anywhere and in the
best few passages), how closely the best passage aligns with it, whether the two differ in negation,
modality or scope words ("only", "all"), the definitions of the defined terms it uses, and the
verifier's own rule outcome.

Every feature compares the claim with the document or describes the claim's form; none names a
statement, so a template repeated across contracts (ContractNLI's 17 hypotheses) cannot be learned
by heart. Passages are sentence windows of the document's passages, so a long clause does not hide
the one sentence that matters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise

from rapidfuzz import fuzz

from models.verifier.text import STOPWORDS, TOKEN, canonical, stem

_SENTENCE = re.compile(r"(?<=[.;:!?])\s+(?=[\"“(]?[A-Z0-9(])")
_NEGATORS = frozenset({"not", "no", "never", "nor", "neither", "none", "nothing", "without", "cannot"})
_PERMISSION = frozenset({"may", "can", "might", "could", "permitted", "allowed", "entitled"})
_OBLIGATION = frozenset({"shall", "must", "required", "obliged", "obligated", "will"})
_SCOPE = frozenset({"only", "solely", "exclusively", "all", "any", "every", "each", "entire", "whole", "always"})
_HEDGES = frozenset(
    {"generally", "typically", "usually", "often", "likely", "possibly", "commonly", "approximately", "about", "around"}
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]{2,}")
_LEGAL = re.compile(
    r"\b(?:shall|agreement|hereto|hereof|hereunder|hereby|herein|party|parties|whereas|thereof|pursuant)\b", re.I
)
# Contract words per word: 110 of the shared data's 111 NDAs are above, 237 of 241 news and web texts below.
CONTRACT_REGISTER = 0.008
# The checker's kinds of answer, each with its own calibration and thresholds: about a contract; a summary
# of another document (several times the points of an answer to a question, so more chances of a false
# alarm in a correct one); or an answer to a question about another document.
KINDS = ("contract", "summary", "other")
_SUMMARY_REQUEST = re.compile(r"\bsummar(?:y|ies|i[sz]e)", re.I)
# A claim that the document is silent on something ("does not mention photos") cannot be confirmed or
# refuted by finding its words: the checker gives its probability but neither flags it nor calls it supported.
ABSENCE = re.compile(
    r"\b(?:no|without any)\s+(?:mention|reference|provision|clause|indication)s?\b"
    r"|\b(?:does|do|did|is|are)\s+not\s+(?:\w+ly\s+)?(?:state|say|mention|address|specify|provide|define|"
    r"include|contain|cover|discuss|identify|reference|set out|explain)s?\b"
    r"|\bnot\s+(?:\w+ly\s+)?(?:stated|mentioned|addressed|specified|defined|identified|discussed|covered)\b"
    r"|\bsilent\b|\bnothing in\b",
    re.I,
)
MIN_CONTENT_WORDS = 3  # "Conclusion: Yes.", "Sub-paragraph: (e)": too little to look for
WINDOW_SENTENCES = 3  # a claim may join what two or three neighbouring sentences say
TOP = 3  # passages whose union is compared with the claim


def content_stems(text: str) -> list[str]:
    """Content words, crudely stemmed; a verdict ("Yes.") is no content to look for."""
    return [stem(w) for w in TOKEN.findall(canonical(text)) if w not in STOPWORDS and len(w) > 2 and w != "yes"]


def enough_to_check(text: str) -> bool:
    """Whether a claim has content enough to look for (MIN_CONTENT_WORDS): what every reader that searches the
    contract for a claim, and every training set of one, asks first."""
    return len(set(content_stems(text))) >= MIN_CONTENT_WORDS


def _tokens(text: str) -> list[str]:
    return TOKEN.findall(canonical(text))


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in _NUMBER.findall(text)}


@dataclass
class Evidence:
    """The text the checker compares claims with: sentence windows of the document's passages."""

    windows: list[str]
    window_passage: list[str]  # the citation id each window comes from
    legal_register: float = 0.0  # share of the document's words that are contract vocabulary
    definitions: dict[str, str] = field(default_factory=dict)  # defined term (lower case) -> its definition
    stems: list[set[str]] = field(init=False)
    bigrams: set[tuple[str, str]] = field(init=False)

    def __post_init__(self) -> None:
        self.stems = [set(content_stems(w)) for w in self.windows]
        tokens = _tokens(" ".join(self.windows))
        self.bigrams = set(pairwise(tokens))
        counts: dict[str, int] = {}
        for s in self.stems:
            for w in s:
                counts[w] = counts.get(w, 0) + 1
        n = max(len(self.stems), 1)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in counts.items()}
        self.unseen_idf = math.log(1 + (n + 0.5) / 0.5)  # a word the document never uses
        self.index: dict[str, list[int]] = {}
        for i, s in enumerate(self.stems):
            for w in s:
                self.index.setdefault(w, []).append(i)

    @classmethod
    def of(cls, passages: Sequence[tuple[str, str]], definitions: dict[str, str] | None = None) -> Evidence:
        """From (citation id, text) passages: each sentence with up to two that follow it; with the
        contract's defined terms, a claim is read with the definitions of the terms it uses."""
        windows, owners = [], []
        for pid, text in passages:
            sentences = [s for s in _SENTENCE.split(text.strip()) if s.strip()]
            for i in range(len(sentences)):
                windows.append(" ".join(sentences[i : i + WINDOW_SENTENCES]))
                owners.append(pid)
        text = " ".join(t for _, t in passages)
        register = len(_LEGAL.findall(text)) / max(len(text.split()), 1)
        return cls(windows, owners, register, {t.lower(): d for t, d in (definitions or {}).items()})

    def defined_in(self, claim: str) -> list[str]:
        """The defined terms a claim uses."""
        lowered = f" {canonical(claim)} "
        return [t for t in self.definitions if f" {t} " in lowered or f" {t}'" in lowered or f" {t}s " in lowered]

    @property
    def kind(self) -> str:
        """ "contract" or "other": the register of the document."""
        return "contract" if self.legal_register >= CONTRACT_REGISTER else "other"

    def kind_of_answer(self, question: str) -> str:
        """One of KINDS: the document's register, and outside contracts whether the question asks for a
        summary."""
        if self.kind == "contract" or not _SUMMARY_REQUEST.search(question):
            return self.kind
        return "summary"

    @cached_property
    def numbers(self) -> set[str]:
        return set().union(*(_numbers(w) for w in self.windows)) if self.windows else set()

    @cached_property
    def words(self) -> set[str]:
        return set(_tokens(" ".join(self.windows)))

    def ranked(self, claim_stems: set[str], limit: int) -> list[int]:
        """Windows sharing the most rare words with the claim (BM25's idf on presence), best first."""
        scores: dict[int, float] = {}
        for w in sorted(claim_stems):  # a fixed order: the same sums, so the same ties, in every process
            for i in self.index.get(w, ()):
                scores[i] = scores.get(i, 0.0) + self.idf[w]
        return sorted(scores, key=lambda i: (-scores[i], i))[:limit]


FEATURES = (
    "content_words",
    "doc_coverage",
    "doc_coverage_idf",
    "unseen_words",
    "unseen_idf_share",
    "best_coverage_idf",
    "top_coverage_idf",
    "bigram_coverage",
    "fuzz_partial",
    "fuzz_token_set",
    "numbers",
    "numbers_unseen",
    "names",
    "names_unseen",
    "negation_claim",
    "negation_window",
    "negation_differs",
    "permission_claim",
    "permission_window",
    "obligation_claim",
    "obligation_window",
    "modality_differs",
    "scope_claim",
    "scope_unmatched",
    "hedges",
    "best_share_of_claim",
    "rule_incorrect",
    "rule_needs_review",
    "rule_supported",
    "rule_unverifiable",
    "legal_register",
    "defined_terms",
    "coverage_with_definitions",
)


@dataclass(frozen=True)
class Measured:
    values: tuple[float, ...]  # in the order of FEATURES
    passage: str | None  # citation id of the best window's passage


def measure(claim: str, evidence: Evidence, rule_verdict: str) -> Measured | None:
    """The features of one claim; None when it has too few content words to check ("Yes.")."""
    stems = content_stems(claim)
    mine = set(stems)  # sums over it below run in sorted order: string hashes differ between processes
    if len(mine) < MIN_CONTENT_WORDS:
        return None
    idf = {w: evidence.idf.get(w, evidence.unseen_idf) for w in sorted(mine)}
    total_idf = sum(idf.values())
    seen = {w for w in mine if w in evidence.idf}
    ranked = evidence.ranked(mine, 8)
    best = ranked[0] if ranked else None
    window = evidence.windows[best] if best is not None else ""
    best_cov = sum(idf[w] for w in sorted(mine & evidence.stems[best])) / total_idf if best is not None else 0.0
    top = set().union(*(evidence.stems[i] for i in ranked[:TOP])) if ranked else set()
    tokens = _tokens(claim)
    pairs = list(pairwise(tokens))
    claim_numbers = _numbers(claim)
    names = {m.group(0).lower() for m in _CAPITALISED.finditer(claim)}
    window_tokens = set(_tokens(window))
    claim_tokens = set(tokens)
    neg_c, neg_w = bool(claim_tokens & _NEGATORS), bool(window_tokens & _NEGATORS)
    perm_c, perm_w = bool(claim_tokens & _PERMISSION), bool(window_tokens & _PERMISSION)
    obl_c, obl_w = bool(claim_tokens & _OBLIGATION), bool(window_tokens & _OBLIGATION)
    scope = claim_tokens & _SCOPE
    canon = canonical(claim)
    used = evidence.defined_in(claim)
    defined = set().union(*(content_stems(evidence.definitions[t]) for t in used)) if used else set()
    values = (
        math.log1p(len(mine)),
        len(seen) / len(mine),
        sum(idf[w] for w in sorted(seen)) / total_idf,
        float(len(mine - seen)),
        sum(idf[w] for w in sorted(mine - seen)) / total_idf,
        best_cov,
        sum(idf[w] for w in sorted(mine & top)) / total_idf,
        sum(p in evidence.bigrams for p in pairs) / len(pairs) if pairs else 1.0,
        fuzz.partial_ratio(canon, canonical(window)) / 100 if window else 0.0,
        fuzz.token_set_ratio(canon, canonical(window)) / 100 if window else 0.0,
        float(len(claim_numbers)),
        float(len(claim_numbers - evidence.numbers)),
        float(len(names)),
        float(len(names - evidence.words)),
        float(neg_c),
        float(neg_w),
        float(neg_c != neg_w),
        float(perm_c),
        float(perm_w),
        float(obl_c),
        float(obl_w),
        float(perm_c != perm_w or obl_c != obl_w),
        float(bool(scope)),
        float(len(scope - window_tokens)),
        float(bool(claim_tokens & _HEDGES)),
        len(mine & evidence.stems[best]) / len(mine) if best is not None else 0.0,
        float(rule_verdict == "incorrect"),
        float(rule_verdict == "needs_review"),
        float(rule_verdict == "supported"),
        float(rule_verdict == "unverifiable"),
        evidence.legal_register,
        float(len(used)),
        sum(idf[w] for w in sorted(mine & (top | defined))) / total_idf,
    )
    return Measured(values, evidence.window_passage[best] if best is not None else None)
