"""Copies of a project file made with SQLite's online backup API, and the full check of a file.

The backup API copies a consistent snapshot while the application keeps writing (WAL readers do
not block writers). An encrypted project is copied page by page through SQLCipher with the same
key, so its copy is encrypted as well. A copy is written beside its target and renamed into
place only once SQLite's check passes: a target is whole or absent, never half-written.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

from storage.db import ProjectDamaged, StorageError, WrongPassphrase
from storage.integrity import full_check, inspect_file


def _open(path: Path, passphrase: str | None, timeout: float = 5) -> Any:
    if passphrase is None:
        connection = sqlite3.connect(path, timeout=timeout)
    else:
        import sqlcipher3.dbapi2 as sqlcipher

        connection = sqlcipher.connect(str(path), timeout=timeout)
        connection.execute("PRAGMA cipher_log_level = NONE")
        connection.execute("PRAGMA key = '" + passphrase.replace("'", "''") + "'")
    return connection


def check_file(path: Path, passphrase: str | None = None) -> str | None:
    """None when the file is a sound database (every page read back); else what is wrong."""
    if not path.is_file() or path.stat().st_size == 0:
        return "the file is missing or empty"
    try:
        if passphrase is None:
            inspect_file(path)
    except StorageError as exc:
        return getattr(exc, "problem", None) or str(exc)
    uri = path.resolve().as_uri() + "?mode=ro"  # a check never creates or changes what it checks
    connection = _open(path, passphrase) if passphrase else sqlite3.connect(uri, uri=True, timeout=5)
    try:
        problem = full_check(connection)
    finally:
        connection.close()
    if problem and passphrase and "not readable" in problem:
        return "the passphrase does not open it, or its first page is damaged"
    return problem


def open_elsewhere(path: Path, passphrase: str | None = None, wait_s: float = 1.0) -> bool:
    """Whether a connection this process does not count has the file open: another Assay window or command.
    SQLite refuses an exclusive lock while any connection, in any process, has read the file in WAL mode. A file
    too damaged to be read is held by nobody who could use it: False."""
    if not path.is_file():
        return False
    connection = _open(path, passphrase, timeout=wait_s)
    connection.isolation_level = None  # the BEGIN below is ours, not the driver's
    try:
        connection.execute("PRAGMA locking_mode = EXCLUSIVE")
        connection.execute("BEGIN EXCLUSIVE")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchall()  # the lock is taken at the first read
        connection.execute("COMMIT")
    except Exception as exc:  # sqlite3's and sqlcipher3's OperationalError are different classes
        if type(exc).__name__ not in {"DatabaseError", "OperationalError"}:
            raise
        return "locked" in str(exc) or "busy" in str(exc)
    finally:
        connection.close()
    return False


def copy_database(source: Path, target: Path, passphrase: str | None = None) -> None:
    """Copy `source` to `target` (replaced whole, in one step) and check the copy; a damaged source
    raises ProjectDamaged and leaves no target behind."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    problem: str | None = None
    src = _open(source, passphrase)
    try:
        dst = _open(partial, passphrase)
        try:
            src.backup(dst)
            problem = full_check(dst)
        except Exception as exc:  # sqlite3's and sqlcipher3's DatabaseError are different classes
            if type(exc).__name__ not in {"DatabaseError", "OperationalError"}:
                raise
            problem = str(exc)
        finally:
            dst.close()
    finally:
        src.close()
    if problem is not None:
        partial.unlink(missing_ok=True)
        if passphrase and "not a database" in problem:
            raise WrongPassphrase(f"wrong passphrase for {source}, or its first page is damaged")
        raise ProjectDamaged(source, problem)
    with partial.open("rb") as handle:
        os.fsync(handle.fileno())
    os.replace(partial, target)
    with contextlib.suppress(OSError):  # the rename itself survives a power cut once the folder is synced
        folder = os.open(target.parent, os.O_RDONLY)
        os.fsync(folder)
        os.close(folder)
