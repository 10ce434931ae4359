"""Quotations: every quotation in a claim must occur in the document."""

from __future__ import annotations

from models.verifier.checks import Outcome, Reason, differences
from models.verifier.checks.verbatim import misquote_forgiven
from models.verifier.document import Document
from models.verifier.text import fragments, quotations, words

QUOTE_NORMALISATIONS = ("case", "typographic quotes and dashes", "whitespace and line breaks", "punctuation")


def check_quotes(claim: str, document: Document, out: Outcome) -> list[str]:
    """Every quotation must occur in the document; returns the passages the quotations come from.
    A short piece between ellipses ("Vendor … shall not") must occur in the passage of the rest."""
    found_in: list[str] = []
    for quotation in quotations(claim, min_words=2):
        pieces = fragments(quotation.text)
        notes = QUOTE_NORMALISATIONS + (("ellipses and [insertions] as gaps",) if len(pieces) > 1 else ())
        long = [p for p in pieces if len(words(p)) >= MIN_FRAGMENT_WORDS] or pieces[:1]
        short = [p for p in pieces if p not in long]
        complete, here = True, []
        for piece in long:
            passage = document.find_words(words(piece))
            if passage is not None:
                here.append(passage)
                continue
            closest = document.closest(piece)
            where, text = closest if closest else (None, "")
            diffs = differences(piece, text)
            if where is not None and diffs and all(_typo(a, b) for a, b in diffs):
                here.append(where)
                out.checked.append(f"quotation found, with a one-letter difference ({_shown(diffs)})")
                continue
            if where is not None and diffs and misquote_forgiven(piece, text) is not None:
                here.append(where)  # "This restriction" for "These restrictions": the same clause, quoted
                out.checked.append(f"quotation found, with trivial differences ({_shown(diffs)})")
                continue
            complete = False
            out.flags.append(Reason("misquote", piece.strip(), text, where, notes, diffs))
        for piece in short:
            wanted = " " + " ".join(words(piece)) + " "
            if here and not any(wanted in " " + " ".join(words(document.by_id[p].text)) + " " for p in here):
                complete = False
                text = document.by_id[here[0]].text
                out.flags.append(Reason("misquote", piece.strip(), text[:300], here[0], notes))
        found_in += here
        if complete and pieces:
            out.checked.append("quotation found in the document")
    return found_in


MIN_FRAGMENT_WORDS = 3
_PROTECTED = {"not", "no", "shall", "may", "must", "will", "can", "any", "all", "none", "nor", "or", "and"}


def _typo(claim: str, document: str) -> bool:
    """A one-letter slip between single words ("servers" for the document's "server", "part" for its
    typo "party"): a corrected typo, not a different quotation. Never digits or words that carry polarity."""
    from rapidfuzz.distance import Levenshtein

    if " " in claim or " " in document or not claim.isalpha() or not document.isalpha():
        return False
    if claim in _PROTECTED or document in _PROTECTED or min(len(claim), len(document)) < 3:
        return False
    return Levenshtein.distance(claim, document) <= 1


def _shown(diffs: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"'{a}' for '{b}'" for a, b in diffs)
