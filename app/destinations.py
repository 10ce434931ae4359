"""Where an output of Assay may go: never over the open project, its write-ahead log, shared memory or
journal, one of its backups, or any other SQLite database (a mistyped name would wipe a project).
Every writer asks here first, the command line's and the window's alike."""

from __future__ import annotations

import os
from pathlib import Path

from app.errors import InvalidInput
from storage.db import sqlite_path

SQLITE_HEADER = b"SQLite format 3\x00"
SIDECARS = ("-wal", "-shm", "-journal")


def _same(a: Path, b: Path) -> bool:
    """One file by path or by identity (a link, another spelling of the path)."""
    if a.absolute() == b.absolute() or a.resolve() == b.resolve():
        return True
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def protected_problem(out: Path, project_url: str | None) -> str | None:
    """Why `out` must not be written, or None: it is the open project (`project_url`), its write-ahead
    log, shared memory or journal, in its backup folder, or another SQLite database."""
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
    try:
        if out.is_file():
            with out.open("rb") as handle:
                if handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
                    return "it is a database (an Assay project?): writing there would destroy it; give another name"
    except OSError:
        pass  # unreadable: the write says why
    return None


def refuse_protected(out: Path, project_url: str | None) -> None:
    """InvalidInput naming `out` when it must not be written (see `protected_problem`)."""
    if problem := protected_problem(out, project_url):
        raise InvalidInput(str(out), problem)
