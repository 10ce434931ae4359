"""The contract as a lawyer reads it: the terms it defines, the references it makes to its own
sections, exhibits and schedules, and the parties it names.

Pure text work on a document's passages (no Qt, no database), so the CLI, the window and the tests
read the same thing. References are resolved with the citation resolver answers use
(`CitationIndex`), so "Section 7.3(a)" in a contract and in an answer lead to the same passages;
what the document does not have is left unresolved, never guessed.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from app.ingest.citations import CitationIndex, _section_key
from app.ingest.documents import ParsedDocument
from models.verifier.document import Document, Source
from models.vocabulary import PassageKind
from storage.documents import Passage, document_id_by_name, passages_of

if TYPE_CHECKING:
    from app.project import Project

_OPEN, _CLOSE = '"“”', '"”“'  # documents mix straight and curly quotes, even in one pair
_QUOTED = rf"[{_OPEN}](?P<term>[^{_OPEN}\n]{{1,80}}?)[{_CLOSE}]"
# "X" means / shall mean / has the meaning …, the term "X" includes, and a definitions list's "X": …
_MEANS = re.compile(
    rf"{_QUOTED}\s*(?::|(?:,\s*)?(?:(?:shall|will)\s+)?(?:means?|mean:|has\s+the\s+meanings?|have\s+the\s+meanings?"
    rf"|shall\s+have\s+the\s+meanings?|includes?|refers?\s+to|is\s+defined)\b)"
)
# The terms "A", "B", and "C" shall have the meaning …
_TERMS_LIST = re.compile(
    rf"\bterms\s+((?:[{_OPEN}][^{_OPEN}\n]{{1,80}}?[{_CLOSE}][\s,]*(?:and\s+|or\s+)?)+)"
    r"(?:shall\s+|will\s+)?(?:have|has)\s+the\s+meanings?",
)
_REFERRED = re.compile(
    rf"\b(?:referred\s+to|known)\s+(?:herein\s+|hereinafter\s+)?as\s+(?:the\s+|a\s+|an\s+)?{_QUOTED}"
)
_PAREN = re.compile(r"\(([^()]{1,300})\)")
_IN_PAREN = re.compile(rf"[{_OPEN}]([^{_OPEN}\n]{{1,80}}?)[{_CLOSE}]")
# What may surround the quoted names in a defining parenthetical: (each, a "Party"), (hereinafter the "Buyer").
_GLUE = re.compile(
    r"^(?:[\s,;]|the|a|an|each|and|or|collectively|together|individually|jointly|severally|respectively"
    r"|this|hereinafter|herein|referred|to|as|also|sometimes|called|with|any|such)*$",
    re.IGNORECASE,
)
_UNQUOTED_ROLE = re.compile(r"\(((?:the\s+)?[A-Za-z]+\s+[Pp]arty)\)")  # (disclosing party)
_AS_USED = re.compile(
    r"\bAs\s+used\s+(?:in\s+this\s+Agreement|herein)[^,.]{0,40},\s+(?:the\s+terms?\s+)?(?P<term>[A-Za-z][\w\- ]{1,40}?)"
    r"\s+(?:shall\s+mean|means|includes)\b"
)
_HEAD_MEANS = re.compile(r"^(?P<term>(?:[A-Z][\w\-’']*\s){0,5}[A-Z][\w\-’']*)\s+(?:means|shall\s+mean)\b")
_NOT_TERM_START = {"This", "The", "That", "Such", "Each", "Any", "It", "Which", "Who", "Nothing", "No"}
_ABBREVIATIONS = {"inc", "corp", "co", "ltd", "no", "nos", "u.s", "n.a", "l.p", "llc", "e.g", "i.e", "st", "mr", "ms"}
_SENTENCE_END = re.compile(r"[.!?](?=\s+[\"“(A-Z0-9]|\s*$)")


@dataclass(frozen=True)
class DefinedTerm:
    """A term the contract defines: where, and the sentence or clause that defines it."""

    term: str
    passage: str  # citation id
    definition: str


@dataclass(frozen=True)
class Reference:
    """A reference the contract makes to itself ("Section 7.3(a)", "Exhibit B", "this Section")."""

    text: str  # as written; in a list the first carries the word ("Sections 4.1"), the rest their number
    passage: str
    start: int  # offsets in the passage's text
    end: int
    kind: str  # section, article, clause, paragraph, exhibit, schedule, annex
    target: str  # "7.3(a)", "IV", "B", or "this" for a reference to where it stands
    passages: tuple[str, ...] | None  # what it resolves to; None when the document has no such part


@dataclass(frozen=True)
class Party:
    """A party to the contract: its name as written, the short names it is defined by, and its role."""

    name: str
    short_names: tuple[str, ...]
    role: str | None  # "Disclosing Party", "receiving party", "Producer" …
    passage: str
    signs: bool  # its name appears in a signature block
    blank: bool = False  # no name: the contract leaves a blank for it ("… by and between, …, and (“Vendor”)")


@dataclass(frozen=True)
class ContractReading:
    """A contract as a lawyer reads it: its defined terms, its references to itself, its parties."""

    terms: tuple[DefinedTerm, ...]
    references: tuple[Reference, ...]
    parties: tuple[Party, ...]

    @cached_property
    def _term_pattern(self) -> re.Pattern[str] | None:
        if not self.terms:
            return None
        words = sorted({t.term for t in self.terms if t.term.casefold() not in _UNMARKED}, key=len, reverse=True)
        if not words:
            return None
        return re.compile(rf"(?<![\w-])(?:{'|'.join(map(re.escape, words))})(?:s|’s|'s)?(?![\w-])")

    def terms_used(self, text: str) -> list[tuple[int, int, DefinedTerm]]:
        """Where the text uses a defined term, as written (case and all; a plural or possessive
        counts), longest term first; the term's own quoted name where it is defined is left out."""
        if self._term_pattern is None:
            return []
        by_term = {t.term: t for t in self.terms}
        found = []
        for m in self._term_pattern.finditer(text):
            if m.start() and text[m.start() - 1] in _OPEN:
                continue
            word = m.group(0)
            term = by_term.get(word) or by_term.get(word.removesuffix("s")) or by_term.get(word[:-2])
            if term is not None:
                found.append((m.start(), m.end(), term))
        return found


