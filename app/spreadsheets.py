"""Spreadsheets Assay writes (the exports' CSV and XLSX, the regression list): no cell is ever a
formula, whatever an answer or a comment says (`=HYPERLINK(...)` would run when the file opens)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet reads a CSV cell starting so as a formula (OWASP)


def no_formula(value: Any) -> Any:
    """A text that a spreadsheet would run as a formula once in a CSV cell (=, +, -, @, a tab or a
    return first), quoted as OWASP advises: an apostrophe first. Anything else as it is."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


def write_csv(frame: Any, out: Path) -> None:
    """Write the pandas frame as CSV, no cell a formula (`no_formula`). Lines end in CRLF (RFC 4180),
    so that a cell holding a lone carriage return is quoted, not cut in two (the rest a new cell)."""
    frame.map(no_formula).to_csv(out, index=False, lineterminator="\r\n")


def texts_as_text(book: Any) -> None:
    """Every cell of the openpyxl workbook that openpyxl took for a formula (a text starting with =)
    becomes a text cell again: the words as written, never a formula Excel runs. XLSX types its
    cells, so the text needs no apostrophe."""
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    cell.data_type = "s"
