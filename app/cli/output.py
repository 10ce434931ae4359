"""How the `assay` commands print: a result as JSON (--json) or as lines a person reads, the
progress lines of long commands, which go to stderr so that stdout stays the result, and the one
sentence that refuses a file they cannot write."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any

from app.errors import InvalidInput, file_problem
from app.ingest.documents import PageProgress
from app.judging.runs import Progress


def print_summary(summary: Any, as_json: bool, text: Callable[[], str]) -> None:
    """A command's result: as JSON with --json (a dataclass as its dict), else the text `text` makes."""
    if as_json:
        print(json.dumps(asdict(summary) if is_dataclass(summary) and not isinstance(summary, type) else summary))
    else:
        print(text())


def print_json_or_lines(value: dict[str, Any], as_json: bool) -> None:
    """A flat dict of figures: as JSON, or one `name value` line each (long lists counted)."""
    if as_json:
        print(json.dumps(value))
        return
    for key, item in value.items():
        if isinstance(item, float):
            item = f"{item:.3f}"
        elif isinstance(item, list) and len(item) > 8:
            item = f"{len(item)} items"
        print(f"{key:20} {item}")


@contextmanager
def writing(out: Path, *, folder: bool = False) -> Iterator[None]:
    """Around what writes the file `out` (with `folder`: files in the folder `out`): a folder given
    for the file, a file in the way of a folder or a denied permission is refused in one sentence
    naming `out`; an error about any other path stays a bug."""
    if out.is_dir() and not folder:
        raise InvalidInput(str(out), "it is a folder: give the name of the file to write")
    try:
        yield
    except OSError as exc:
        target = out.absolute()
        where = Path(exc.filename).absolute() if exc.filename is not None else None
        if where is None or not (where == target or where in target.parents or (folder and target in where.parents)):
            raise
        raise InvalidInput(str(out), f"cannot write {'there' if folder else 'it'}: {file_problem(exc)}") from exc


def print_pages(progress: PageProgress) -> None:
    """Only scans are worth a progress line: OCR takes seconds a page, a text layer milliseconds."""
    if progress.ocr:
        end = "\n" if progress.done == progress.total else ""
        print(f"\rOCR {progress.document}: page {progress.done}/{progress.total}", end=end, file=sys.stderr, flush=True)


def print_progress(progress: Progress) -> None:
    width = 24
    filled = int(width * progress.done / max(progress.total, 1))
    eta = f"{int(progress.eta_seconds // 60)}:{int(progress.eta_seconds % 60):02d}" if progress.eta_seconds else "-"
    print(
        f"\rjudging [{'#' * filled}{'.' * (width - filled)}] {progress.done}/{progress.total} answers"
        f" · {progress.failed} failed · {progress.tokens_per_second:.0f} tok/s · ETA {eta}  ",
        end="",
        file=sys.stderr,
        flush=True,
    )


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def ci(figures: dict[str, Any] | None) -> str:
    """An estimate with its interval: `0.812 [0.760, 0.860]`."""
    if not figures:
        return "—"
    low, high = figures["ci"]
    return f"{figures['estimate']:.3f} [{low:.3f}, {high:.3f}]"
