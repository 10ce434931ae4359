"""Find the citations an answer writes (``[par_14]``, ``¶ 14``, ``Section 6.3``, ``(6.3)``, ``§ 6.3``,
``Article IV``, a transcript's ``Tr. 4:12-15``) and resolve them to passages of the answer's document."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from storage.documents import Passage

_SUBS = r"(?:\([A-Za-z0-9]{1,5}\))*"
_NUM = rf"\d{{1,3}}(?:\.\d{{1,3}})*(?<!\.){_SUBS}"
_ROMAN = r"[IVXLC]{1,7}\b"
_SPACE = r"[\s\u00a0]*"
_PAGE_LINE = r"\d{1,4}:\d{1,2}(?:[-–]\d{1,4}(?::\d{1,2})?)?"
CITATION = re.compile(
    rf"\[(?P<par>par_\d+)\]"
    rf"|\bTr\.?{_SPACE}(?:at{_SPACE})?(?P<transcript>{_PAGE_LINE})\b"
    rf"|¶+{_SPACE}(?P<pilcrow>{_NUM})"
    rf"|§+{_SPACE}(?P<sign>{_NUM})"
    rf"|\b(?:Sections?|Clauses?|Paragraphs?){_SPACE}(?P<section>{_NUM})"
    rf"|\bArticles?{_SPACE}(?P<article>{_ROMAN}|\d{{1,3}}\b)"
    rf"|\((?P<bare>\d{{1,3}}(?:\.\d{{1,3}})+{_SUBS})\)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Citation:
    """One citation written in an answer, and the passages it names (none when unresolved)."""

    written: str  # as it appears in the answer
    start: int
    end: int
    target: str  # par_14, 6.01(a), IV
    passages: tuple[str, ...]  # citation ids, in document order

    @property
    def resolved(self) -> bool:
        return bool(self.passages)


def find_citations(answer: str, passages: list[Passage]) -> list[Citation]:
    index = CitationIndex(passages)
    found = []
    for match in CITATION.finditer(answer):
        kind = next(name for name, value in match.groupdict().items() if value)
        target = match.group(kind)
        found.append(Citation(match.group(0), match.start(), match.end(), target, index.resolve(kind, target)))
    return found


def _section_key(section: str) -> tuple[tuple[int, ...] | str, tuple[str, ...]]:
    """'6.01(a)(i)' -> ((6, 1), ('a', 'i')): 6.01 and 6.1 are the same section."""
    base, _, rest = section.partition("(")
    subs = tuple(s.lower() for s in re.findall(r"\(([^)]+)\)", "(" + rest)) if rest else ()
    base = base.strip().rstrip(".")
    number: tuple[int, ...] | str = (
        tuple(int(p) for p in base.split(".")) if re.fullmatch(r"[\d.]+", base) else base.upper()
    )
    return number, subs


class CitationIndex:
    """A document's passages by citation id, section and article."""

    def __init__(self, passages: list[Passage]) -> None:
        self.by_id = {p.citation_id: p for p in passages}
        self.by_section: dict[tuple[tuple[int, ...] | str, tuple[str, ...]], list[str]] = defaultdict(list)
        self.by_article: dict[str, list[str]] = defaultdict(list)
        self.by_lines: list[tuple[tuple[int, int], tuple[int, int], str]] = []
        for p in passages:
            if p.section and (lines := page_lines(p.section)):
                self.by_lines.append((*lines, p.citation_id))
            elif p.section:
                self.by_section[_section_key(p.section)].append(p.citation_id)
            if p.article:
                self.by_article[_arabic_to_roman(p.article)].append(p.citation_id)

    def resolve(self, kind: str, target: str) -> tuple[str, ...]:
        if kind == "par":
            return (target,) if target in self.by_id else ()
        if kind == "transcript":
            wanted = page_lines(target)
            if wanted is None:
                return ()
            return tuple(c for first, last, c in self.by_lines if first <= wanted[1] and wanted[0] <= last)
        if kind == "article" and (found := self.by_article.get(_arabic_to_roman(target))):
            return tuple(found)
        number, subs = _section_key(target)
        # The most specific clause the document has: 6.01(a)(i), else 6.01(a), else 6.01.
        for depth in range(len(subs), -1, -1):
            found = self.by_section.get((number, subs[:depth]))
            if found:
                return tuple(found)
        # A section without its own passages: the passages of its sub-clauses (6.01 -> 6.01(a)…).
        nested = [ids for (n, s), ids in self.by_section.items() if n == number and s]
        if nested:
            return tuple(sorted({i for ids in nested for i in ids}, key=lambda c: int(c.removeprefix("par_"))))
        # "¶ 14" in a document without numbered sections is its 14th paragraph.
        if kind == "pilcrow" and target.isdigit() and f"par_{target}" in self.by_id:
            return (f"par_{target}",)
        return ()

    def resolve_whole(self, kind: str, target: str) -> tuple[str, ...]:
        """The cited section with every clause under it ("Section 2.03" is 2.03 and 2.03(a)…, "Section 11"
        is 11 and 11.1…), for checking what a citation is about; other citations as `resolve`."""
        found = self.resolve(kind, target)
        if kind not in ("section", "sign", "pilcrow", "bare") or not found:
            return found
        number, subs = _section_key(target)
        if not isinstance(number, tuple):
            return found
        under = {
            c
            for (n, s), ids in self.by_section.items()
            if isinstance(n, tuple)
            and ((n == number and s[: len(subs)] == subs) or (not subs and n[: len(number)] == number))
            for c in ids
        }
        order = {c: i for i, c in enumerate(self.by_id)}
        return tuple(sorted(under | set(found), key=order.__getitem__))


def page_lines(cite: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """'4:12-15' -> ((4, 12), (4, 15)); '4:24-5:3' -> ((4, 24), (5, 3)); None for a section number."""
    found = re.fullmatch(r"(\d+):(\d+)(?:[-–](\d+)(?::(\d+))?)?", cite.strip())
    if not found:
        return None
    page, line, to, to_line = found.groups()
    first = (int(page), int(line))
    if to is None:
        return first, first
    return first, ((int(to), int(to_line)) if to_line else (int(page), int(to)))


def _arabic_to_roman(target: str) -> str:
    if not target.isdigit():
        return target.upper()
    value, out = int(target), ""
    for arabic, roman in (
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ):
        while value >= arabic:
            out, value = out + roman, value - arabic
    return out
