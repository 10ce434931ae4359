"""Planted errors for the paired stress test: each function turns one data point of an answer into a
known kind of wrong, or returns None when the point offers no handle for that kind.

Written apart from the verifier's checks on purpose (its own patterns and word lists, none imported
from models.verifier): a detector that only recognised its own perturbations would measure nothing.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

TYPES = (
    "change_value",
    "misquote",
    "contradiction",
    "swap_roles",
    "exclusivity",
    "bad_citation",
    "add_claim",
    "remove_point",
)


@dataclass(frozen=True)
class Planted:
    kind: str
    answer: str  # the whole perturbed answer
    span: tuple[int, int] | None  # the wrong point in it (None: the point was removed)
    original: str  # the point before the change
    changed: str  # the point after it ("" when removed)


@dataclass(frozen=True)
class Context:
    """What a perturbation may use besides the point: the document's parties and its sections."""

    pairs: tuple[tuple[str, str], ...]  # counterpart roles as the document writes them
    sections: tuple[str, ...]  # section numbers the document has
    unrelated_section: str | None  # a section that has nothing to do with the point
    passages: int


MONTH_NAMES = [  # English: contracts and answers are in English; never the locale's
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_SPELLED = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty-five": 45,
    "sixty": 60,
    "ninety": 90,
}
_REFERENCE_BEFORE = re.compile(
    r"(?:section|sections|§|¶|article|paragraph|clause|par_|exhibit|schedule|rule)\W*$", re.I
)
_DIGITS = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.]\d)")
_QUOTE = re.compile(r"[“\"]([^”\"]{15,})[”\"]")
_AUXILIARY = re.compile(r"\b(shall|will|may|must|can|does|do|is|are|has|have)\b( not\b)?", re.I)
_EXCLUSIVE = re.compile(r"\b(non[\s\-‑–]?)?(exclusive(?:ly)?|exclusivity)\b", re.I)
_REVOCABLE = re.compile(r"\b(ir)?(revocabl[ey])\b", re.I)
_GENERIC_PAIRS = (
    ("Licensor", "Licensee"),
    ("Disclosing Party", "Receiving Party"),
    ("Buyer", "Seller"),
    ("Purchaser", "Seller"),
    ("Landlord", "Tenant"),
    ("Employer", "Employee"),
    ("Parent", "Company"),
    ("Franchisor", "Franchisee"),
)
_REPLACEMENT_WORDS = ("annual", "prior", "material", "written", "general", "regional", "limited", "separate")
_ADDED = (
    "The Agreement also requires a termination fee of $2,750,000 payable within five business days.",
    "In addition, either party may assign the Agreement to any third party without notice.",
    "The obligations in this clause expire automatically after 90 days.",
    "This provision was amended in 2019 to remove all liability caps.",
)


def document_context(document_text: str, sections: list[str], passages: int) -> tuple[tuple[str, str], ...]:
    """Counterpart roles the document uses: common pairs, "-or"/"-ee" pairs, and two parties it
    defines in its opening ("(the "Company")", "("Producer")")."""
    found = [
        (a, b)
        for a, b in _GENERIC_PAIRS
        if re.search(rf"\b{a}\b", document_text) and re.search(rf"\b{b}\b", document_text)
    ]
    for stem in set(re.findall(r"\b([A-Z][a-z]{3,})or\b", document_text)):
        if re.search(rf"\b{stem}ee\b", document_text) and (stem + "or", stem + "ee") not in found:
            found.append((stem + "or", stem + "ee"))
    defined = re.findall(r"\((?:the\s+)?[“\"]([A-Z][A-Za-z]+)[”\"]\)", document_text[:5000])
    defined = [d for d in dict.fromkeys(defined) if d not in ("Agreement", "Parties", "Party")]
    if len(defined) >= 2:
        found.append((defined[0], defined[1]))
    return tuple(found)


def plant(kind: str, answer: str, span: tuple[int, int], ctx: Context, rng: random.Random) -> Planted | None:
    """`kind` of error planted in the point `answer[span]`, or None when it has no handle for it."""
    start, end = span
    point = answer[start:end]
    if kind == "remove_point":
        cut_end = end + 1 if end < len(answer) and answer[end] in " \n" else end
        return Planted(kind, answer[:start] + answer[cut_end:], None, point, "")
    if kind == "add_claim":
        sentence = rng.choice(_ADDED)
        new = answer[:end] + " " + sentence + answer[end:]
        return Planted(kind, new, (end + 1, end + 1 + len(sentence)), point, sentence)
    changer = {
        "change_value": _change_value,
        "misquote": _misquote,
        "contradiction": _contradict,
        "swap_roles": _swap_roles,
        "exclusivity": _flip_exclusivity,
        "bad_citation": _bad_citation,
    }[kind]
    changed = changer(point, ctx, rng)
    if changed is None or changed == point:
        return None
    return Planted(kind, answer[:start] + changed + answer[end:], (start, start + len(changed)), point, changed)


