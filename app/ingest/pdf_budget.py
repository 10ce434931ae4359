"""What one PDF page may make pdfminer do, counted before it is read: a page past any limit is refused
in one sentence, in moments and in bounded memory (a PDF bomb is not read for minutes at gigabytes).

Bytes alone do not bound the work: a 92 KB PDF whose pages draw one small form 15,000 times each made
pdfplumber build millions of characters (245 s, 17 GB). So a page's content streams, and each form it
draws as often as it draws it (forms within forms multiplied, each form measured once), are counted
in five ways, each against a limit far above a real page and far below what hurts:

- bytes of content, decoded (zlib decompressed no further than the limit);
- forms drawn (`Do` of a form XObject);
- operators, each of which pdfminer executes;
- characters shown (the bytes of the strings in the content; a hex string's two digits are one);
- shapes (each path begun with `m` or `re`, shading and inline image): pdfplumber builds an object of each.

Measured on this project's machines (bench: a page read by `pdf_units`, 2026-11-29): 40,000 characters
take about 3.7 s and 100 MB; 50,000 painted paths 12 s and 170 MB; 2,000,000 operators that draw
nothing 22 s. A dense page of a contract shows 3,000-6,000 characters and a few hundred shapes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.errors import InvalidInput

PAGE_DRAWING = 16 * 2**20  # bytes one page draws, decoded
PAGE_FORMS = 2_000  # forms a page draws
PAGE_OPERATORS = 250_000  # about 3 s of pdfminer
PAGE_CHARACTERS = 40_000  # about 4 s and 100 MB of pdfplumber
PAGE_SHAPES = 10_000  # about 2.5 s and 40 MB
DEPTH = 12  # forms inside forms: deeper is refused as too much

_DELIMITED = rb"(?<![^\s\[\]()<>{}%])"  # a token starts after white space or a delimiter ('/' starts a name)
_ENDS = rb"(?![^\s\[\]()<>{}/%])"
_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do" + _ENDS)
_OPERATOR = re.compile(_DELIMITED + rb"[A-Za-z'\"][A-Za-z0-9*'\"]*" + _ENDS)
_SHAPE = re.compile(_DELIMITED + rb"(?:m|re|sh|BI)" + _ENDS)
_LITERAL = re.compile(rb"\((?:[^()\\]|\\.)*\)", re.DOTALL)  # innermost: nested ones are peeled a level a pass
_HEX = re.compile(rb"<[0-9A-Fa-f\s]*>")
_NESTING = 8  # levels of parentheses inside a string peeled; deeper, the rest of the stream counts as text


@dataclass
class Work:
    """What drawing a stream once makes pdfminer do."""

    bytes: int = 0
    forms: int = 0
    operators: int = 0
    characters: int = 0
    shapes: int = 0

    def add(self, other: Work, times: int = 1) -> None:
        self.bytes += other.bytes * times
        self.forms += other.forms * times
        self.operators += other.operators * times
        self.characters += other.characters * times
        self.shapes += other.shapes * times

    def excess(self) -> str | None:
        """The first limit this passes, in words; None within every limit."""
        if self.bytes > PAGE_DRAWING:
            return f"draws over {_size(PAGE_DRAWING)} of content"
        if self.forms > PAGE_FORMS:
            return f"draws forms over {PAGE_FORMS:,} times"
        if self.characters > PAGE_CHARACTERS:
            return f"shows over {PAGE_CHARACTERS:,} characters"
        if self.shapes > PAGE_SHAPES:
            return f"draws over {PAGE_SHAPES:,} shapes"
        if self.operators > PAGE_OPERATORS:
            return f"runs over {PAGE_OPERATORS:,} drawing operators"
        return None


_TOO_MUCH = Work(bytes=PAGE_DRAWING + 1)  # a form that draws itself, or forms nested too deep


def _size(count: int) -> str:
    return f"{count / 2**20:,.0f} MiB" if count >= 2**20 else f"{count:,} bytes"


def check_drawing(path: Path, number: int, page: Any) -> None:
    """InvalidInput when page `number` (pdfminer's page) would make pdfminer do more than a page may."""
    budget = _Budget()
    try:
        for stream in page.contents:
            budget.draw(stream, page.resources)
    except _TooMuch as exc:
        raise InvalidInput(str(path), f"page {number} {exc.said}: not a document's page (a PDF bomb)") from None


class _TooMuch(Exception):
    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said


class _Budget:
    """What a page draws, counted against the limits; a form's work is found once (a form drawing
    another a hundred times, nested, is counted without being drawn)."""

    def __init__(self) -> None:
        self.used = Work()
        self.forms: dict[int, Work] = {}  # id of a form: what drawing it once does

    def draw(self, stream: Any, resources: Any) -> None:
        self.used.add(self._work(stream, resources, 0))
        self._check(self.used)

    @staticmethod
    def _check(work: Work) -> None:
        if (said := work.excess()) is not None:
            raise _TooMuch(said)

    def _work(self, stream: Any, resources: Any, depth: int) -> Work:
        from pdfminer.pdftypes import PDFStream, resolve1

        stream = resolve1(stream)
        if not isinstance(stream, PDFStream):
            return Work()
        if depth > DEPTH:
            self._check(_TOO_MUCH)
        data = _decoded(stream, PAGE_DRAWING)
        work = measure(data)
        self._check(work)
        drawn: dict[bytes, int] = {}
        for match in _DO.finditer(data):
            drawn[match.group(1)] = drawn.get(match.group(1), 0) + 1
        resources = resolve1(resources)
        xobjects = resolve1(resources.get("XObject")) if isinstance(resources, dict) else None
        for name, times in drawn.items():
            form = resolve1(xobjects.get(name.decode("latin-1"))) if isinstance(xobjects, dict) else None
            if not isinstance(form, PDFStream) or getattr(resolve1(form.get("Subtype")), "name", None) != "Form":
                continue
            key = id(form)
            if key not in self.forms:
                self.forms[key] = _TOO_MUCH  # a form that draws itself costs too much
                self.forms[key] = self._work(form, form.get("Resources") or resources, depth + 1)
            work.forms += times
            work.add(self.forms[key], times)
            self._check(work)
        return work


def measure(data: bytes) -> Work:
    """What one decoded content stream does, its forms not counted."""
    return Work(
        bytes=len(data),
        operators=_OPERATOR.subn(b"", data)[1],
        characters=_characters(data),
        shapes=_SHAPE.subn(b"", data)[1],
    )


def _characters(data: bytes) -> int:
    """The bytes of the strings a stream shows (an upper bound on its characters): literal strings,
    their nested parentheses peeled a level a pass, then hex strings, two digits a byte."""
    shown, rest = 0, data
    for _ in range(_NESTING):
        if b"(" not in rest:
            break
        peeled, found = _LITERAL.subn(b" ", rest)
        shown += len(rest) - len(peeled) + found  # each string's bytes, its parentheses and the space apart
        rest = peeled
        if not found:
            break
    if (opened := rest.find(b"(")) >= 0:  # unbalanced, or nested deeper than peeled: all of it counts
        shown += len(rest) - opened
        rest = rest[:opened]
    without_hex = _HEX.sub(b"", rest)
    return shown + (len(rest) - len(without_hex)) // 2


def _decoded(stream: Any, limit: int) -> bytes:
    """A stream's bytes decoded, zlib decompressed no further than `limit` (a few hundred KB of
    deflate can hold gigabytes); other filters through pdfminer."""
    import zlib

    from pdfminer.pdftypes import LITERALS_FLATE_DECODE, resolve1

    filters = [resolve1(f) for f, _ in stream.get_filters()]
    if stream.data is not None or not filters or any(f not in LITERALS_FLATE_DECODE for f in filters):
        return bytes(stream.get_data())
    data = stream.rawdata
    if stream.decipher:
        data = stream.decipher(stream.objid, stream.genno, data, stream.attrs)
    for _ in filters:
        try:
            data = zlib.decompressobj().decompress(data, limit + 1)
        except zlib.error:
            return bytes(stream.get_data())  # pdfminer's own recovery of a damaged stream
        if len(data) > limit:
            raise _TooMuch(f"draws over {_size(limit)} of content")
    return bytes(data)
