"""The checks: each compares one kind of thing a claim says with the passage it is about, and returns
the reasons for a flag (empty when the claim passed) plus whether it could check anything at all."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz

from models.verifier.document import CitedRef, Document, aligned
from models.verifier.text import STOPWORDS, canonical, content_words, fragments, quotations, typographic, words
from models.verifier.values import Value, read_values


@dataclass(frozen=True)
class Reason:
    check: str  # misquote | value_mismatch | negation | modality | exclusivity | ... | exception
    claim: str  # what the claim says
    document: str  # what the document says instead
    passage: str | None  # citation id of the evidence passage
    normalisations: tuple[str, ...] = ()
    differences: tuple[tuple[str, str], ...] = ()  # (claim words, document words) that differ

    def as_dict(self) -> dict[str, object]:
        return {
            "check": self.check,
            "claim": self.claim,
            "document": self.document,
            "passage": self.passage,
            "normalisations": list(self.normalisations),
            "differences": [list(d) for d in self.differences],
        }


@dataclass
class Outcome:
    flags: list[Reason] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what was compared and found to agree


def differences(claim: str, document: str) -> tuple[tuple[str, str], ...]:
    a, b = words(claim), words(document)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return tuple((" ".join(a[i1:i2]), " ".join(b[j1:j2])) for op, i1, i2, j1, j2 in ops if op != "equal")


# ------------------------------------------------------------------ quotations

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


# ------------------------------------------------------------------ values


def _agrees(value: Value, other: Value) -> bool:
    if value.kind != other.kind:
        return False
    if value.amount == other.amount:
        return True
    if value.kind == "date":  # "December 31" agrees with "December 31, 2014"
        a, b = sorted((value.amount, other.amount), key=len)
        return (a.startswith("--") and b.endswith(a[1:])) or (len(a) == 7 and b.startswith(a))
    return False


def _comparable(value: Value, other: Value) -> bool:
    if value.kind != other.kind:
        return False
    if value.kind != "number":
        return True
    mine, theirs = value.context.split("|"), other.context.split("|")
    return any(a and a == b for a, b in zip(mine, theirs, strict=True))


def check_values(claim: str, passages: list[str], document: Document, out: Outcome) -> None:
    """A value in the claim must be among the same kind of values in the matched passages."""
    reading = read_values(claim)
    if not reading.values:
        return
    theirs: list[tuple[str, Value, tuple[str, ...]]] = []
    for pid in passages:
        r = document.values(pid)
        theirs += [(pid, v, tuple(r.normalisations)) for v in r.values]
    agreeing = [v for v in reading.values if any(_agrees(v, t) for _, t, _ in theirs)]
    for value in reading.values:
        if value in agreeing:
            out.checked.append(f"{value.surface} agrees with the document")
            continue
        rivals = [(pid, v, notes) for pid, v, notes in theirs if _comparable(value, v)]
        if not rivals and agreeing and value.kind == "number":
            # The claim's other values are this passage's (a table row): its numbers are the rivals.
            rivals = [(pid, v, notes) for pid, v, notes in theirs if v.kind == "number"]
        if not rivals:
            continue  # nothing to compare it with: unchecked, never called verified
        pid = rivals[0][0]
        notes = tuple(dict.fromkeys(reading.normalisations + [n for _, _, ns in rivals for n in ns]))
        shown = ", ".join(dict.fromkeys(v.surface for _, v, _ in rivals))
        out.flags.append(Reason("value_mismatch", value.surface, shown, pid, notes))


# ------------------------------------------------------------------ polarity and modality

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


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "e", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


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
        found.append((_stem(tok), negated, modal if modal != "fact" else None, lead))
    return found


def check_polarity(claim: str, window: str, pid: str, out: Outcome) -> None:
    """A verb the claim negates that the passage affirms (or the reverse), or a "shall" the passage
    gives as "may" (or the reverse); the passage's uses of the verb in the same words count first."""
    mine, theirs = words(claim), words(window)
    if fuzz.partial_ratio(" ".join(mine), " ".join(theirs)) < MIN_ALIGNMENT:
        return
    claimed = _verbs(mine, only_after_aux=True)
    present = _verbs(theirs, only_after_aux=False)
    for stem in dict.fromkeys(s for s, _, _, _ in claimed):
        said = [(n, m, lead) for s, n, m, lead in claimed if s == stem]
        there = [(n, m, lead) for s, n, m, lead in present if s == stem]
        if not there:
            continue
        leads = frozenset().union(*(lead for _, _, lead in said))
        alike = [(n, m) for n, m, lead in there if lead & leads] or [(n, m) for n, m, _ in there]
        shown = f"{stem}… ({'negated' if said[0][0] else 'affirmed'})"
        if not {n for n, _, _ in said} & {n for n, _ in alike}:
            out.flags.append(Reason("negation", shown, window.strip(), pid, ("case",), differences(claim, window)))
            return
        if all(n for n, _, _ in said):
            out.checked.append(f"'{stem}' has the passage's polarity")
            continue  # "may not" and "shall not" both forbid
        modals = {m for _, m, _ in said if m}
        theirs_modals = {m for _, m in alike if m}
        if modals and theirs_modals and not modals & theirs_modals:
            out.flags.append(Reason("modality", shown, window.strip(), pid, ("case",), differences(claim, window)))
            return
        out.checked.append(f"'{stem}' has the passage's polarity")


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