_UNMARKED = {"agreement", "this agreement"}  # the contract's name for itself: on every other line, known to all

_READINGS: dict[str, ContractReading] = {}  # by the passages' digest: a document read once per process
_READINGS_KEPT = 32


def read_contract(passages: Sequence[Passage]) -> ContractReading:
    """The terms, references and parties of these passages, remembered by their text: a long merger
    agreement takes a second to read, and the window shows the same document answer after answer."""
    digest = hashlib.blake2b(digest_size=16)
    for p in passages:
        digest.update(f"{p.citation_id}\x00{p.section}\x00{p.text}\x01".encode())
    key = digest.hexdigest()
    if key not in _READINGS:
        if len(_READINGS) >= _READINGS_KEPT:
            _READINGS.pop(next(iter(_READINGS)))
        terms = defined_terms(passages)
        _READINGS[key] = ContractReading(
            tuple(terms), tuple(cross_references(passages)), tuple(parties(passages, terms))
        )
    return _READINGS[key]


def contract_reading(project: Project, document: int | str) -> ContractReading:
    """The reading of a stored document (by id, or by the name the user typed), from the passages
    stored at import, so its citation ids are the ones answers cite."""
    name = project.document_named(document) if isinstance(document, str) else None
    with project.sessions() as session:
        document_id = document_id_by_name(session, name) if name is not None else document
        assert isinstance(document_id, int)  # document_named found it
        passages = passages_of(session, document_id)
    return read_contract(passages)


