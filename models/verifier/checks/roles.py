"""Roles: a party where the passage names its counterpart ("the Licensor Site" where the passage has
"the Licensee Site"), in the same words around it or as a substitution in the aligned wording."""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

from models.verifier.checks import Outcome, Reason, differences
from models.verifier.text import STOPWORDS, canonical


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
