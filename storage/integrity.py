"""Is this file a sound Assay project? Cheap checks when a project opens, the full one on demand.

SQLite's own answer to a damaged file is "database disk image is malformed", raised from whatever
query first reads the bad page. These checks turn that into one sentence saying what is wrong:
- `inspect_file` reads only the header (constant time): a file cut short, a file that is no
  SQLite database and no encrypted project either (a PDF, a ZIP, text, random bytes);
- `check_structure` reads the schema and each table's first page after connecting: a SQLite
  database that is not Assay's, or a damaged schema;
- `full_check` is `PRAGMA quick_check`: every page, a few seconds on a large project, so the
  window runs it in the background (every backup is checked with it too);
- `integrity_problems` is what `audit verify` runs (`integrity_check`: every page and every index
  against its table), and `refuse_damaged` what a sign-off runs before it signs (`quick_check`).
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DatabaseError

from storage.errors import NotAProject, ProjectDamaged, StorageError

SQLITE_HEADER = b"SQLite format 3\x00"
_MIN_PAGE = 512  # SQLite's (and SQLCipher's) smallest page
_CIPHER_ENTROPY = 7.0  # bits per byte; ciphertext is ~8, text ~4.5, a PDF's header page ~6
_FORMATS = {  # what a file that is not a project most often turns out to be
    b"%PDF": "a PDF document",
    b"PK\x03\x04": "a ZIP archive (a DOCX or XLSX document, or a review bundle?)",
    b"\xd0\xcf\x11\xe0": "an old Office document",
}
_JSON_STARTS = (b"{", b"[")  # one byte: ciphertext starts so once in 128 pages, so JSON must also read as text
_DAMAGE_WORDS = ("malformed", "not a database", "corrupt", "disk i/o", "database disk image")


def _entropy(data: bytes) -> float:
    counts = Counter(data)
    return -sum(n / len(data) * math.log2(n / len(data)) for n in counts.values()) if data else 0.0


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 3  # only a character cut by the sample's end
    return True


def _kind(head: bytes) -> str:
    for magic, kind in _FORMATS.items():
        if head.startswith(magic):
            return kind
    sample = head[:2048]
    if sample.lstrip().startswith(_JSON_STARTS) and _is_utf8(sample):
        return "a JSON file"
    if sample and all(32 <= b < 127 or b in b"\t\r\n" for b in sample):
        return "a text file"
    return ""


def looks_encrypted(path: Path) -> bool:
    """Whether the file could be an SQLCipher project: whole pages of evenly spread bytes.
    Random bytes of the right length look the same (that is what encryption is for)."""
    size = path.stat().st_size
    if size < _MIN_PAGE or size % _MIN_PAGE:
        return False
    with path.open("rb") as file:
        head = file.read(4096)
    return not head.startswith(SQLITE_HEADER) and not _kind(head) and _entropy(head) > _CIPHER_ENTROPY


def inspect_file(path: Path) -> None:
    """Raise NotAProject or ProjectDamaged for what the header alone shows; a missing or empty file
    is a new project, an encrypted-looking one is for SQLCipher to open."""
    if not path.is_file():
        if path.exists():
            raise NotAProject(path, f"{path} is not an Assay project: it is a folder or a device, not a file")
        return
    size = path.stat().st_size
    if size == 0:
        return
    with path.open("rb") as file:
        head = file.read(4096)
    if not head.startswith(SQLITE_HEADER):
        if SQLITE_HEADER.startswith(head):
            raise ProjectDamaged(path, f"it is cut short: only {size} bytes are left (an interrupted copy?)")
        if looks_encrypted(path):
            return
        kind = _kind(head)
        cipher_like = not kind and _entropy(head[:4096]) > _CIPHER_ENTROPY
        raise NotAProject(
            path,
            f"{path} is not an Assay project: it is neither a SQLite database nor an encrypted project"
            + (f"; it looks like {kind}" if kind else "")
            + ("; if it was an encrypted project, it has been cut short" if cipher_like else ""),
        )
    if len(head) < 100:
        raise ProjectDamaged(path, f"it is cut short: only {size} bytes are left, not even its header")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < _MIN_PAGE or page_size & (page_size - 1):
        raise ProjectDamaged(path, "its header is damaged (it gives no valid page size)")
    pages = int.from_bytes(head[28:32], "big")
    header_valid = head[24:28] == head[92:96]  # SQLite's rule for trusting the page count
    expected = pages * page_size
    if (header_valid and 0 < size < expected) or size % page_size:
        whole = f" of the {expected:,} its header announces" if header_valid and size < expected else ""
        raise ProjectDamaged(path, f"it is cut short: {size:,} bytes{whole} (an interrupted copy or a full disk?)")


def check_structure(engine: Engine, path: Path) -> None:
    """After connecting: the schema reads, it is Assay's, and each table's first page reads."""
    with engine.connect() as connection:
        names = [r[0] for r in connection.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if names and "alembic_version" not in names:
            raise NotAProject(
                path,
                f"{path} is not an Assay project: it is a SQLite database of another program "
                f"(tables {', '.join(sorted(names)[:4])}{', …' if len(names) > 4 else ''})",
            )
        for name in names:
            if not name.startswith("sqlite_"):
                connection.exec_driver_sql(f'SELECT * FROM "{name}" LIMIT 1').all()


def full_check(connection: Any) -> str | None:
    """SQLite's quick_check on a DB-API connection: None when sound, else the first problem."""
    try:
        first = connection.execute("PRAGMA quick_check(1)").fetchone()
    except (sqlite3.DatabaseError, DatabaseError) as exc:
        return explain(exc)
    except Exception as exc:  # sqlcipher3 has its own DatabaseError class
        if type(exc).__name__ in {"DatabaseError", "OperationalError"}:
            return explain(exc)
        raise
    if first and first[0] == "ok":
        return None
    found = " ".join(str(first[0] if first else "no answer").replace("*** in database main ***", "").split())
    return f"SQLite's check of every page found: {found}"


