"""How the `assay` commands print: a result as JSON (--json) or as lines a person reads, the
progress lines of long commands, which go to stderr so that stdout stays the result, and the one
sentence that refuses a file they cannot write."""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Any, Self

from app import destinations
from app.errors import InvalidInput, file_problem
from app.ingest.documents import PageProgress
from app.judging.runs import Progress
from app.project import Project


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


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO}


def protected_problem(out: Path, project: Project | None, kind: str | None = None) -> str | None:
    """Why `out` must not be written, for the open `project` (app/destinations.py says it)."""
    return destinations.protected_problem(out, project.url if project is not None else None, kind)


@contextmanager
def writing(
    out: Path,
    *,
    folder: bool = False,
    project: Project | None = None,
    kind: str | None = None,
    make_folder: bool = False,
) -> Iterator[None]:
    """Around what writes the file `out` (with `folder`: files in the folder `out`): a folder given
    for the file, a folder that does not exist, a file in the way of a folder, a denied permission, a
    name too long or a full disk is refused in one sentence naming `out`; an error about any other
    path stays a bug. Nothing is written over a project, its logs or backups, a device or a pipe, or a
    file holding other data than a `kind` file (app/destinations.py; `project`: the open one, found
    by its path too). A file this command started and could not finish is removed. `make_folder`: a
    missing folder is no error, the writer makes it (once it has checked what it writes)."""
    if problem := destinations.name_problem(out):
        raise InvalidInput(destinations.shown(out), problem)
    try:
        problem = None if folder else protected_problem(out, project, kind)
    except RuntimeError:  # Python 3.11's word for a symbolic link that loops, met resolving the path
        raise InvalidInput(str(out), "cannot write it: a symbolic link in its path points to itself") from None
    if problem:
        raise InvalidInput(str(out), problem)
    if out.is_dir() and not folder:
        raise InvalidInput(str(out), "it is a folder: give the name of the file to write")
    parent = out.absolute().parent
    missing = not folder and not parent.exists() and not any(p.is_file() for p in parent.parents)
    if missing and not make_folder:
        raise InvalidInput(str(out), f"cannot write it: the folder {parent} does not exist")
    existed = out.exists()
    try:
        yield
    except OSError as exc:
        target = out.absolute()
        where = Path(exc.filename).absolute() if exc.filename is not None else None
        full = exc.errno in _FULL
        if not full and (
            where is None or not (where == target or where in target.parents or (folder and target in where.parents))
        ):
            raise
        _release(exc)
        if not existed and not folder and out.is_file():
            out.unlink(missing_ok=True)
        raise InvalidInput(str(out), f"cannot write {'there' if folder else 'it'}: {file_problem(exc)}") from exc
    except Exception as exc:
        said = _LXML_IO.get(str(exc)) if type(exc).__name__ == "SerialisationError" else None
        if said is not None:  # lxml under openpyxl: an .xlsx's sheet could not be written out
            _release(exc)
        if not existed and not folder and out.is_file():
            out.unlink(missing_ok=True)
        if said is None:
            raise
        raise InvalidInput(str(out), f"cannot write it: {said}") from exc
    except BaseException:
        if not existed and not folder and out.is_file():
            out.unlink(missing_ok=True)
        raise


_LXML_IO = {  # lxml's words for a failed write (its SerialisationError), as file_problem says them
    "IO_ENOSPC": "no space left on device",
    "IO_EFBIG": "file too large",
    "IO_EDQUOT": "disk quota exceeded",
    "IO_EIO": "input/output error",
    "IO_EROFS": "read-only file system",
}


def _release(exc: BaseException) -> None:
    """Let go, now and quietly, of what a failed writer held: a half-written zip or sheet whose own
    clean-up, run later by the garbage collector, fails on the same full disk and prints `Exception
    ignored in …` tracebacks after our one sentence."""
    import gc
    import traceback

    hook = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    try:
        seen: set[int] = set()
        current: BaseException | None = exc
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            traceback.clear_frames(current.__traceback__)
            current = current.__context__
        gc.collect()
    finally:
        sys.unraisablehook = hook


BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}{unit} [{elapsed}<{remaining}{postfix}]"


class ProgressBar:
    """A long command's progress on stderr, drawn by tqdm: a bar, the count, the rate and the time left.
    Quiet when stderr is no terminal (a pipe, a log file, CI): the command's output stays its result.
    Use it as a context manager; call it with how many of how many are done, and any figures to show."""

    def __init__(self, what: str, unit: str, *, leave: bool = True) -> None:
        self.what, self.unit, self.leave = what, unit, leave
        self._bar: Any = None

    def __call__(self, done: int, total: int, **figures: object) -> None:
        from tqdm import tqdm  # type: ignore[import-untyped]

        if self._bar is None:
            self._bar = tqdm(
                total=total,
                desc=self.what,
                unit=f" {self.unit}",
                file=sys.stderr,
                disable=None,  # None: quiet where stderr is no terminal
                leave=self.leave,
                dynamic_ncols=True,
                bar_format=BAR_FORMAT,
            )
        bar = self._bar
        if bar.total != total:
            bar.total = total
        if figures:
            bar.set_postfix({k: v for k, v in figures.items() if v is not None}, refresh=False)
        if done != bar.n:
            bar.update(done - bar.n)
        else:
            bar.refresh()  # the figures beside an unchanged count

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class PageBars:
    """The pages of each document being read, one bar a document (gone once it is read): a scan's OCR
    takes seconds a page, a text layer milliseconds."""

    def __init__(self) -> None:
        self._bar: ProgressBar | None = None
        self._document: str | None = None

    def __call__(self, progress: PageProgress) -> None:
        if progress.document != self._document:
            self.close()
            self._document = progress.document
            doing = "OCR" if progress.ocr else "reading"
            self._bar = ProgressBar(f"{doing} {progress.document}", "pages", leave=False)
        assert self._bar is not None
        self._bar(progress.done, progress.total)
        if progress.done >= progress.total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self._bar, self._document = None, None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class JudgeBar(ProgressBar):
    """A judge run's answers: failures and tokens a second beside the count."""

    def __init__(self, what: str = "judging") -> None:
        super().__init__(what, "answers")

    def judged(self, progress: Progress) -> None:
        self(progress.done, progress.total, failed=progress.failed, tok_s=f"{progress.tokens_per_second:.0f}")


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def ci(figures: dict[str, Any] | None) -> str:
    """An estimate with its interval: `0.812 [0.760, 0.860]`."""
    if not figures:
        return "—"
    low, high = figures["ci"]
    return f"{figures['estimate']:.3f} [{low:.3f}, {high:.3f}]"