# ------------------------------------------------------------------ roles


@lru_cache(maxsize=64)
def _role_pattern(phrases: frozenset[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(p) for p in sorted(phrases, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b")


def _role_tokens(text: str, roles: dict[str, str]) -> list[str]:
    """Canonical words, each party phrase one token ("role_disclosing_party")."""
    text = _role_pattern(frozenset(roles)).sub(lambda m: "role_" + m.group(0).replace(" ", "_"), canonical(text))
    return re.findall(r"[a-z0-9_]+", text)


_SKIP_AFTER = {"s", "shall", "must", "will", "may", "can", "does", "is", "are", "has", "have", "not", "also", "hereby"}
_SKIP_AFTER |= {"and", "or"}  # "Parent and Merger Sub"
_SKIP_BEFORE = {"the", "a", "an", "of"}


def _neighbours(tokens: list[str], i: int) -> set[str]:
    """The words that tie a party to what the sentence says of it, marked by side: the word after it
    past a possessive or auxiliaries ("Licensee['s] Site", "the Company [shall] enter") and the word
    before it past articles and "of" ("officers of the Company")."""
    out = set()
    j = i + 1
    while j < len(tokens) and (tokens[j] in _SKIP_AFTER or tokens[j].endswith("ly")):
        j += 1
    if j < len(tokens) and tokens[j] not in STOPWORDS and not tokens[j].startswith("role_"):
        out.add("+" + tokens[j])
    j = i - 1
    while j >= 0 and tokens[j] in _SKIP_BEFORE:
        j -= 1
    if j >= 0 and tokens[j] not in STOPWORDS and not tokens[j].startswith("role_"):
        out.add("-" + tokens[j])
    return out


def role_contexts(text: str, roles: dict[str, str]) -> dict[tuple[str, str], int]:
    """How often each party stands beside each word in a text (see `_neighbours`)."""
    tokens = _role_tokens(text, roles)
    counts: dict[tuple[str, str], int] = {}
    for i, token in enumerate(tokens):
        if token.startswith("role_"):
            for n in _neighbours(tokens, i):
                counts[token, n] = counts.get((token, n), 0) + 1
    return counts


def check_roles(
    claim: str,
    window: str,
    passage: str,
    pid: str,
    roles: dict[str, str],
    out: Outcome,
    contexts: dict[tuple[str, str], int] | None = None,
    names: dict[str, str] | None = None,
) -> None:
    """A party where the passage names its counterpart: in the same words around it ("the Licensor
    Site" where the passage has "the Licensee Site"), or as a substitution in the aligned wording."""
    if not roles:
        return
    a = _role_tokens(claim, roles)
    if not any(t.startswith("role_") for t in a):
        return
    theirs = _role_tokens(passage, roles)
    for i, token in enumerate(a):
        if not token.startswith("role_"):
            continue
        name = token[5:].replace("_", " ")
        counterpart = "role_" + roles[name].replace(" ", "_")
        near = " " + " ".join(a[max(0, i - 8) : i + 9]) + " "
        named = {role for key, role in (names or {}).items() if f" {key} " in near}
        if roles[name] in named and name not in named:
            party = next(k for k, r in (names or {}).items() if r == roles[name] and f" {k} " in near)
            shown = f"the document defines {party} as the {roles[name]}"
            out.flags.append(Reason("swapped_roles", name, shown, pid, ("case",)))
            return
        around = _neighbours(a, i)
        same = [k for k, t in enumerate(theirs) if t == token and _neighbours(theirs, k) & around]
        other = [k for k, t in enumerate(theirs) if t == counterpart and _neighbours(theirs, k) & around]
        if other and not same:
            k = other[0]
            shown = " ".join(theirs[max(0, k - 3) : k + 4]).replace("role_", "").replace("_", " ")
            out.flags.append(Reason("swapped_roles", name, shown, pid, ("case",), differences(claim, window)))
            return
        if not other and not same and contexts and around:
            # Nothing beside it in the passage: how the whole document uses these words instead.
            theirs_n = sum(contexts.get((counterpart, n), 0) for n in around)
            mine_n = sum(contexts.get((token, n), 0) for n in around)
            if theirs_n >= 2 and mine_n == 0:
                words_ = ", ".join(n[1:] for n in sorted(around))
                shown = f"the document puts '{words_}' with the {roles[name]}, never with the {name}"
                out.flags.append(Reason("swapped_roles", name, shown, pid, ("case",)))
                return
    b = _role_tokens(window, roles)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for k, (op, i1, i2, j1, j2) in enumerate(ops):
        if op != "replace" or i2 - i1 > 2 or j2 - j1 > 2:
            continue
        context = [o for o in ops[max(0, k - 1) : k] + ops[k + 1 : k + 2] if o[0] == "equal" and o[2] - o[1] >= 2]
        if not context:
            continue  # a substitution inside a paraphrase, not a swap in the passage's own words
        mine = [t for t in a[i1:i2] if t.startswith("role_")]
        swapped = [t for t in b[j1:j2] if t.startswith("role_")]
        for role in mine:
            name = role[5:].replace("_", " ")
            if "role_" + roles[name].replace(" ", "_") in swapped and role not in swapped:
                out.flags.append(Reason("swapped_roles", name, roles[name], pid, ("case",), differences(claim, window)))
                return
    out.checked.append("parties in the passage's roles")


# ------------------------------------------------------------------ citations


def check_citations(
    claim: str, cited: list[CitedRef], best: tuple[str, float] | None, document: Document, out: Outcome
) -> None:
    """A citation must name a passage of the document, and one that shares something with the claim."""
    mine = content_words(without_citations(claim, cited))
    quoted = [(q.start, q.end) for q in quotations(claim, min_words=1)]

    for c in cited:
        if any(s <= c.start and c.end <= e for s, e in quoted):
            continue  # inside a quotation: the document's own words, checked as such
        if c.passages and _misnamed(claim, c, document, out):
            continue
        if c.passages and _quoted_elsewhere(claim, c, document, out):
            continue
        own_words = words(c.written)
        if not c.passages and len(own_words) > 1 and document.find_words(own_words):
            continue  # "paragraph 18 of this Agreement": the document's own cross-reference, repeated
        if not c.passages:
            out.flags.append(Reason("bad_citation", c.written, "the document has no such section or paragraph", None))
            continue
        known = [pid for pid in c.passages if document.content.get(pid)]  # not a "______" rule
        if len(mine) < 2 or not known or best is None or best[0] in c.passages:
            continue
        shared = max(len(mine & document.content[pid]) / len(mine) for pid in known)
        target = re.escape(re.sub(r"^\D*", "", typographic(c.written)).split("(")[0])
        mentioned = re.search(
            rf"(?:section|clause|paragraph|article|§)\s*{target}(?![\d]|\.\d)", document.by_id[best[0]].text, re.I
        )
        # ALCE's citation precision without a model: the cited passage must not be beaten by far.
        unrelated = shared == 0 if len(mine) < 4 else (shared < 0.25 and best[1] >= 0.4)
        unrelated = unrelated or (len(mine) >= 4 and shared < 0.5 * best[1] and best[1] >= 0.6)
        if unrelated and not mentioned:
            text = document.by_id[c.passages[0]].text[:300]
            out.flags.append(Reason("bad_citation", c.written, text, c.passages[0], ("case",)))
        else:
            out.checked.append(f"{c.written} resolves to a related passage")


# A title the answer gives the cited section: "Section 11 (License Grant)", "Section 3.05 (“Covenants”)",
# "Section 11.14 is titled “Specific Performance”".
_TITLE_AFTER = re.compile(
    r'\s*(?:\(\s*["“]([^"”]{3,60})["”]\s*\)'
    r"|\(([A-Z][\w\-]*(?: (?:[A-Z][\w\-]*|of|and|or|the|to|for|in))*)\)"
    r'|,?\s+(?:is|was)\s+(?:titled|entitled|headed|captioned)\s+["“]([^"”]{3,60})["”])'
)
_HEADING = re.compile(
    r"^\s*(?:(?:section|article|clause|§)\s*)?(?:[\dIVX]+(?:\.\d+)*\.?|\([a-z0-9]{1,4}\))\s+([^.;:]{3,80})\.", re.I
)


def _headings(c: CitedRef, document: Document) -> list[str]:
    """The captions of the cited section and of its clauses ("Section 10.01. Termination." -> "Termination")."""
    found = [_HEADING.match(document.by_id[pid].text) for pid in c.passages if pid in document.by_id]
    return [m.group(1) for m in found if m and len(m.group(1).split()) <= 8]


def _misnamed(claim: str, c: CitedRef, document: Document, out: Outcome) -> bool:
    """A title written with the citation that none of the cited section's captions shares a word with."""
    title = _TITLE_AFTER.match(claim, c.end)
    if title is None:
        return False
    written = next(g for g in title.groups() if g)
    headings = _headings(c, document)
    theirs = {_stem(w) for h in headings for w in content_words(h)}
    mine = {_stem(w) for w in content_words(written)}
    if not headings or not mine or mine & theirs:
        return False
    shown = "; ".join(dict.fromkeys(headings))[:200]
    out.flags.append(
        Reason("bad_citation", f"{c.written} ({written})", f"the cited section is headed: {shown}", c.passages[0])
    )
    return True


def _quoted_elsewhere(claim: str, c: CitedRef, document: Document, out: Outcome) -> bool:
    """A quotation the claim attributes to the cited section that the document has, but somewhere else."""
    texts = [document.by_id[pid].text for pid in c.passages if pid in document.by_id]
    inside = " " + " ".join(w for text in texts for w in words(text)) + " "
    title = _TITLE_AFTER.match(claim, c.end)
    for quotation in quotations(claim, min_words=5):
        if title and quotation.start < title.end() and title.start() < quotation.end:
            continue  # the section's title, not a quotation from it
        pieces = [p for p in fragments(quotation.text) if len(words(p)) >= 5]
        for piece in pieces:
            wanted = " " + " ".join(words(piece)) + " "
            where = document.find_words(words(piece))
            if where is None or wanted in inside:
                continue
            out.flags.append(
                Reason(
                    "bad_citation",
                    c.written,
                    f"the quotation is in {where}, not in the cited section",
                    where,
                    ("case", "whitespace and line breaks"),
                )
            )
            return True
    return False


def without_citations(claim: str, cited: list[CitedRef]) -> str:
    """The claim with the citations it writes blanked out (a section number is not a value)."""
    for c in sorted(cited, key=lambda c: -c.start):
        claim = claim[: c.start] + " " * (c.end - c.start) + claim[c.end :]
    return claim


_EXCEPTION = re.compile(r"\b(except|unless|notwithstanding|subject to|provided that|provided, however)\b", re.I)


def exception_in(passage: str, claim: str) -> str | None:
    """An exception the passage makes that the claim does not mention."""
    found = _EXCEPTION.search(passage)
    if found and not _EXCEPTION.search(claim):
        return found.group(0)
    return None


__all__ = ["Reason", "aligned"]
