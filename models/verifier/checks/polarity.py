"""Polarity: a verb the claim negates that the passage affirms (or the reverse), a "shall" the passage
gives as "may", and the paired opposites (exclusive or not, revocable or not, with or without consent)."""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from models.verifier.checks import Outcome, Reason, differences
from models.verifier.text import STOPWORDS, canonical, stem, words

_AUX = {
    "shall": "obligation",
    "must": "obligation",
    "may": "permission",
    "can": "permission",
    "might": "permission",
    "could": "permission",
    "will": "fact",  # often a prediction ("we will share"), not an obligation
    "would": "fact",
    "is": "fact",
    "are": "fact",
    "was": "fact",
    "were": "fact",
    "does": "fact",
    "do": "fact",
    "did": "fact",
    "has": "fact",
    "have": "fact",
    "be": "fact",
    "been": "fact",
}
_NEGATORS = {"not", "never", "no", "nothing", "neither", "nor", "none"}
_FILLERS = {"also", "only", "in", "any", "event", "be", "been", "have", "at", "time", "hereby", "further", "to"}
_PRONOUNS = {"you", "your", "we", "our", "us", "they", "it", "he", "she", "itself"}
MIN_ALIGNMENT = 60.0  # below this the claim paraphrases too freely for word-level comparison
# Said of a negation flag where the claim is the passage's own words but for a negation added or dropped
# ("You may not choose to share certain information" against "You may choose to share certain
# information"): read word for word, not a paraphrase, so no model's reading of meaning overrules it.
WORD_FOR_WORD = "the passage's words, but for the negation"
MIN_LITERAL_WORDS = 5  # a shorter stretch ("may not disclose") is too common to be the same sentence


def _verbs(tokens: list[str], only_after_aux: bool) -> list[tuple[str, bool, str | None, frozenset[str]]]:
    """(stem, negated, modal class, words before it) of verbs: the word after an auxiliary (skipping
    negators and adverbs); negated when a negator stands in the four words before it ("neither party shall")."""
    found = []
    for i, tok in enumerate(tokens):
        if tok in _AUX or tok in STOPWORDS or tok in _PRONOUNS or len(tok) < 3 or tok.isdigit():
            continue
        j, modal = i - 1, None
        while j >= 0 and j >= i - 4 and (tokens[j] in _NEGATORS or tokens[j] in _FILLERS or tokens[j].endswith("ly")):
            j -= 1
        if j >= 0 and tokens[j] in _AUX:
            modal = _AUX[tokens[j]]
        elif only_after_aux:
            continue
        before = tokens[max(0, i - 4) : i]
        negated = any(t in _NEGATORS for t in before) or "other than" in " ".join(before)
        if "only" in tokens[max(0, i - 3) : i + 6]:
            continue  # "may disclose only to ..." restates a prohibition with its exception
        lead = frozenset(t for t in before if t not in _NEGATORS)
        found.append((stem(tok), negated, modal if modal != "fact" else None, lead))
    return found


def check_polarity(claim: str, window: str, pid: str, out: Outcome) -> None:
    """A verb the claim negates that the passage affirms (or the reverse), or a "shall" the passage
    gives as "may" (or the reverse); the passage's uses of the verb in the same words count first."""
    mine, theirs = words(claim), words(window)
    if fuzz.partial_ratio(" ".join(mine), " ".join(theirs)) < MIN_ALIGNMENT:
        return
    claimed = _verbs(mine, only_after_aux=True)
    present = _verbs(theirs, only_after_aux=False)
    for root in dict.fromkeys(s for s, _, _, _ in claimed):
        said = [(n, m, lead) for s, n, m, lead in claimed if s == root]
        there = [(n, m, lead) for s, n, m, lead in present if s == root]
        if not there:
            continue
        leads = frozenset().union(*(lead for _, _, lead in said))
        alike = [(n, m) for n, m, lead in there if lead & leads] or [(n, m) for n, m, _ in there]
        shown = f"{root}… ({'negated' if said[0][0] else 'affirmed'})"
        if not {n for n, _, _ in said} & {n for n, _ in alike}:
            notes = ("case",) + ((WORD_FOR_WORD,) if _but_for_negation(mine, theirs) else ())
            out.flags.append(Reason("negation", shown, window.strip(), pid, notes, differences(claim, window)))
            return
        if all(n for n, _, _ in said):
            out.checked.append(f"'{root}' has the passage's polarity")
            continue  # "may not" and "shall not" both forbid
        modals = {m for _, m, _ in said if m}
        theirs_modals = {m for _, m in alike if m}
        if modals and theirs_modals and not modals & theirs_modals:
            out.flags.append(Reason("modality", shown, window.strip(), pid, ("case",), differences(claim, window)))
            return
        out.checked.append(f"'{root}' has the passage's polarity")