def as_passages(document: ParsedDocument) -> list[Passage]:
    """A freshly parsed document's passages in the form the project stores them."""
    return [
        Passage(
            id=i,
            document_id=0,
            citation_id=p.citation_id,
            kind=p.kind,
            article=p.article,
            section=p.section,
            heading_path=p.heading_path,
            text=p.text,
            page=p.page,
            char_start=p.char_start,
            char_end=p.char_end,
            footnote_label=p.footnote_label,
            refers_to_id=None,
            ocr_confidence=p.ocr_confidence,
        )
        for i, p in enumerate(document.passages)
    ]


# ---------------------------------------------------------------- defined terms


def defined_terms(passages: Sequence[Passage]) -> list[DefinedTerm]:
    """Every term defined in the contract, once, at its first definition, in document order."""
    found: dict[str, DefinedTerm] = {}

    def add(term: str, passage: Passage, start: int, end: int) -> None:
        term = " ".join(term.split()).strip(" .,;:")
        if term and term[0].isalnum() and term.casefold() not in found:
            found[term.casefold()] = DefinedTerm(term, passage.citation_id, _sentence(passage.text, start, end))

    for p in passages:
        text = p.text
        if p.kind is PassageKind.TOC:
            continue
        hits: list[tuple[int, str, int, int]] = []
        if any(q in text for q in _OPEN):
            for m in _MEANS.finditer(text):
                hits.append((m.start(), m.group("term"), m.start(), m.end()))
            for m in _TERMS_LIST.finditer(text):
                for q in _IN_PAREN.finditer(m.group(1)):
                    hits.append((m.start(1) + q.start(), q.group(1), m.start(), m.end()))
            for m in _REFERRED.finditer(text):
                hits.append((m.start("term"), m.group("term"), m.start(), m.end()))
            for m in _PAREN.finditer(text):
                inside = m.group(1)
                quoted = list(_IN_PAREN.finditer(inside))
                if quoted and _GLUE.match(_IN_PAREN.sub(" ", inside)):
                    hits.extend((m.start(1) + q.start(), q.group(1), m.start(), m.end()) for q in quoted)
        if "arty)" in text:
            for m in _UNQUOTED_ROLE.finditer(text[:400]):
                hits.append((m.start(1), m.group(1).removeprefix("the ").strip(), m.start(), m.end()))
        for m in _AS_USED.finditer(text):
            hits.append((m.start("term"), m.group("term"), m.start(), m.end()))
        if (head := _HEAD_MEANS.match(text)) and head.group("term").split()[0] not in _NOT_TERM_START:
            hits.append((0, head.group("term"), 0, head.end()))
        for _, term, start, end in sorted(hits):
            add(term, p, start, end)
    return list(found.values())


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence around text[start:end] ("Inc." and "U.S." do not end one)."""
    begin = 0
    for m in _SENTENCE_END.finditer(text):
        if _abbreviation(text, m.start()):
            continue
        if m.end() <= start:
            begin = m.end()
        elif m.start() >= end - 1:
            return text[begin : m.end()].strip()
    return text[begin:].strip()


def _abbreviation(text: str, dot: int) -> bool:
    word = re.search(r"([A-Za-z.]+)$", text[max(0, dot - 8) : dot])
    return word is not None and (word.group(1).lower() in _ABBREVIATIONS or len(word.group(1)) == 1)


# ---------------------------------------------------------------- cross-references

_KINDS = {
    "section": "section", "sections": "section", "subsection": "section", "subsections": "section",
    "§": "section", "§§": "section", "article": "article", "articles": "article", "clause": "clause",
    "clauses": "clause", "sub-clause": "clause", "subclause": "clause", "paragraph": "paragraph",
    "paragraphs": "paragraph", "exhibit": "exhibit", "exhibits": "exhibit", "schedule": "schedule",
    "schedules": "schedule", "annex": "annex", "annexes": "annex", "appendix": "annex",
}  # fmt: skip
_WORD = (
    r"(?P<word>(?i:sections?|subsections?|articles?|clauses?|sub-?clause|paragraphs?|exhibits?|schedules?"
    r"|annex(?:es)?|appendix)|§§?)"
)
_SUBS = r"(?:\([A-Za-z0-9]{1,5}\))"
_TARGET = (
    rf"(?:\d{{1,3}}(?:\.\d{{1,3}})*(?![\w-]){_SUBS}*|{_SUBS}+|[IVXL]{{1,6}}\b|[A-Z](?:-\d{{1,2}})?\b|\d[A-Z]-\d\b)"
)
_JOIN = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|and/or|through|to)\s+)"
_REFERENCE = re.compile(rf"(?<![\w-]){_WORD}[\s\u00a0]*(?P<first>{_TARGET})(?P<rest>(?:{_JOIN}{_TARGET})*)")
_ONE_TARGET = re.compile(rf"{_JOIN}(?P<target>{_TARGET})")
_THIS = re.compile(
    r"\bthis\s+(?P<word>(?i:Section|Subsection|Article|sub-?clause|clause|paragraph))\b(?![\s\u00a0]*[\d(§])"
)
# "Section 409A of the Code", "Section 4.04 of the Company Disclosure Letter": another instrument's part.
_ELSEWHERE = re.compile(r"\s+(?:of|in|under)\s+(?:the\s+|that\s+certain\s+)?(?!this\b|Agreement\b|hereof\b)[A-Z]")
_STATUTE = re.compile(r"(?:C\.F\.R\.|U\.S\.C\.|Regulations?|regulations?|Code|Act)[\s\u00a0]*$")
_HEADING_TITLE = re.compile(r"\.?[\s\u00a0]+[A-Z][a-z]")
_ATTACHMENT = re.compile(r"^\W*(exhibit|schedule|annex|appendix)\s+([A-Z0-9][\w.\-]*)", re.IGNORECASE)


def cross_references(passages: Sequence[Passage]) -> list[Reference]:
    """Every reference the contract makes to its own parts, each resolved (or None) on its own."""
    resolver = _Resolver(list(passages))
    found: list[Reference] = []
    for p in passages:
        text = p.text
        if p.kind is PassageKind.TOC:
            continue
        for m in _REFERENCE.finditer(text):
            kind = _KINDS[m.group("word").lower()]
            if kind in ("clause", "paragraph") and m.group("word")[0].isupper() and m.start() == 0:
                continue  # "Paragraph 3." opening a passage is its own heading
            if _ELSEWHERE.match(text, m.end()) and kind in ("section", "article"):
                continue
            if m.start() == 0 and _HEADING_TITLE.match(text, m.end()):
                continue  # "Section 4.03 Governmental Authorization." is the heading of 4.03
            if _STATUTE.search(text, max(0, m.start() - 12), m.start()):
                continue  # "Treasury Regulations Section 1.1502-6", "31 C.F.R. § 800.401"
            targets = [(m.group("first"), m.start(), m.end("first"))]
            targets += [
                (t.group("target"), t.start("target"), t.end("target")) for t in _ONE_TARGET.finditer(m.group("rest"))
            ]
            base = ""
            for i, (target, start, end) in enumerate(targets):
                if i:
                    start, end = start + m.start("rest"), end + m.start("rest")
                if target.startswith("(") and base and kind != "clause":
                    target = base + target  # "Section 8(a) and (b)": (b) is 8(b)
                base = target.partition("(")[0] or base
                found.append(
                    Reference(
                        text[start:end],
                        p.citation_id,
                        start,
                        end,
                        kind,
                        target,
                        resolver.resolve(kind, target, p, start),
                    )
                )
        for m in _THIS.finditer(text):
            kind = _KINDS[m.group("word").lower().replace("sub-", "sub")]
            found.append(
                Reference(
                    m.group(0), p.citation_id, m.start(), m.end(), kind, "this", resolver.resolve(kind, "this", p)
                )
            )
    found.sort(key=lambda r: (resolver.order[r.passage], r.start))
    return found


class _Resolver:
    """References to passages: through `CitationIndex`, remembered, since a merger agreement names the
    same sections hundreds of times."""

    def __init__(self, passages: list[Passage]) -> None:
        self.index = CitationIndex(passages)
        self.order = {p.citation_id: i for i, p in enumerate(passages)}
        self.attachments: dict[tuple[str, str], list[str]] = {}
        for p in passages:
            for place in (p.heading_path.rpartition("›")[2], p.text[:60]):
                if (m := _ATTACHMENT.match(place)) and len(p.text) > 40:
                    key = (_KINDS[m.group(1).lower()], m.group(2).rstrip(".").upper())
                    self.attachments.setdefault(key, []).append(p.citation_id)
                    break
        self.cache: dict[tuple[str, str], tuple[str, ...] | None] = {}
        # Section number -> every passage under it (11 -> 11, 11.1, 11.1(a)…), as `resolve_whole` finds them.
        self.under: dict[tuple[int, ...], set[str]] = defaultdict(set)
        for (number, _), ids in self.index.by_section.items():
            if isinstance(number, tuple):
                for depth in range(1, len(number) + 1):
                    self.under[number[:depth]].update(ids)

    def resolve(self, kind: str, target: str, passage: Passage, at: int = 0) -> tuple[str, ...] | None:
        if target == "this":
            return self._here(kind, passage)
        if kind in ("clause", "paragraph") and target.startswith("("):
            return self._in_section(target, passage, at)
        if (kind, target) not in self.cache:
            self.cache[kind, target] = self._absolute(kind, target)
        return self.cache[kind, target]

    def _absolute(self, kind: str, target: str) -> tuple[str, ...] | None:
        if kind in ("exhibit", "schedule", "annex"):
            return tuple(self.attachments.get((kind, target.upper()), ())) or None
        if kind == "article":
            return self.index.resolve("article", target) or None
        return self._whole(target) if target[0].isdigit() else None

    def _whole(self, target: str) -> tuple[str, ...] | None:
        """The section with every clause under it (what `CitationIndex.resolve_whole` gives, indexed once)."""
        found = self.index.resolve("section", target)
        number, subs = _section_key(target)
        if not found or not isinstance(number, tuple):
            return found or None
        if subs:
            under = {
                c
                for (n, s), ids in self.index.by_section.items()
                if n == number and s[: len(subs)] == subs
                for c in ids
            }
        else:
            under = self.under.get(number, set())
        return tuple(sorted(under | set(found), key=self.order.__getitem__))

    def _here(self, kind: str, passage: Passage) -> tuple[str, ...] | None:
        """ "this Section" is the section the reference stands in; "this clause" its own clause."""
        if kind == "article":
            return self.index.resolve("article", passage.article) or None if passage.article else None
        if not passage.section or not passage.section[0].isdigit():
            return None
        return self._whole(passage.section.partition("(")[0] if kind == "section" else passage.section)

    def _in_section(self, target: str, passage: Passage, at: int) -> tuple[str, ...] | None:
        """ "clause (b)" is a clause of the section it stands in, or of the one above, or an item (b)
        its own passage lists; nothing else."""
        section = passage.section or ""
        while section:
            wanted = _section_key(section + target)
            if wanted in self.index.by_section:
                return tuple(self.index.by_section[wanted])
            section = section.rpartition("(")[0] if section.endswith(")") else ""
        first = target[: target.index(")") + 1]
        listed = [m.start() for m in re.finditer(re.escape(first), passage.text)]
        return (passage.citation_id,) if any(abs(i - at) > len(target) + 2 for i in listed) else None


# ---------------------------------------------------------------- parties

_ENTITY = re.compile(
    r"(?P<name>(?:[A-Z][\w.&’'\-]*,?\s+(?:(?:of|&|de)\s+)?){0,6}?[A-Z][\w.&’'\-]*)"
    # "… HOLDINGS INC. and/or assigns, a corporation …": the party is the entity before its assigns
    r"(?:\s+(?:and/or|and|or)\s+(?:its\s+)?(?:permitted\s+)?(?:successors\s+and\s+)?(?:assigns|affiliates))?"
    r"(?:,\s*an?\s+[^()]{0,200}?)?[,\s]*\($"  # the description may give an address: "…, with offices at …"
)
_CORPORATE = re.compile(
    r"\b(?:Inc|Corp|Corporation|Ltd|LLC|L\.?P|Pty|Limited|Company|GmbH|AG|S\.?A|plc|N\.?V)\b\.?", re.IGNORECASE
)
_NOT_PARTIES = {"agreement", "effective date", "confidential information", "parties", "party", "term", "territory"}
# The passage that names the parties: "between"/"among", then a name defined in brackets.
_PREAMBLE = re.compile(
    r"(?i:\b(?:between|among)\b).{0,600}?\((?:[^()]{0,200}?[\"“”]|(?:the\s+)?[a-z]+\s+party\))", re.S
)
_SIGNATURES = re.compile(r"IN\s+WITNESS\s+WHEREOF", re.IGNORECASE)
# A form's party left unnamed: the role's bracket right after "and" or "between", a comma or a line to fill in.
_BLANK_BEFORE = re.compile(r"(?:\b(?:and|between|among|by)|[,:;]|_{2,}|\.{3,}|\[\s*\])\s*$", re.IGNORECASE)


def parties(passages: Sequence[Passage], terms: Sequence[DefinedTerm] | None = None) -> list[Party]:
    """The parties named in the preamble, each with the short names and role defined for it there.

    The short names come from the verifier's reading of the opening (`Document.defined_parties`),
    widened by the defined terms that stand right after an entity's name in the preamble."""
    passages = list(passages)
    terms = list(terms) if terms is not None else defined_terms(passages)
    opening = Document([Source(p.citation_id, p.text) for p in passages[:20]]).defined_parties  # reads 8
    start = next((i for i, p in enumerate(passages) if _PREAMBLE.search(f"{p.heading_path} {p.text}")), 0)
    preamble = passages[start : start + 6]
    signed_at = next((i for i, p in enumerate(passages) if _SIGNATURES.search(p.text)), None)
    signatures = " ".join(f"{p.heading_path} {p.text}" for p in passages[signed_at:]) if signed_at is not None else ""
    roles = {t.term.casefold() for t in terms}
    found: list[Party] = []
    for p in preamble:
        for m in _PAREN.finditer(p.text):
            inside = m.group(1)
            names = [q.group(1).strip(" .,") for q in _IN_PAREN.finditer(inside)]
            unquoted = not names and _UNQUOTED_ROLE.fullmatch(m.group(0))
            if unquoted:
                names = [unquoted.group(1).removeprefix("the ")]
            names = [n for n in names if n.casefold() in roles and n.casefold() not in _NOT_PARTIES]
            entity = _ENTITY.search(p.text[max(0, m.start() - 280) : m.start() + 1])
            name = entity.group("name").strip(" ,") if entity else ""
            mine = {n.casefold() for n in names}
            while name and (
                name.split(",")[0].removeprefix("The ").casefold() in roles - mine or name.startswith("WHEREAS")
            ):
                name = name.partition(",")[2].strip()  # "Agreement, The Veritas Capital Fund VII, L.P."
            if name.casefold().endswith("agreement") or name.removeprefix("The ").casefold() in roles - mine:
                name = ""
            known = unquoted or (p is preamble[0] and any(n.casefold() in opening for n in names))
            if not names or not (known or _CORPORATE.search(name)):
                continue
            role = next((n for n in reversed(names) if _is_role(n)), None)
            signs = bool(name) and name.split()[0].strip(",").casefold() in signatures.casefold()
            blank = not name and bool(_BLANK_BEFORE.search(p.text[max(0, m.start() - 40) : m.start()]))
            found.append(Party(name, tuple(names), role, p.citation_id, signs, blank))
    return found


def _is_role(name: str) -> bool:
    """A short name that says what the party does ("Disclosing Party", "Producer"), not who it is."""
    lowered = name.casefold()
    roles = {"company", "parent", "state", "vendor"}
    return lowered.endswith(("party", "er", "or", "ee", "ant", "ent")) or lowered in roles