def _change_value(point: str, ctx: Context, rng: random.Random) -> str | None:
    numbers = [
        m for m in _DIGITS.finditer(point) if not _REFERENCE_BEFORE.search(point[max(0, m.start() - 12) : m.start()])
    ]
    numbers = [m for m in numbers if not _is_label(point, m)]
    if numbers:
        m = rng.choice(numbers)
        raw = m.group(0).replace(",", "")
        value = float(raw)
        new_value = value + rng.choice((1, 2, 5, 10)) if value < 1900 or value > 2100 else value + rng.choice((1, -1))
        text = f"{new_value:,.{len(raw.split('.')[1]) if '.' in raw else 0}f}"
        if "," not in m.group(0):
            text = text.replace(",", "")
        before = point[: m.start()]
        spelled = re.search(r"\b[a-z\-]+\s*\($", before, re.I)  # "thirty (30)": the words go too
        if spelled and before.rstrip().endswith("(") and point[m.end() : m.end() + 1] == ")":
            return point[: spelled.start()] + text + point[m.end() + 1 :]
        return before + text + point[m.end() :]
    for word, value in _SPELLED.items():
        found = re.search(rf"\b{word}\b(?=\s*(?:\(|{_COUNTED}))", point, re.I)
        if found:
            other = rng.choice([w for w, v in _SPELLED.items() if v != value])
            return point[: found.start()] + other + point[found.end() :]
    months = [
        m
        for m in re.finditer(
            r"\b(" + "|".join(MONTH_NAMES) + r")\b(?=\s+\d)|(?<=\d )(" + "|".join(MONTH_NAMES) + r")\b", point
        )
    ]
    if months:
        m = rng.choice(months)
        other = MONTH_NAMES[(MONTH_NAMES.index(m.group(0)) + rng.randint(1, 11)) % 12]
        return point[: m.start()] + other + point[m.end() :]
    return None


_COUNTED = r"(?:business |calendar )?(?:days?|weeks?|months?|years?|percent|per cent|times|hours?|dollars)\b"


def _is_label(point: str, m: re.Match[str]) -> bool:
    """List labels and references, not values: "(2)", "1.1." at the start, "§ 9.1/9.2"."""
    before, after = point[: m.start()], point[m.end() :]
    if before.rstrip().endswith("(") and after.startswith(")") and not re.match(rf"\)\s*(?:%|{_COUNTED})", after):
        return True
    if not before.strip() or re.fullmatch(r"[\d.\s]*", before):
        return True
    return bool(re.search(r"[/§¶]\s*[\d.]*$|\d\.$", before))


def _misquote(point: str, ctx: Context, rng: random.Random) -> str | None:
    quotes = list(_QUOTE.finditer(point))
    if not quotes:
        return None
    q = rng.choice(quotes)
    inner = q.group(1)
    words = [m for m in re.finditer(r"[A-Za-z]{4,}", inner)]
    if len(words) < 2:
        return None
    w = rng.choice(words)
    how = rng.choice(("replace", "drop", "replace"))
    if how == "drop" and (w is words[0] or w is words[-1]):
        how = "replace"  # a quotation cut short at its ends is still a quotation
    if how == "drop":
        new_inner = inner[: w.start()] + inner[w.end() :].lstrip()
    else:
        replacement = rng.choice([r for r in _REPLACEMENT_WORDS if r != w.group(0).lower()])
        if w.group(0)[0].isupper():
            replacement = replacement.capitalize()
        new_inner = inner[: w.start()] + replacement + inner[w.end() :]
    return point[: q.start(1)] + new_inner + point[q.end(1) :]


def _contradict(point: str, ctx: Context, rng: random.Random) -> str | None:
    found = _AUXILIARY.search(point)
    if found is None:
        return None
    if found.group(2):  # "shall not" -> "shall"
        return point[: found.end(1)] + point[found.end(2) :]
    return point[: found.end(1)] + " not" + point[found.end(1) :]


def _swap_roles(point: str, ctx: Context, rng: random.Random) -> str | None:
    for a, b in ctx.pairs:
        has_a = re.search(rf"\b{re.escape(a)}\b", point)
        has_b = re.search(rf"\b{re.escape(b)}\b", point)
        if not (has_a or has_b):
            continue
        marker = "\x00"
        swapped = re.sub(rf"\b{re.escape(a)}\b", marker, point)
        swapped = re.sub(rf"\b{re.escape(b)}\b", a, swapped)
        return swapped.replace(marker, b)
    return None


def _flip_exclusivity(point: str, ctx: Context, rng: random.Random) -> str | None:
    found = _EXCLUSIVE.search(point) or _REVOCABLE.search(point)
    if found is None:
        return None
    if found.group(1):  # non-exclusive -> exclusive, irrevocable -> revocable
        return point[: found.start()] + found.group(2) + point[found.end() :]
    prefix = "ir" if found.re is _REVOCABLE else "non-"
    return point[: found.start()] + prefix + found.group(0) + point[found.end() :]


def _bad_citation(point: str, ctx: Context, rng: random.Random) -> str | None:
    """Cite a section the document lacks, or (when there is one) a section about something else."""
    top = max([int(s.split(".")[0]) for s in ctx.sections if s.split(".")[0].isdigit()] or [0])
    missing = f"Section {top + 40}.{rng.randint(1, 9)}"
    if not ctx.sections:
        missing = f"¶ {ctx.passages + 40 + rng.randint(1, 9)}"
    target = ctx.unrelated_section if ctx.unrelated_section and rng.random() < 0.5 else missing
    existing = re.search(r"(Section|§|¶|Article|Clause)\s*[\dIVX][\w.]*(?:\([\w]{1,4}\))*", point)
    if existing:
        return point[: existing.start()] + target + point[existing.end() :]
    body = point.rstrip()
    tail = body[-1] if body and body[-1] in ".;:" else ""
    return body[: len(body) - len(tail)] + f" ({target})" + tail + point[len(body) :]