def _but_for_negation(mine: list[str], theirs: list[str]) -> bool:
    """Whether the claim's words without its negators are a stretch of the passage's without theirs, while
    the claim as written is not: the passage's sentence with its negation changed."""
    bare = [w for w in mine if w not in _NEGATORS]
    if len(bare) < MIN_LITERAL_WORDS:
        return False
    passage = " " + " ".join(w for w in theirs if w not in _NEGATORS) + " "
    return f" {' '.join(bare)} " in passage and f" {' '.join(mine)} " not in f" {' '.join(theirs)} "


_OPPOSITES = (
    ("exclusivity", r"\bnonexclusiv\w*", r"\bexclusiv\w*"),
    ("revocability", r"\birrevocabl\w*", r"\brevocabl\w*"),
    ("transferability", r"\bnontransferabl\w*", r"\btransferabl\w*"),
    ("sublicensability", r"\bnonsublicensabl\w*", r"\bsublicensabl\w*"),
    ("consent", r"\bwithout\W+(?:\w+\W+){0,3}?consent", r"\b(?<!out )with\W+(?:\w+\W+){0,3}?consent"),
)


def check_opposites(claim: str, passages: list[str], window: str, pid: str, out: Outcome) -> None:
    """Exclusive/non-exclusive, revocable/irrevocable, with/without consent: the claim must use the
    side the passage uses. `passages` (canonical) are the matched passage first, then the others the
    claim may be about; the first that uses either side is the evidence. For consent, only the part
    of the passage the claim aligns with counts."""
    mine = canonical(claim)
    for check, marked, plain in _OPPOSITES:
        m_marked, m_plain = re.search(marked, mine), re.search(plain, mine)
        if not (m_marked or m_plain):
            continue
        if check == "consent":
            candidates = [canonical(window)]
        else:
            candidates = [p for p in passages if re.search(marked, p) or re.search(plain, p)][:1]
        if not candidates:
            continue
        theirs = candidates[0]
        if check == "consent" and re.search(r"\b(?:not|no)\b[^.;]{0,80}\bwithout\W", theirs):
            continue  # "shall not ... without consent" is "may ... with consent": both sides say it
        t_marked, t_plain = re.search(marked, theirs), re.search(plain, theirs)
        if m_marked and t_plain and not t_marked:
            out.flags.append(Reason(check, m_marked.group(0), t_plain.group(0), pid, ("case", "hyphens")))
        elif m_plain and not m_marked and t_marked and not t_plain:
            out.flags.append(Reason(check, m_plain.group(0), t_marked.group(0), pid, ("case", "hyphens")))
        elif t_marked and t_plain and check != "consent":
            # The passage has both: the word that follows decides ("non-exclusive license").
            said = m_marked or m_plain
            assert said is not None
            following = re.match(r"\W+(\w+)", mine[said.end() :])
            if following is None:
                continue
            nxt = re.escape(following.group(1))
            opposite = plain if m_marked else marked
            same = marked if m_marked else plain
            if re.search(opposite + rf"\W+{nxt}\b", theirs) and not re.search(same + rf"\W+{nxt}\b", theirs):
                found = re.search(opposite + rf"\W+{nxt}\b", theirs)
                assert found is not None
                out.flags.append(Reason(check, said.group(0), found.group(0), pid, ("case", "hyphens")))
            else:
                out.checked.append(f"{check} as in the passage")
        else:
            out.checked.append(f"{check} as in the passage")
