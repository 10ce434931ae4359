"""Scanned PDFs: each page rendered and read by Tesseract, offline, with the words' confidence kept.

Tesseract is the engine ocrmypdf drives; it is called directly because its TSV output keeps what
ocrmypdf's searchable PDF drops: each word's confidence (shown on the passage a lawyer reads) and
its own layout analysis (blocks and paragraphs, columns included), page by page (the progress bar).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.errors import InvalidInput

RESOLUTION = 300  # dpi: Tesseract reads 10-12 pt type best at 300
LANGUAGE = "eng"
# Below this mean word confidence a passage is flagged to the reviewer: clean 300 dpi scans of
# typed contracts measured 0.91-0.96 here, so 0.80 means smudges, handwriting or a skewed page.
LOW_CONFIDENCE = 0.80
INSTALL_HINT = "install Tesseract (Debian/Ubuntu: apt install tesseract-ocr tesseract-ocr-eng; `make system-deps`)"


@dataclass(frozen=True)
class OcrParagraph:
    page: int
    text: str
    confidence: float  # Tesseract's mean word confidence, 0-1
    top: float  # share of the page height above it (0 = top edge)
    bottom: float


def tesseract() -> str | None:
    """The tesseract program, when installed with its English data."""
    program = shutil.which("tesseract")
    if program is None:
        return None
    listed = subprocess.run([program, "--list-langs"], capture_output=True, text=True, check=False)
    return program if LANGUAGE in listed.stdout.split() else None


def ocr_pdf(path: Path, pdf: Any, on_page: Callable[[int, int], None] | None = None) -> list[OcrParagraph]:
    """Paragraphs of every page of an open pdfplumber document, in Tesseract's reading order."""
    program = tesseract()
    if program is None:
        raise InvalidInput(str(path), f"this PDF is a scan (no text layer) and OCR is not installed: {INSTALL_HINT}")
    paragraphs: list[OcrParagraph] = []
    with tempfile.TemporaryDirectory(prefix="assay-ocr-") as folder:
        image = Path(folder) / "page.png"
        for number, page in enumerate(pdf.pages, start=1):
            page.to_image(resolution=RESOLUTION).original.convert("L").save(image)
            done = subprocess.run(
                [program, str(image), "stdout", "-l", LANGUAGE, "--dpi", str(RESOLUTION), "tsv"],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise InvalidInput(str(path), f"OCR failed on page {number}: {done.stderr.strip()[-200:]}")
            paragraphs += _paragraphs(done.stdout, number)
            if on_page is not None:
                on_page(number, len(pdf.pages))
    return paragraphs


def _paragraphs(tsv: str, page: int) -> list[OcrParagraph]:
    """Tesseract's words grouped by (block, paragraph), lines joined, with their mean confidence."""
    groups: dict[tuple[int, int], list[dict[str, str]]] = {}
    height = 1.0
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        if row["level"] == "1":
            height = float(row["height"]) or 1.0
        if row["level"] == "5" and (row.get("text") or "").strip() and float(row["conf"]) >= 0:
            groups.setdefault((int(row["block_num"]), int(row["par_num"])), []).append(row)
    paragraphs = []
    for words in groups.values():
        lines: dict[int, list[dict[str, str]]] = {}
        for word in words:
            lines.setdefault(int(word["line_num"]), []).append(word)
        # Tesseract groups a numbered section with the lines above it; as in a text PDF, it starts a passage.
        runs: list[list[list[dict[str, str]]]] = []
        for line in lines.values():
            text = " ".join(w["text"] for w in line)
            if not runs or starts_section(" ".join(w["text"] for w in runs[-1][-1]), text):
                runs.append([])
            runs[-1].append(line)
        paragraphs += [_paragraph(page, run, height) for run in runs]
    return paragraphs


# "7.3 The Licensee", "10. Term", "Section 4 …", "ARTICLE IV": a numbered section starting a line.
SECTION_START = re.compile(
    r"^(?:\d{1,3}\.(?:\d{1,3}\.?)*\s+[A-Z(“\"]|(?:Section|SECTION|Article|ARTICLE)\s+(?:\d{1,3}|[IVXLC]{1,7})\b)"
)


_RUNS_ON = re.compile(r"(?:[a-z,\-–]|\b(?:section|article|clause|paragraph|and|or|to|of|in|under|see|§))$", re.I)


def starts_section(previous: str, line: str) -> bool:
    """Whether a line opening with a section number starts that section, rather than a sentence of
    the line before running on ("as set out in / Section 4.2"): after a full stop or colon, after a
    heading ("7. Termination"), or after a line that does not end mid-sentence."""
    if not SECTION_START.match(line):
        return False
    heading = SECTION_START.match(previous) is not None and len(previous.split()) <= 8
    return heading or not _RUNS_ON.search(previous.rstrip())


def _paragraph(page: int, lines: list[list[dict[str, str]]], height: float) -> OcrParagraph:
    """Lines of Tesseract's words as one paragraph, with their mean confidence and place on the page."""
    words = [word for line in lines for word in line]
    text = ""
    for line in (" ".join(w["text"] for w in line) for line in lines):
        text = text + line if text.endswith(("-", "–")) or not text else f"{text} {line}"
    confidence = sum(float(w["conf"]) for w in words) / len(words) / 100
    top = min(float(w["top"]) for w in words) / height
    bottom = max(float(w["top"]) + float(w["height"]) for w in words) / height
    return OcrParagraph(page, text, round(confidence, 3), top, bottom)
