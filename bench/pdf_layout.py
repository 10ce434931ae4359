"""Which PDF reader reads a three-column Federal Register rule right: Assay's (pdfplumber word
positions, XY cut), pdfplumber's plain extract_text, and PyMuPDF's blocks (when installed: AGPL,
so measured here, not shipped).

    .venv/bin/python bench/pdf_layout.py [--mupdf /path/to/site-packages-with-pymupdf]

Reference: each page's three columns cropped at the gutters (x = 215 and 392 pt) and read in
turn. Scores: the share of the reference's consecutive line pairs that follow each other in the
reader's text (spaces ignored), words glued together, and margin junk left in the text.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
import time
from pathlib import Path

PDF = Path(__file__).resolve().parent.parent / "tests/fixtures/pdfs/federal-register-2020-17221.pdf"
COLUMNS = ((0, 215), (215, 392), (392, 612))
GLUED = ("FORFURTHER", "INFORMATIONCONTACT", "ADDRESSESsection", "SUPPLEMENTARYINFORMATION")
JUNK = ("jbell", "VerDate", "Federal Register / Vol", "Jkt 25", "</GPH>")


def reference_lines() -> list[str]:
    import pdfplumber

    lines = []
    with pdfplumber.open(PDF) as pdf:
        for page in pdf.pages:
            for x0, x1 in COLUMNS:
                column = page.crop((x0, 50, x1, 750)).filter(lambda o: o.get("upright", True))
                lines += column.extract_text().splitlines()
    return lines


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def order_score(text: str, lines: list[str]) -> float:
    """Share of consecutive reference lines (a, b) where b starts right after a ends (a line
    shorter than 25 characters is too common to locate, so it does not start a pair)."""
    flat = squash(text)
    pairs = [(a, b) for a, b in itertools.pairwise(lines) if len(a) > 25]
    good = 0
    for a, b in pairs:
        at = flat.find(squash(a))
        good += at >= 0 and flat.startswith(squash(b)[:12], at + len(squash(a)))
    return good / len(pairs)


def read_assay() -> str:
    from app.ingest.documents import parse_document

    return parse_document(PDF).text


def read_plain() -> str:
    import pdfplumber

    with pdfplumber.open(PDF) as pdf:
        return "\n".join(page.extract_text() for page in pdf.pages)


def read_mupdf() -> str:
    import fitz  # PyMuPDF

    with fitz.open(PDF) as doc:
        return "\n".join(block[4] for page in doc for block in page.get_text("blocks", sort=False))


def read_mupdf_sorted() -> str:
    import fitz

    with fitz.open(PDF) as doc:
        return "\n".join(page.get_text("text", sort=True) for page in doc)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mupdf", help="a folder holding PyMuPDF (pip install --target …), kept out of the venv")
    args = parser.parse_args()
    readers = {"assay (pdfplumber words, XY cut)": read_assay, "pdfplumber extract_text": read_plain}
    if args.mupdf:
        sys.path.insert(0, args.mupdf)
        readers |= {"PyMuPDF blocks": read_mupdf, "PyMuPDF sort=True": read_mupdf_sorted}
    lines = reference_lines()
    print(f"{PDF.name}: {len(lines)} reference lines (columns cropped at the gutters)")
    print(f"{'reader':34} {'in order':>9} {'glued':>6} {'junk':>5} {'seconds':>8}")
    for name, read in readers.items():
        start = time.perf_counter()
        text = read()
        seconds = time.perf_counter() - start
        glued = sum(text.count(g) for g in GLUED)
        junk = sum(text.count(j) for j in JUNK)
        print(f"{name:34} {order_score(text, lines):9.1%} {glued:6} {junk:5} {seconds:8.2f}")


if __name__ == "__main__":
    main()
