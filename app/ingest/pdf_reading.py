"""A PDF's text layer cut into units: paragraphs in reading order with their pages, running heads
and page numbers removed, footnotes recognised, and transcript lines cited as page:line ("4:12")."""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.errors import InvalidInput, PasswordRequired
from app.ingest.ocr import OcrParagraph, starts_section
from app.ingest.pdf_budget import check_drawing
from app.ingest.pdf_layout import Line, PageText, read_page
from app.ingest.units import TERMINAL, Unit, normalise_running


def open_pdf(path: Path, password: str | None) -> Any:
    """pdfplumber's document; PasswordRequired when it is encrypted and the password does not open it."""
    import logging

    import pdfplumber
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfplumber.utils.exceptions import PdfminerException

    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # a damaged file is our one sentence, not stderr noise
    try:
        return pdfplumber.open(path, password=password or "")
    except PdfminerException as exc:
        if exc.args and isinstance(exc.args[0], PDFPasswordIncorrect):
            raise PasswordRequired(str(path), path.name, wrong=bool(password)) from exc
        raise


def pdf_units(
    path: Path, password: str | None = None, on_page: Callable[[int, int, bool], None] | None = None
) -> tuple[str, list[Unit]]:
    """Paragraphs of a PDF's text layer, or of its OCR when it is a scan; `on_page(done, total, ocr)`.
    Within the limits below: InvalidInput for a PDF that is too long, draws too much on a page, or
    takes too long to read (a PDF bomb is refused in moments, not read for hours)."""
    with open_pdf(path, password) as pdf:
        clock = _Clock(path, _page_count(path, pdf))
        sizes: list[float] = []
        for number, page in enumerate(pdf.pages, start=1):
            check_drawing(path, number, page.page_obj)  # app/ingest/pdf_budget.py: bytes, forms, operators…
            sizes += [float(c["size"]) for c in page.chars if c["text"].strip() and c["upright"]]
            clock.check(number)
        if not sizes:
            from app.ingest.ocr import ocr_pdf

            def report(done: int, total: int) -> None:
                clock.check(done)
                if on_page is not None:
                    on_page(done, total, True)

            return _ocr_units(ocr_pdf(path, pdf, report))
        body_size = statistics.median(sizes)
        pages = []
        for number, page in enumerate(pdf.pages, start=1):
            pages.append((read_page(page, body_size), float(page.height)))
            clock.check(number)
            if on_page is not None:
                on_page(number, len(pdf.pages), False)
    if pages and all(text.numbered for text, _ in pages if text.lines):
        return _transcript_units(pages)
    return _paragraph_units(pages, body_size)


# ---------------------------------------------------------------- limits

# Far above a real document, far below what hurts: the longest contract with its exhibits or a
# deposition runs to a few thousand pages. What one page may draw: app/ingest/pdf_budget.py.
MAX_PAGES = 5_000
SECONDS = 120  # to open a PDF and read its first pages
SECONDS_A_PAGE = 10  # and each page more (OCR of a scanned page takes a few seconds)


def _page_count(path: Path, pdf: Any) -> int:
    """The PDF's pages, counted without reading them, up to MAX_PAGES; InvalidInput past it."""
    import itertools

    from pdfminer.pdfpage import PDFPage

    count = sum(1 for _ in itertools.islice(PDFPage.create_pages(pdf.doc), MAX_PAGES + 1))
    if count > MAX_PAGES:
        raise InvalidInput(str(path), f"it has over {MAX_PAGES:,} pages; a PDF is read up to {MAX_PAGES:,} pages")
    return count


class _Clock:
    """The time a PDF is given: SECONDS, and SECONDS_A_PAGE for each of its pages."""

    def __init__(self, path: Path, pages: int) -> None:
        self.path, self.pages = path, pages
        self.limit = SECONDS + SECONDS_A_PAGE * pages
        self.deadline = time.monotonic() + self.limit

    def check(self, page: int) -> None:
        if time.monotonic() > self.deadline:
            raise InvalidInput(
                str(self.path),
                f"reading it took over {self.limit:,} s (stopped at page {page} of {self.pages}); a PDF is given "
                f"{SECONDS} s and {SECONDS_A_PAGE} s a page",
            )


# ---------------------------------------------------------------- ordinary pages


