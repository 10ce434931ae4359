"""One verdict per claim: find the passages it is about, run every check, and say what was found.

`incorrect` when any check flags; `needs_review` when every check passed but values compete (the
statement of the claim's duty holds the claim's value and another) or the passage makes an exception the
claim leaves out; `supported` when the claim's words are found in a passage and every
check passed (shown, never counted as a reviewer's `correct`); `unverifiable` otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from models.verifier.checks import Outcome, Reason
from models.verifier.checks.citations import check_citations, without_citations
from models.verifier.checks.exceptions import exception_in, hedges
from models.verifier.checks.governing_law import check_governing_law
from models.verifier.checks.polarity import check_opposites, check_polarity
from models.verifier.checks.quotations import check_quotes
from models.verifier.checks.roles import check_roles
from models.verifier.checks.values import check_values, statements
from models.verifier.document import CitedRef, Document, aligned
from models.verifier.text import canonical, content_words
from models.verifier.values import read_values

SUPPORTED, INCORRECT, NEEDS_REVIEW, UNVERIFIABLE = "supported", "incorrect", "needs_review", "unverifiable"
UNCONFIRMED = "unconfirmed"  # a passage found as evidence, with no verdict (set with the claim checker's help)
_LABEL = re.compile(r"\s*(?:\(?(?:\d{1,2}(?:\.\d{1,2})*|[ivx]{1,4}|[a-z])[.)]|[-*•–])\s+")
MIN_SHARED = 0.5  # share of the claim's content words a passage must hold to be the one it is about
# Where a compound claim's clauses part ("bake it at 350 degrees for two hours, then wash it"): at a
# semicolon, at a comma not before a year ("December 31, 2014"), and at "then".
_CLAUSES = re.compile(r";\s*|,\s+(?!\d{4}\b)|\s+then\s+", re.I)
MIN_CLAUSE_WORDS = 3  # content words a clause needs to find its own passage


@dataclass
class ClaimResult:
    verdict: str
    reasons: list[Reason] = field(default_factory=list)
    passage: str | None = None  # the matched passage
    checked: list[str] = field(default_factory=list)
    values_read: bool = False  # one statement whose every value is the one its duty's statement gives

    @property
    def summary(self) -> str:
        if self.reasons:
            r = self.reasons[0]
            return f"{r.check}: the answer says '{r.claim}', the document '{r.document[:120]}'"
        if self.verdict == SUPPORTED:
            return "every check passed: " + "; ".join(self.checked[:3])
        return "nothing in the document to check this against"


_ANSWERS = frozenset({"yes"})  # the word that answers a question, none of what it claims


def verify_claim(claim: str, document: Document, candidates: list[str], cited: list[CitedRef]) -> ClaimResult:
    """Check one claim against the document; `candidates` are passage ids a search found for it."""
    out = Outcome()
    label = _LABEL.match(claim)
    if label:  # "2. " or "(iv) " before a list item is its number in the answer, not a value
        claim = " " * label.end() + claim[label.end() :]
    quoted_in = check_quotes(claim, document, out)
    mine = content_words(claim) - _ANSWERS  # a bare "Yes." matched the one passage that says "Yes/No"
    cited_ids = [pid for c in cited for pid in c.passages if pid in document.by_id]
    pool = list(dict.fromkeys(quoted_in + cited_ids + [c for c in candidates if c in document.by_id]))
    scored = sorted(((_shared(mine, document.content[pid]), pid) for pid in pool), reverse=True)
    best = (scored[0][1], scored[0][0]) if scored else None
    check_citations(claim, cited, best, document, out)
    matched = quoted_in[:1] or ([best[0]] if best and best[1] >= MIN_SHARED else [])
    plain = without_citations(claim, cited)
    near = [matched[0]] + [p for s, p in scored[1:3] if s >= MIN_SHARED] if matched else []
    # a value's statement is found wherever the document makes it, not only in a passage like the claim
    decided = check_values(plain, near, document, out)
    _check_values_by_clause(plain, pool, document, out, decided)
    law = check_governing_law(plain, document, out)  # a jurisdiction is read as a value is
    values = {v.surface for v in read_values(plain).values} | ({law} if law else set())
    stated = [st for st in statements(plain) if st.values or not hedges(st.text)]
    values_read = bool(values) and len(stated) == 1 and values <= {surface for surface, _, _ in out.read}
    if values_read:  # the statement that gives the claim's values is the passage it is about
        matched = [out.read[0][1]]
    if matched:
        pid = matched[0]
        window = aligned(canonical(claim), document.canonical[pid], document.by_id[pid].text, margin=80)
        check_polarity(claim, window, pid, out)
        others = [p for p in pool if p != pid]
        check_opposites(claim, [document.canonical[p] for p in [pid, *others]], window, pid, out)
        check_roles(
            claim,
            window,
            document.canonical[pid],
            pid,
            document.roles,
            out,
            document.role_contexts,
            document.named_parties,
        )
    if out.flags:
        return ClaimResult(INCORRECT, out.flags, out.flags[0].passage or (matched[0] if matched else None), out.checked)
    if out.doubts:  # values that compete: the claim is not confirmed, and the pane says which
        return ClaimResult(NEEDS_REVIEW, out.doubts, out.doubts[0].passage, out.checked)
    if not matched:
        return ClaimResult(UNVERIFIABLE, [], None, out.checked)
    # A claim of values, each the one its duty's statement gives: that statement's exceptions are the ones
    # that matter, not those of the words around where the claim's words align.
    exception = (
        next((e for _, _, said in out.read if (e := exception_in(said, claim, values_read))), None)
        if values_read
        else None
    )
    if values_read and not exception:
        return ClaimResult(SUPPORTED, [], matched[0], out.checked, values_read=True)
    exception = exception or exception_in(window, claim)
    if exception:
        reason = Reason("exception", claim.strip()[:200], window.strip(), matched[0], ("case",))
        return ClaimResult(NEEDS_REVIEW, [reason], matched[0], out.checked)
    if not values <= decided:  # its words are in the passage, but a value of it nothing checked: never "found"
        return ClaimResult(UNVERIFIABLE, [], None, out.checked)
    return ClaimResult(SUPPORTED, [], matched[0], out.checked or ["the claim's words are in the passage"])


def _check_values_by_clause(claim: str, pool: list[str], document: Document, out: Outcome, decided: set[str]) -> None:
    """The values the whole claim left undecided, each clause against the passage it is about: a compound
    claim may hold no passage's words as a whole, yet change one number in one of its clauses."""
    if all(v.surface in decided for v in read_values(claim).values):
        return
    clauses = [c for c in _CLAUSES.split(claim) if c.strip()]
    if len(clauses) < 2:
        return
    for clause in clauses:
        mine = content_words(clause)
        if len(mine) < MIN_CLAUSE_WORDS:
            continue
        share, pid = max(((_shared(mine, document.content[p]), p) for p in pool), default=(0.0, None))
        if pid is not None and share >= MIN_SHARED:
            decided |= check_values(clause, [pid], document, out, frozenset(decided))


def _shared(mine: set[str], theirs: set[str]) -> float:
    return len(mine & theirs) / len(mine) if mine else 0.0


__all__ = ["CitedRef", "ClaimResult", "Document", "verify_claim"]
