"""Where an output of Assay may go: never over the open project, its write-ahead log, shared memory or
journal, one of its backups, any other database (plain SQLite or encrypted, which has no header to
read), a file of another kind than the one written, a device or a pipe (a mistyped name would wipe a
project, hang, or sign what was never written). Every writer asks here first, the command line's and
the window's alike."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from app.errors import InvalidInput
from storage.db import sqlite_path
from storage.integrity import SQLITE_HEADER, looks_encrypted

SIDECARS = ("-wal", "-shm", "-journal")
PROJECT_SUFFIX = ".assay"
KINDS = ("text", "pdf", "zip", "png", "project")  # what a writer writes: CSV, JSON and HTML are text; XLSX is zip
_STARTS = {"pdf": (b"%PDF",), "zip": (b"PK\x03\x04", b"PK\x05\x06"), "png": (b"\x89PNG",)}
_NAMES = {"text": "text", "pdf": "a PDF", "zip": "a ZIP or XLSX file", "png": "a PNG picture"}
_BY_SUFFIX = {".pdf": "pdf", ".xlsx": "zip", ".zip": "zip", ".png": "png"}


def kind_of(out: Path) -> str:
    """What a writer that does not say writes, by the file's suffix: text unless .pdf, .xlsx, .zip, .png."""
    return _BY_SUFFIX.get(out.suffix.lower(), "text")


def shown(out: Path) -> str:
    """The path as an error names it: a name too long to read is cut."""
    text = str(out)
    return text if len(text) <= 80 else f"{text[:60]}…{text[-16:]}"


def name_problem(out: Path) -> str | None:
    """Why no file can have this name (the file system's limit on a name's length), or None."""
    try:
        os.lstat(out)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            return "the name is too long for the file system: give a shorter one"
    except ValueError:  # a NUL byte, which the window's text field lets through
        return "the name holds a NUL character, which no file name may"
    return None


def _same(a: Path, b: Path) -> bool:
    """One file by path or by identity (a link, another spelling of the path)."""
    if a.absolute() == b.absolute() or a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def protected_problem(out: Path, project_url: str | None, kind: str | None = None) -> str | None:
    """Why `out` must not be written with a file of `kind` (KINDS; by default `kind_of(out)`), or
    None: its name is too long; it is the open project (`project_url`), its write-ahead log, shared
    memory or journal, or in its backup folder; it is named like a project (unless a project is
    written) or a database's log, or has such a log beside it; it is a device or a pipe; or it holds
    a database or data of another kind (an encrypted project reads as random bytes)."""
    if problem := name_problem(out):
        return problem
    if project_url is not None and (path := sqlite_path(project_url)) is not None:
        if _same(out, path):
            return "it is the open project: writing there would destroy it; give another file name"
        if any(_same(out, path.with_name(path.name + end)) for end in SIDECARS):
            return "it is the open project's own log file: writing there would damage it; give another file name"
        from app.backups import backup_folder

        try:
            backups: Path | None = backup_folder(path).resolve()
        except (OSError, ValueError):
            backups = None
        if backups is not None and (out.resolve() == backups or backups in out.resolve().parents):
            return "it is in the project's backup folder: give a file name outside it"
    kind = kind or kind_of(out)
    name = out.name.lower()
    if name.endswith(SIDECARS):
        return "it is named like a database's log file (-wal, -shm, -journal): writing there could damage that database"
    if kind != "project" and name.endswith(PROJECT_SUFFIX):
        return "it is named like an Assay project (.assay): give the output another name"
    if beside := next((out.name + end for end in SIDECARS if os.path.lexists(out.with_name(out.name + end))), None):
        return f"a database's log file ({beside}) lies beside it, so it is a database: give another name"
    try:
        status = os.stat(out)
    except OSError:
        return None  # not there (or not to be read): the write says why
    if stat.S_ISDIR(status.st_mode):
        return None  # the writer says a folder is no file
    if not stat.S_ISREG(status.st_mode):
        return "it is not a regular file (a device or a pipe): give the name of a file to write"
    return _content_problem(out, kind) if status.st_size else None


def _content_problem(out: Path, kind: str) -> str | None:
    """Why the file there, which is not empty, must not be replaced by one of `kind`."""
    try:
        with out.open("rb") as handle:
            head = handle.read(4096)
        encrypted = looks_encrypted(out)
    except OSError:
        return None  # unreadable: the write says why
    if head.startswith(SQLITE_HEADER) or encrypted:
        which = "an encrypted database" if encrypted else "a database"
        return f"it is {which} (an Assay project?): writing there would destroy it; give another name"
    if kind == "project":
        return "it exists already: a project is written to a new file"
    fits = _is_text(head) if kind == "text" else head.startswith(_STARTS.get(kind, ()))
    if fits:
        return None
    return f"it is not {_NAMES.get(kind, kind)} but other data: writing there would destroy it; give another name"


def _is_text(head: bytes) -> bool:
    """UTF-8 without a NUL byte, as an earlier CSV, JSON or HTML export is."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and b"\x00" not in head  # only a character cut by the sample's end
    return b"\x00" not in head


def refuse_protected(out: Path, project_url: str | None, kind: str | None = None) -> None:
    """InvalidInput naming `out` when it must not be written with a file of `kind` (`protected_problem`)."""
    if problem := protected_problem(out, project_url, kind):
        raise InvalidInput(shown(out), problem)