CHECK_PROBLEMS = 10  # what `integrity_check` lists at most: enough to see the extent, bounded on a wreck


def integrity_problems(connection: Connection, *, thorough: bool = True) -> list[str]:
    """SQLite's own check of every page of the open project: `integrity_check` (each page, and every
    index against its table) or, not `thorough`, `quick_check` (each page: O(N), what signing needs).
    [] when sound or not SQLite (a server checks its own pages); else up to CHECK_PROBLEMS problems."""
    if connection.dialect.name != "sqlite":
        return []
    pragma = "integrity_check" if thorough else "quick_check"
    try:
        found = [str(r[0]) for r in connection.exec_driver_sql(f"PRAGMA {pragma}({CHECK_PROBLEMS})")]
    except DatabaseError as exc:
        return [explain(exc)]
    if found == ["ok"]:
        return []
    lines = [
        " ".join(line.split()) for row in found for line in row.replace("*** in database main ***", "").splitlines()
    ]
    return [line for line in lines if line][:CHECK_PROBLEMS] or ["no answer"]


def refuse_damaged(connection: Connection, path: Path | str, what: str) -> None:
    """ProjectDamaged when SQLite's quick check of every page finds damage: `what` (a signature) is
    not written into a file whose pages do not read back."""
    problems = integrity_problems(connection, thorough=False)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        found = f"{problems[0][:120]}{more}"
        raise ProjectDamaged(path, f"SQLite's check of every page found: {found}; {what} is not written into it")


def explain(exc: BaseException) -> str:
    message = str(getattr(exc, "orig", None) or exc).splitlines()[0]
    if "malformed" in message or "corrupt" in message:
        return f"some of its pages do not read back (SQLite: {message})"
    if "not a database" in message:
        return f"its first page is not readable (SQLite: {message})"
    return f"SQLite: {message}"


def as_storage_error(path: Path, exc: BaseException) -> StorageError:
    """A SQLite error met while opening: damage when SQLite says so, else why it cannot be opened."""
    message = str(getattr(exc, "orig", None) or exc).lower()
    if any(word in message for word in _DAMAGE_WORDS):
        return ProjectDamaged(path, explain(exc))
    return StorageError(f"{path} cannot be opened: {explain(exc).removeprefix('SQLite: ')}")