def _paragraph_units(pages: list[tuple[PageText, float]], body_size: float) -> tuple[str, list[Unit]]:
    """Body paragraphs in reading order, continued across columns and pages; each page's footnotes
    follow the paragraph that was being read when the page ended."""
    running = _running_lines(pages)
    body: list[_Paragraph] = []
    notes: list[_Paragraph] = []
    last_body: Line | None = None
    for number, (page, height) in enumerate(pages, start=1):
        last_note: Line | None = None
        lines = [
            line
            for line in page.lines
            if not (_in_margin(line, height) and (_running_key(line.text) in running or _is_page_number(line.text)))
        ]
        foot = _footnote_lines(lines, body_size, height)
        for line in lines:
            chars = [c for c in line.chars if c["text"].strip()]
            if id(line) in foot:
                first = re.match(r"^(\d{1,3}|[*†‡])\s", line.text)
                # "10 seconds." continuing a note is not note 10: a new note is indented or follows a full stop.
                if first and last_note is not None and not _starts_paragraph(last_note, line, body_size):
                    first = None if line.indent <= last_note.indent else first
                if first or last_note is None or _starts_paragraph(last_note, line, body_size):
                    notes.append(_Paragraph(line.text, number, first.group(1) if first else None))
                else:
                    notes[-1].text = _join(notes[-1].text, line.text)
                last_note = line
                continue
            markers = _superscript_markers(chars, body_size)
            if last_body is None or _starts_paragraph(last_body, line, body_size):
                body.append(_Paragraph(line.text, number, None, markers))
            else:
                body[-1].text = _join(body[-1].text, line.text)
                body[-1].markers += markers
            last_body = line
    ordered: list[_Paragraph] = []
    for paragraph in body:
        ordered += [note for note in notes if note.page < paragraph.page and note not in ordered]
        ordered.append(paragraph)
    ordered += [note for note in notes if note not in ordered]
    parts: list[str] = []
    units: list[Unit] = []
    cursor = 0
    for paragraph in ordered:
        if parts:
            parts.append("\n\n")
            cursor += 2
        parts.append(paragraph.text)
        end = cursor + len(paragraph.text)
        units.append(
            Unit(cursor, end, paragraph.page, footnote_label=paragraph.label, footnote_markers=paragraph.markers)
        )
        cursor = end
    return "".join(parts), units


def _footnote_lines(lines: list[Line], body_size: float, height: float) -> set[int]:
    """Footnotes: the run of smaller type that ends a column, below the top third of the page."""
    foot: set[int] = set()
    for block in {line.block for line in lines}:
        for line in reversed([line for line in lines if line.block == block]):
            chars = [c for c in line.chars if c["text"].strip()]
            small = [c for c in chars if c["size"] < 0.85 * body_size]
            if not chars or len(small) <= 0.8 * len(chars) or line.top <= height / 3:
                break
            foot.add(id(line))
    return foot


@dataclass
class _Paragraph:
    text: str
    page: int
    label: str | None  # a footnote's number; None for body text
    markers: tuple[str, ...] = ()


_LIST_ITEM = re.compile(r"^(?:[•▪●◦]|\(?[a-z0-9]{1,3}\))\s")


def _starts_paragraph(previous: Line, line: Line, size: float) -> bool:
    """A blank line's gap, a first-line indent after a full stop, a list item or a bold title start
    one; a new column or page does too, unless the text runs on (a broken word, a lowercase start)."""
    if line.block != previous.block or line.page != previous.page or line.top < previous.top:
        runs_on = previous.text.endswith(("-", "–")) or (
            line.text[:1].islower() and not previous.text.endswith(TERMINAL)
        )
        return not runs_on
    if line.top - previous.bottom > 0.8 * size or _LIST_ITEM.match(line.text):
        return True
    if line.indent > previous.indent + 0.5 * size and previous.text.endswith(TERMINAL):
        return True
    return _bold(line) != _bold(previous)


def _bold(line: Line) -> bool:
    return bool(line.chars) and all("Bold" in c.get("fontname", "") for c in line.chars if c["text"].strip())


def _join(text: str, more: str) -> str:
    """Lines joined with a space, except after a hyphen, dash or slash that broke a word or address."""
    return text + more if text.endswith(("-", "–", "/")) else f"{text} {more}"


def _in_margin(line: Line, height: float) -> bool:
    return line.top < 0.1 * height or line.bottom > 0.92 * height


def _is_page_number(text: str) -> bool:
    return bool(re.fullmatch(r"(?:-\s*)?\d{1,6}(?:\s*-)?|page \d+( of \d+)?", text.strip(), re.I))


def _running_key(text: str) -> str:
    """A margin line with digits masked and a page number at either end cut off: even and odd
    pages put it on different sides ("47700 Federal Register/…" and "Federal Register/… 47699")."""
    return re.sub(r"^#+\s+|\s+#+$", "", normalise_running(text))


