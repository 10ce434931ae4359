"""Read a contract (.txt, .md, .pdf, .docx) into passages with stable citation ids and sections.

Every format is first cut into *units* (a paragraph, a line, a run of text between wide gaps);
one outline pass then decides which units are headings, which are clause labels, and which are
passages, and gives each passage its section (``6.01(a)(i)``), heading path and ``par_N`` id.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from app import limits
from app.errors import InvalidInput
from app.ingest.units import TERMINAL, Unit, normalise_running
from models.segmentation import strip_span
from models.vocabulary import PassageKind

# Bump when parsing changes: documents keep the version they were cut with, so ids stay stable.
PARSER_VERSION = 2
FORMATS = {".txt": "txt", ".md": "md", ".pdf": "pdf", ".docx": "docx"}


@dataclass(frozen=True)
class ParsedPassage:
    citation_id: str
    kind: PassageKind
    text: str
    article: str | None
    section: str | None
    heading_path: str
    page: int | None
    char_start: int
    char_end: int
    footnote_label: str | None = None
    refers_to: str | None = None  # citation id of the passage that carries the footnote's marker
    ocr_confidence: float | None = None  # read by OCR from a scan: Tesseract's mean word confidence, 0-1


@dataclass(frozen=True)
class ParsedDocument:
    name: str
    format: str
    text: str
    passages: list[ParsedPassage] = field(default_factory=list)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


# A 10 MB contract imports in ~8 s on a laptop core; far larger files are dumps, not one contract.
MAX_DOCUMENT_BYTES = limits.DOCUMENT


@dataclass(frozen=True)
class PageProgress:
    """How far the reading of one document has gone (a scan's OCR takes seconds a page)."""

    document: str
    done: int
    total: int
    ocr: bool


def parse_document(
    path: Path, password: str | None = None, on_progress: Callable[[PageProgress], None] | None = None
) -> ParsedDocument:
    """Parse one document file; raise InvalidInput naming the file when it cannot be read
    (PasswordRequired for an encrypted PDF opened without its password)."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise InvalidInput(str(path), f"unsupported document type {path.suffix!r} (use {', '.join(FORMATS)})")
    limits.check_regular(path, MAX_DOCUMENT_BYTES, "a document file")  # no pipe, no device, not too large
    try:
        if fmt == "pdf":
            from app.ingest.pdf_reading import pdf_units

            report = (lambda d, t, o: on_progress(PageProgress(path.name, d, t, o))) if on_progress else None
            text, units = pdf_units(path, password, report)
        elif fmt == "docx":
            text, units = _docx_units(path)
        else:
            text = limits.read_bounded(path, MAX_DOCUMENT_BYTES, "a document file").decode("utf-8")
            units = _text_units(text)
    except UnicodeDecodeError as exc:
        raise InvalidInput(str(path), f"not UTF-8 text (byte {exc.start})") from exc
    except InvalidInput:
        raise
    except Exception as exc:  # pdf and docx libraries raise many types for a damaged file
        raise InvalidInput(str(path), f"cannot read this {fmt} file ({exc})") from exc
    passages = outline(text, units)
    if not passages:
        raise InvalidInput(str(path), "no text found in the document")
    return ParsedDocument(path.name, fmt, text, passages)


# ---------------------------------------------------------------- plain text and Markdown

_MD_BLOCK_START = re.compile(r"^(#{1,6}\s|[-*+]\s|\d+[.)]\s|\[\^\w+\]:|>)")
_WIDE_GAP = re.compile(r"[ \t\u00a0]{3,}")
_MD_FOOTNOTE = re.compile(r"^\[\^(\w+)\]:\s*")
_MD_MARKER = re.compile(r"\[\^(\w+)\](?!:)")


def _text_units(text: str) -> list[Unit]:
    """Paragraphs of a text file: blank lines and line breaks end one unless the line is wrapped."""
    lines = [(m.start(), m.end()) for m in re.finditer(r"[^\r\n]*", text) if text[m.start() : m.end()].strip()]
    lengths = sorted(end - start for start, end in lines)
    # Hard-wrapped files (most lines under ~100 characters) break paragraphs mid-sentence.
    wrapped = bool(lengths) and lengths[int(0.9 * (len(lengths) - 1))] <= 100
    merged: list[tuple[int, int]] = []
    for start, end in lines:
        if merged and _continues(text, merged[-1], (start, end), wrapped=wrapped):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    running = _repeated_lines(text, merged)
    units = []
    for start, end in merged:
        for piece_start, piece_end in _split_wide_gaps(text, start, end):
            piece = text[piece_start:piece_end]
            if normalise_running(piece) in running or _PAGE_NUMBER.match(piece):
                continue
            heading = piece.startswith("#")
            footnote = _MD_FOOTNOTE.match(piece)
            units.append(
                Unit(
                    piece_start,
                    piece_end,
                    heading=heading,
                    footnote_label=footnote.group(1) if footnote else None,
                    footnote_markers=tuple(_MD_MARKER.findall(piece)),
                )
            )
    return units


_PAGE_NUMBER = re.compile(r"^(?:-\s*)?\d{1,3}(?:\s*-)?$|^page \d+( of \d+)?$", re.I)


def _repeated_lines(text: str, lines: list[tuple[int, int]]) -> set[str]:
    """Running headers and footers of a text extracted from pages ("Source: ACME, 10-Q, 5/20/2014")."""
    counts = Counter(normalise_running(text[s:e]) for s, e in lines if e - s < 120)
    return {line for line, n in counts.items() if n >= 3 and any(c.isalpha() for c in line)}


def _continues(text: str, previous: tuple[int, int], line: tuple[int, int], *, wrapped: bool) -> bool:
    """Whether a line is the wrapped continuation of the one before it (no blank line between)."""
    between = text[previous[1] : line[0]]
    if between.count("\n") > 1:
        return False
    before = text[previous[0] : previous[1]].rstrip()
    after = text[line[0] : line[1]].strip()
    if _MD_BLOCK_START.match(after) or before.startswith("#") or before.endswith(TERMINAL):
        return False
    return after[:1].islower() or (wrapped and len(before) >= 50)


def _split_wide_gaps(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Extracted contracts separate paragraphs inside one line with runs of spaces."""
    pieces, cursor = [], start
    for gap in _WIDE_GAP.finditer(text, start, end):
        pieces.append((cursor, gap.start()))
        cursor = gap.end()
    pieces.append((cursor, end))
    return [strip_span(text, s, e) for s, e in pieces if text[s:e].strip()]


# ---------------------------------------------------------------- DOCX


def _docx_units(path: Path) -> tuple[str, list[Unit]]:
    """Paragraphs of a Word file; automatic clause numbering (1, 1.1, 1.1.1) is written out."""
    import docx

    document = docx.Document(str(path))
    counters: list[int] = []
    parts: list[str] = []
    units: list[Unit] = []
    cursor = 0
    for paragraph in document.paragraphs:
        text = paragraph.text.strip()
        if not text:
            continue
        style = paragraph.style.name if paragraph.style is not None else ""
        level = _docx_numbering_level(paragraph, style)
        if level is not None:
            counters = counters[: level + 1] + [0] * max(0, level + 1 - len(counters))
            counters[level] += 1
            text = f"{'.'.join(str(n) for n in counters[: level + 1])} {text}"
        if parts:
            parts.append("\n\n")
            cursor += 2
        parts.append(text)
        units.append(Unit(cursor, cursor + len(text), heading=style.startswith(("Heading", "Title"))))
        cursor += len(text)
    return "".join(parts), units


def _docx_numbering_level(paragraph: object, style: str) -> int | None:
    ppr = paragraph._p.pPr  # type: ignore[attr-defined]
    if ppr is not None and ppr.numPr is not None:
        ilvl = ppr.numPr.ilvl
        return int(ilvl.val) if ilvl is not None else 0
    if style.startswith("List Number"):
        suffix = style.removeprefix("List Number").strip()
        return int(suffix) - 1 if suffix.isdigit() else 0
    return None


# ---------------------------------------------------------------- the outline pass

_ROMAN = r"[IVXLC]{1,7}"
_NUMBER = r"\d{1,3}(?:\.\d{1,3})*"
_LABEL_ONLY = re.compile(
    rf"^(?:(?P<kw>section|article|clause)\s+(?P<kwnum>{_NUMBER}|{_ROMAN})|(?P<num>{_NUMBER}))\.?$", re.I
)
_NUMBERED = re.compile(
    rf"^#*\s*(?:(?P<kw>section|article|clause)\s+(?P<kwnum>{_NUMBER}|{_ROMAN})"
    rf"|(?P<num>{_NUMBER}))(?:\.\s*|\s+)(?P<rest>\S.*)$",
    re.I | re.S,
)
_SUB_ONLY = re.compile(r"^\((?P<sub>[a-z]{1,5}|[A-Z]{1,2}|\d{1,2})\)$")
_SUB = re.compile(r"^\((?P<sub>[a-z]{1,5}|[A-Z]{1,2}|\d{1,2})\)\s*(?P<rest>\S.*)$", re.S)
_INLINE_HEADING = re.compile(r"^(?P<heading>[A-Z][^.;:]{1,60}?)\.\s+\S")
_TOC_LINE = re.compile(
    r"(\.{5,}|…{3,})\s*\d{1,4}\s*$|(?:Section\s+\d+\.\d+\s+[A-Z][^.]{1,80}?\s+\d{1,3}\s+){2,}Section"
)
_ROMAN_SUB = re.compile(r"^[ivxlc]+$")


def _is_heading(text: str) -> bool:
    """A short title line: few words, no sentence inside it, not ending like a clause fragment."""
    text = text.lstrip("#").strip()
    words = text.split()
    if not words or len(text) > 80 or len(words) > 10 or not (text[0].isupper() or text[0].isdigit()):
        return False
    if text.endswith((",", ";", ":")) or ". " in text.rstrip(".") or text[-1].isdigit():
        return False
    # Titles capitalise their words ("Governing Law; Attorney's Fee"); sentences do not.
    content = [w for w in words if w.lower() not in _SMALL_WORDS and w[0].isalpha()]
    return not content or sum(w[0].isupper() for w in content) >= 0.6 * len(content)


_SMALL_WORDS = {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"}


class _Outline:
    """Where the reader is in the contract: article, section, sub-clauses, heading."""

    def __init__(self) -> None:
        self.article: str | None = None
        self.article_title = ""
        self.section: str | None = None
        self.section_title = ""
        self.subs: list[tuple[int, str]] = []

    def enter_article(self, number: str, title: str) -> None:
        self.article, self.article_title = number.upper(), title
        self.section, self.section_title, self.subs = None, "", []

    def enter_section(self, number: str, title: str) -> None:
        self.section, self.section_title, self.subs = number.rstrip("."), title, []

    def enter_heading(self, title: str) -> None:
        self.section, self.section_title, self.subs = None, title, []

    def enter_sub(self, label: str) -> None:
        level = self._sub_level(label)
        self.subs = [(lvl, lab) for lvl, lab in self.subs if lvl < level] + [(level, label)]

    def leave_subs(self) -> None:
        self.subs = []

    def _sub_level(self, label: str) -> int:
        if label.isdigit():
            return 4
        if label.isupper():
            return 3
        previous_letter = next((lab for lvl, lab in reversed(self.subs) if lvl == 1), None)
        # "(i)" after "(h)" is the ninth letter, not the first roman numeral.
        is_next_letter = (
            previous_letter is not None and len(previous_letter) == 1 and ord(label[0]) == ord(previous_letter) + 1
        )
        if _ROMAN_SUB.match(label) and not (len(label) == 1 and is_next_letter):
            return 2
        return 1

    @property
    def full_section(self) -> str | None:
        if self.section is None and not self.subs:
            return None
        return (self.section or "") + "".join(f"({label})" for _, label in self.subs)

    @property
    def heading_path(self) -> str:
        parts = []
        if self.article:
            parts.append(f"Article {self.article} {self.article_title}".strip())
        if self.section or self.section_title:
            parts.append(" ".join(p for p in (self.section, self.section_title) if p))
        return " › ".join(parts)


def outline(text: str, units: list[Unit]) -> list[ParsedPassage]:
    """Turn units into numbered passages; headings and bare labels shape sections, not passages."""
    state = _Outline()
    passages: list[ParsedPassage] = []
    pending_label: tuple[re.Match[str], int] | None = None  # a bare "26." waiting for its text
    pending_sub: tuple[str, int] | None = None
    lonely_labels = 0
    for index, unit in enumerate(units):
        raw = text[unit.start : unit.end]
        flat = " ".join(raw.split())
        if unit.cite is not None:  # transcript lines: page:line is the citation, no outline
            passages.append(_passage(text, passages, _Outline(), unit, unit.start, PassageKind.PARAGRAPH, unit.cite))
            continue
        if unit.footnote_label is None and (label := _LABEL_ONLY.match(flat)):
            # A run of bare numbers (CUAD extractions list them apart from their text) means nothing.
            lonely_labels += 1
            pending_label = (label, unit.start) if lonely_labels == 1 else None
            continue
        if unit.footnote_label is None and (sub := _SUB_ONLY.match(flat)):
            pending_sub = (sub.group("sub"), unit.start)
            continue
        lonely_labels = 0
        start = unit.start
        if pending_label is not None:
            label, start = pending_label
            pending_label = None
            number = label.group("kwnum") or label.group("num")
            kind = (label.group("kw") or "").lower()
            title = flat.rstrip(".") if _is_heading(flat) else ""
            if kind == "article" or (number.isalpha() and kind != "section"):
                state.enter_article(number, title)
            else:
                state.enter_section(number, title)
            if title:
                continue
        elif pending_sub is not None:
            state.enter_sub(pending_sub[0])
            start = pending_sub[1]
        if pending_sub is None and unit.footnote_label is None:
            if _TOC_LINE.search(flat):
                passages.append(_passage(text, passages, state, unit, start, PassageKind.TOC))
                continue
            if _structure(state, flat, is_last=index == len(units) - 1, forced_heading=unit.heading):
                continue
        pending_sub = None
        kind = PassageKind.FOOTNOTE if unit.footnote_label is not None else PassageKind.PARAGRAPH
        passages.append(_passage(text, passages, state, unit, start, kind))
    return _link_footnotes(passages, units)


def _structure(state: _Outline, flat: str, *, is_last: bool, forced_heading: bool) -> bool:
    """Update the outline from a unit; True when the unit is only a heading (no passage)."""
    heading_like = forced_heading or (_is_heading(flat) and not is_last)
    numbered = _NUMBERED.match(flat.lstrip("#").strip())
    if numbered and not _looks_like_prose_number(numbered):
        number = numbered.group("kwnum") or numbered.group("num")
        rest = numbered.group("rest").strip()
        is_article = (numbered.group("kw") or "").lower() == "article"
        title = rest.rstrip(".") if heading_like else _inline_heading(rest)
        if is_article:
            state.enter_article(number, title)
        else:
            state.enter_section(number, title)
        return heading_like
    if (sub := _SUB.match(flat)) is not None:
        state.enter_sub(sub.group("sub"))
        return False
    if heading_like:
        state.enter_heading(flat.lstrip("#").strip().rstrip("."))
        return True
    state.leave_subs()
    return False


def _looks_like_prose_number(match: re.Match[str]) -> bool:
    """ "30 days after…" or "2014 annual…" start with a number but are not clause numbers."""
    if match.group("kw"):
        return False
    number = match.group("num")
    rest = match.group("rest")
    return "." not in number and (int(number) > 200 or rest[:1].islower() or rest[:1] == "(")


def _inline_heading(rest: str) -> str:
    found = _INLINE_HEADING.match(rest)
    return found.group("heading") if found and len(found.group("heading").split()) <= 8 else ""


def _passage(
    text: str,
    passages: list[ParsedPassage],
    state: _Outline,
    unit: Unit,
    start: int,
    kind: PassageKind,
    cite: str | None = None,
) -> ParsedPassage:
    return ParsedPassage(
        citation_id=f"par_{len(passages) + 1}",
        kind=kind,
        text=" ".join(text[start : unit.end].split()),
        article=state.article,
        section=cite or state.full_section,
        heading_path=state.heading_path,
        page=unit.page,
        char_start=start,
        char_end=unit.end,
        footnote_label=unit.footnote_label,
        ocr_confidence=unit.confidence,
    )


def _link_footnotes(passages: list[ParsedPassage], units: list[Unit]) -> list[ParsedPassage]:
    """Point each footnote at the last passage before it that carries its marker."""
    markers_at = {u.end: u.footnote_markers for u in units if u.footnote_markers}
    carrying: dict[str, ParsedPassage] = {}
    linked = []
    for passage in passages:
        if passage.kind is PassageKind.FOOTNOTE and passage.footnote_label in carrying:
            target = carrying[passage.footnote_label]
            passage = replace(
                passage,
                refers_to=target.citation_id,
                section=target.section,
                article=target.article,
                heading_path=target.heading_path,
            )
        else:
            for marker in markers_at.get(passage.char_end, ()):
                carrying[marker] = passage
        linked.append(passage)
    return linked
