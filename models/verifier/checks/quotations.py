"""Quotations: every quotation in a claim must occur in the document.

Quotation marks also set off what is not a quotation of the document: an example ('e.g. "December 31,
2024"'), the question's words ('the question "how do you…"') and a label the answer gives ('the
"Mandatory Disclosure" exception'). An example or the question is never checked as a quotation; a short
quotation (fewer words than a clause quoted, verbatim.MIN_QUOTE_WORDS) the document does not hold is a
misquote only where the document holds it but for one word ("Separate Proposal" for its "Superior
Proposal"), and otherwise the answer's own words, not a misquote of some unrelated clause.
"""

from __future__ import annotations

import re

from models.verifier.checks import Outcome, Reason, differences
from models.verifier.checks.verbatim import MIN_QUOTE_WORDS, misquote_forgiven
from models.verifier.document import Document
from models.verifier.text import STOPWORDS, Quotation, fragments, quotations, typographic, words

QUOTE_NORMALISATIONS = ("case", "typographic quotes and dashes", "whitespace and line breaks", "punctuation")


def check_quotes(claim: str, document: Document, out: Outcome) -> list[str]:
    """Every quotation must occur in the document; returns the passages the quotations come from.
    A short piece between ellipses ("Vendor … shall not") must occur in the passage of the rest."""
    found_in: list[str] = []
    for quotation in quotations(claim, min_words=2):
        before = typographic(claim[: quotation.start])
        if _EXAMPLE.search(before[-24:]):
            out.checked.append(f"“{quotation.text.strip()}” is given as an example, not quoted")
            continue
        if _THE_QUESTION.search(before):
            out.checked.append(f"“{quotation.text.strip()}” quotes the question, not the document")
            continue
        label = len(words(quotation.text)) < MIN_QUOTE_WORDS and len(fragments(quotation.text)) == 1
        if label and document.find_words(words(quotation.text)) is None and not _nearly_held(quotation, document):
            out.checked.append(f"“{quotation.text.strip()}” is the answer's own label, not the document's words")
            continue
        pieces = fragments(quotation.text)
        notes = QUOTE_NORMALISATIONS + (("ellipses and [insertions] as gaps",) if len(pieces) > 1 else ())
        long = [p for p in pieces if len(words(p)) >= MIN_FRAGMENT_WORDS] or pieces[:1]
        brief = [p for p in pieces if p not in long]
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
        for piece in brief:
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


# What says the quotation is the question's words ("the question \"how do you…\"", "your question focuses
# on the \"no Material Adverse Effect\" representation"), earlier in its sentence.
_THE_QUESTION = re.compile(r"\b(?:question|you ask(?:ed)?)\b[^.;!?\n]*$", re.I)
# What introduces an example rather than a quotation, just before its opening mark.
_EXAMPLE = re.compile(r"\b(?:e\.\s?g\.?|for example|for instance|such as)\s*[,:]?\s*\(?\s*[\"“]?$", re.I)


def _nearly_held(quotation: Quotation, document: Document) -> bool:
    """Whether the document holds this short quotation but for one word changed, dropped or added: a
    misquote of the document's words. Of a two-word quotation one word is too little to say so, unless
    both are written as a name (capitals) and the document writes such a name with that word."""
    mine = words(quotation.text)
    patterns = []
    for i in range(len(mine)):
        patterns.append([*mine[:i], _ANY, *mine[i + 1 :]])  # one word changed
        patterns.append([*mine[:i], *mine[i + 1 :]])  # one word added
        if i:
            patterns.append([*mine[:i], _ANY, *mine[i:]])  # one of the document's words left out
    for pattern in patterns:
        kept = [w for w in pattern if w != _ANY]
        said = len(kept) >= 2 and any(w not in STOPWORDS for w in kept)
        if said and re.search(f" {' '.join(pattern)} ", document.joined):
            return True
    named = [w.strip(",.;:!?") for w in typographic(quotation.text).split()]
    if len(mine) != 2 or len(named) != 2 or not all(w[:1].isupper() for w in named):
        return False
    first, second = (re.escape(w) for w in named)
    alternatives = []  # the word kept must say something: "The Hobbit" is not "The Hollywood" misquoted
    if mine[0] not in STOPWORDS:
        alternatives.append(rf"{first}\s+[A-Z][\w\-]+")
    if mine[1] not in STOPWORDS:
        alternatives.append(rf"[A-Z][\w\-]+\s+{second}")
    name = re.compile(rf"\b(?:{'|'.join(alternatives)})\b")
    return bool(alternatives) and any(name.search(typographic(p.text)) for p in document.passages)


_ANY = "[a-z0-9]+"