def _running_lines(pages: list[tuple[PageText, float]]) -> set[str]:
    """Lines repeated in the top or bottom margin of most pages."""
    if len(pages) < 2:
        return set()
    counts: Counter[str] = Counter()
    for page, height in pages:
        counts.update({_running_key(line.text) for line in page.lines if _in_margin(line, height)})
    return {text for text, n in counts.items() if n >= max(2, 0.5 * len(pages))}


def _superscript_markers(chars: list[dict[str, Any]], body_size: float) -> tuple[str, ...]:
    """Footnote markers in a body line: runs of small digits."""
    markers, run = [], ""
    for char in chars:
        if char["size"] < 0.85 * body_size and char["text"].isdigit():
            run += char["text"]
        elif run:
            markers.append(run)
            run = ""
    if run:
        markers.append(run)
    return tuple(markers)


def _ocr_units(paragraphs: list[OcrParagraph]) -> tuple[str, list[Unit]]:
    """OCR paragraphs as units carrying their confidence; page numbers and running heads dropped."""
    pages = len({p.page for p in paragraphs})
    margin = [p for p in paragraphs if p.top < 0.1 or p.bottom > 0.92]
    counts = Counter(key for _page, key in {(p.page, _running_key(p.text)) for p in margin})
    running = {key for key, n in counts.items() if n >= max(2, 0.5 * pages)}
    kept: list[OcrParagraph] = []
    for paragraph in paragraphs:
        if paragraph in margin and (_is_page_number(paragraph.text) or _running_key(paragraph.text) in running):
            continue
        previous = kept[-1] if kept else None
        # Tesseract ends a paragraph mid-sentence at a wide gap; a line that runs on is one paragraph.
        runs_on = not previous.text.endswith(TERMINAL) and previous.text[-1:].islower() if previous else False
        if previous is not None and runs_on and not starts_section(previous.text, paragraph.text):
            weight = len(previous.text), len(paragraph.text)
            confidence = (previous.confidence * weight[0] + paragraph.confidence * weight[1]) / sum(weight)
            text = _join(previous.text, paragraph.text)
            kept[-1] = OcrParagraph(previous.page, text, round(confidence, 3), previous.top, paragraph.bottom)
        else:
            kept.append(paragraph)
    parts: list[str] = []
    units: list[Unit] = []
    cursor = 0
    for paragraph in kept:
        if parts:
            parts.append("\n\n")
            cursor += 2
        parts.append(paragraph.text)
        end = cursor + len(paragraph.text)
        units.append(Unit(cursor, end, paragraph.page, confidence=paragraph.confidence))
        cursor = end
    return "".join(parts), units


# ---------------------------------------------------------------- line-numbered paper

_SPEAKER = re.compile(r"^(?:(?:[A-Z][A-Za-z.'’-]*\s){0,3}[A-Z][A-Z.'’-]+:|Q\.?\s|A\.?\s)")


def _transcript_units(pages: list[tuple[PageText, float]]) -> tuple[str, list[Unit]]:
    """Paragraphs of a transcript or pleading, each cited by its printed page and line numbers."""
    paragraphs: list[tuple[int, list[tuple[int, int]], list[str]]] = []  # pdf page, (page, line)s, texts
    open_paragraph = False
    for number, (page, _height) in enumerate(pages, start=1):
        printed = page.printed_page or number
        left = min((line.indent for line in page.lines if line.text), default=0.0)
        for line in page.lines:
            assert line.number is not None
            if not line.text:
                open_paragraph = False  # a blank numbered line ends the paragraph
                continue
            size = statistics.median(c["size"] for c in line.chars) if line.chars else 10.0
            new = not open_paragraph or line.indent > left + 2.5 * size or bool(_SPEAKER.match(line.text))
            if new:
                paragraphs.append((number, [], []))
            paragraphs[-1][1].append((printed, line.number))
            paragraphs[-1][2].append(line.text)
            open_paragraph = True
    parts: list[str] = []
    units: list[Unit] = []
    cursor = 0
    for pdf_page, places, texts in paragraphs:
        text = texts[0]
        for more in texts[1:]:
            text = _join(text, more)
        if parts:
            parts.append("\n\n")
            cursor += 2
        parts.append(text)
        units.append(Unit(cursor, cursor + len(text), page=pdf_page, cite=_page_lines(places)))
        cursor += len(text)
    return "".join(parts), units


def _page_lines(places: list[tuple[int, int]]) -> str:
    """'4:12', '4:12-15' or '4:24-5:3': how lawyers cite a transcript."""
    (first_page, first_line), (last_page, last_line) = places[0], places[-1]
    if (first_page, first_line) == (last_page, last_line):
        return f"{first_page}:{first_line}"
    if first_page == last_page:
        return f"{first_page}:{first_line}-{last_line}"
    return f"{first_page}:{first_line}-{last_page}:{last_line}"
