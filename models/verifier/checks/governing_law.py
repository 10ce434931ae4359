"""Governing law, read as a value (issue 65: "governing law, parties"): the jurisdiction a claim names ("the
agreement is subject to the laws of California") against the one the contract's governing-law clause chooses
("governed by and construed in accordance with the laws of the State of Nevada, without regard to its
conflict of laws principles"). Another jurisdiction is contradicted, and the reason shows the contract's; the
same one is read from the clause that chooses it; where the clauses choose several, the claim's is not
confirmed. A claim or a document that names no jurisdiction after "laws of" is left to the other readings."""

from __future__ import annotations

import re

from models.verifier.checks import Outcome, Reason
from models.verifier.document import Document

_NOT_A_PLACE = r"without|applicable|regardless|excluding|except|as|in|which|that|to|for|other|shall|govern\w*"
_WORD = r"[a-z][a-z.'’-]*"
# "the laws of the State of New York", "the Laws of England and Wales", "the law of the State of Israel"
_UNIT = r"(?:the\s+)?(?:(?:state|commonwealth|province|republic|kingdom|federal republic)\s+of\s+)?"
_PLACE = rf"({_WORD}(?:\s+(?!(?:{_NOT_A_PLACE})\b|and\s+(?!wales\b|tobago\b|herzegovina\b)){_WORD}){{0,3}})"
_LAWS_OF = re.compile(rf"\blaws?\s+(?:of|in\s+force\s+in)\s+{_UNIT}{_PLACE}")
_AND_OF = re.compile(rf"\s+and\s+of\s+{_UNIT}{_PLACE}")  # "the laws of the United States and of the State of Texas"
# "in accordance with Ohio law", "under Delaware law": a capitalised name before "law"
_NAME_LAW = re.compile(
    r"\b(?:with|under|by)\s+(?:the\s+)?(?:substantive\s+|internal\s+)?((?:[A-Z][a-z]+\s+){1,2})law\b"
)
_UNITS = ("state", "commonwealth", "province", "republic", "kingdom", "federal")
# what follows "laws of" in a conflict-of-laws proviso, or a reference back: no jurisdiction
_NO_PLACE = frozenset(
    re.findall(r"\w+", "any another other such that this said the its each all which thereof applicable governing")
) | {"federal", "local", "common"}
_CHOOSES = re.compile(r"\b(?:govern\w*|constru\w*|interpret\w*)\b")


def _places(text: str) -> list[str]:
    lowered = text.lower()
    named = [m.group(1) for m in _LAWS_OF.finditer(lowered)]
    named += [m.group(1) for m in (_AND_OF.match(lowered, at.end()) for at in _LAWS_OF.finditer(lowered)) if m]
    named += [m.group(1).lower() for m in _NAME_LAW.finditer(text)]
    places = [re.split(r"\.\s", name)[0].strip(" .,'’-") for name in named]  # "Texas. The parties"
    # a unit with its name cut off ("the laws of the State of" at a passage's end) names no jurisdiction
    return [p for p in places if p and p.split()[0] not in _NO_PLACE and p.split()[0] not in _UNITS]


def _same(claimed: str, chosen: str) -> bool:
    """ "England" is the jurisdiction of "England and Wales"; "New York" is "new york"."""
    mine, theirs = set(claimed.split()) - {"and"}, set(chosen.split()) - {"and"}
    return mine <= theirs or theirs <= mine


def check_governing_law(claim: str, document: Document, out: Outcome) -> str | None:
    """The jurisdiction the claim names (lower case), where the contract's governing-law clause chooses it, and
    recorded in `out.read`; flagged where the clauses choose another, a doubt where they choose it and another."""
    claimed = _places(claim)
    if len(claimed) != 1:
        return None
    chosen: dict[str, tuple[str, str]] = {}  # jurisdiction -> (passage, sentence)
    for passage in document.passages:
        lowered = passage.text.lower()
        if "law" not in lowered or not _CHOOSES.search(lowered):
            continue
        for sentence in re.split(r"(?<=[.;])\s+", passage.text):
            if _CHOOSES.search(sentence.lower()):
                for place in _places(sentence):
                    chosen.setdefault(place, (passage.id, sentence))
    if not chosen:
        return None
    (mine,) = claimed
    agreeing = [place for place in chosen if _same(mine, place)]
    if agreeing and len(chosen) == 1:
        pid, sentence = chosen[agreeing[0]]
        out.checked.append(f"the laws of {mine.title()} are those the contract chooses ({pid})")
        out.read.append((mine, pid, sentence))
        return mine
    shown = ", ".join(place.title() for place in chosen)
    pid = next(iter(chosen.values()))[0]
    if agreeing:
        out.doubts.append(Reason("competing_values", f"the laws of {mine}", shown, pid))
    else:
        out.flags.append(Reason("value_mismatch", f"the laws of {mine.title()}", f"the laws of {shown}", pid))
    return None
