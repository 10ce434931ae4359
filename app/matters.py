"""Matters and ethical walls: making matters, putting people on them (walls refused, and audited),
importing into one, scoping figures and exports to one, and sending one out as its own encrypted project.

A matter (client, matter number, name) owns its documents and everything about them. Documents
imported before matters existed are unassigned: seen by whoever sees the project, as before. On a
database server the walls are the database's own (row-level security, migration 0019): a person
on a matter is the database login of that name, and a login sees nothing of a matter it is not on,
through Assay or any other client. On a SQLite project a matter is a scope; `export_matter` gives a
reviewer a project holding only the matter they are on.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from sqlalchemy.exc import IntegrityError, ProgrammingError

from app.errors import InvalidInput
from app.project import MATTER_NAME, Project
from storage import matters as store
from storage.db import open_project, url_for_path
from storage.documents import document_by_name
from storage.matters import Matter
from storage.reviews import set_setting

__all__ = ["Matter"]

LIMITS = {"--client": 200, "--create": 100, "--name": 300, "person": 200}  # the columns' sizes


def _text(what: str, value: str | None) -> str:
    cleaned = " ".join((value or "").split())
    if not cleaned:
        raise InvalidInput(what, "it is empty")
    if len(cleaned) > LIMITS[what]:
        raise InvalidInput(what, f"at most {LIMITS[what]} characters")
    return cleaned


def _refused_by_server(exc: Exception) -> bool:
    """Whether the database refused the write for want of rights (row-level security or a grant)."""
    return getattr(getattr(exc, "orig", None), "sqlstate", None) == "42501"


NOT_ADMIN = "only the database's owner (or a login granted its role) administers matters"


def _administer(project: Project) -> None:
    with project.sessions() as session:
        if not store.administers(session):
            raise InvalidInput("matters", NOT_ADMIN)


def actor_of(project: Project, given: str | None) -> str:
    """Who acts: on a server the database login (what the walls know), else the name given or the user's."""
    import getpass

    with project.sessions() as session:
        login = store.login(session)
    return login or (given or "").strip() or getpass.getuser()


def list_matters(project: Project) -> list[Matter]:
    with project.sessions() as session:
        return store.matters(session)


def find(project: Project, reference: str) -> Matter:
    """The matter a person names (its number, CLIENT/NUMBER or its name); one sentence if none or several."""
    with project.sessions() as session:
        found = store.matters_matching(session, reference)
    if not found:
        raise InvalidInput(f"matter {reference!r}", "no such matter (`assay matters` lists those you may see)")
    if len(found) > 1:
        raise InvalidInput(f"matter {reference!r}", f"{len(found)} matters have that number: write CLIENT/NUMBER")
    return found[0]


def documents_by_matter(project: Project) -> list[tuple[Matter | None, list[str]]]:
    """Each matter this user may see with its documents' names, then the unassigned documents (None)."""
    with project.sessions() as session:
        documents = store.documents_by_matter(session)
        found: list[tuple[Matter | None, list[str]]] = [(m, documents.get(m.id, [])) for m in store.matters(session)]
    return found + ([(None, documents[None])] if documents.get(None) else [])


def holdings(project: Project, matter: Matter) -> dict[str, int]:
    with project.sessions() as session:
        return store.holdings(session, matter)


def create(project: Project, client: str, number: str, name: str, actor: str) -> Matter:
    client, number, name = _text("--client", client), _text("--create", number), _text("--name", name)
    if "/" in number:
        raise InvalidInput("--create", "a matter number has no '/' (it separates client and number)")
    _administer(project)
    with project.sessions() as session:
        if any(m.client == client and m.number == number for m in store.matters(session)):
            raise InvalidInput(f"matter {number!r}", f"{client} already has a matter numbered {number}")
    try:
        with project.sessions.begin() as session:
            return store.create_matter(session, client, number, name, actor)
    except IntegrityError as exc:  # made by someone else meanwhile, or one this login cannot see
        raise InvalidInput(f"matter {number!r}", f"{client} already has a matter numbered {number}") from exc
    except ProgrammingError as exc:
        if _refused_by_server(exc):
            raise InvalidInput("matters", NOT_ADMIN) from exc
        raise


def add_person(project: Project, reference: str, person: str, actor: str) -> Matter:
    """Put a person on a matter. A person walled from its client is refused, and the attempt audited."""
    person = _text("person", person)
    matter = find(project, reference)
    _administer(project)
    if person in matter.members:
        raise InvalidInput(person, f"is already on matter {matter.label}")
    with project.sessions() as session:
        wall = next((w for w in store.walls(session, person) if store.same_client(w.client, matter.client)), None)
    if wall is not None:
        with project.sessions.begin() as session:
            from storage.audit import append_audit

            append_audit(
                session,
                actor,
                "matter.member_refused",
                "matter",
                str(matter.id),
                {"person": person, "client": matter.client, "wall": wall.reason},
            )
        client = wall.client if wall.client == matter.client else f"{wall.client} (as {matter.client} is written)"
        raise InvalidInput(
            person, f"is walled from {client}: not added to {matter.label} (the attempt is in the audit log)"
        )
    with project.sessions.begin() as session:
        store.add_member(session, matter, person, actor)
    return find(project, f"{matter.client}/{matter.number}")


def remove_person(project: Project, reference: str, person: str, actor: str) -> Matter:
    person = _text("person", person)
    matter = find(project, reference)
    _administer(project)
    if person not in matter.members:
        raise InvalidInput(person, f"is not on matter {matter.label}")
    with project.sessions.begin() as session:
        store.remove_member(session, matter, person, actor)
    return find(project, f"{matter.client}/{matter.number}")


def wall(project: Project, person: str, client: str, reason: str | None, actor: str) -> None:
    """Wall a person from a client: refused while they are on one of its matters, or walled already."""
    person, client = _text("person", person), _text("--client", client)
    _administer(project)
    with project.sessions() as session:
        walled = next((w for w in store.walls(session, person) if store.same_client(w.client, client)), None)
        if walled is not None:
            raise InvalidInput(person, f"is already walled from {walled.client}")
        on = [m for m in store.matters(session) if store.same_client(m.client, client) and person in m.members]
    if on:
        raise InvalidInput(person, f"is on {on[0].label}: take them off it first (--remove {person} --from …)")
    with project.sessions.begin() as session:
        store.add_wall(session, person, client, (reason or "").strip() or None, actor)


def unwall(project: Project, person: str, client: str, actor: str) -> None:
    person, client = _text("person", person), _text("--client", client)
    _administer(project)
    with project.sessions() as session:
        walled = next((w for w in store.walls(session, person) if store.same_client(w.client, client)), None)
    if walled is None:
        raise InvalidInput(person, f"is not walled from {client}")
    with project.sessions.begin() as session:
        store.remove_wall(session, person, walled.client, actor)


def walls(project: Project) -> list[store.Wall]:
    with project.sessions() as session:
        return store.walls(session)


def archive(project: Project, reference: str, actor: str) -> Matter:
    matter = find(project, reference)
    _administer(project)
    if matter.archived_at is not None:
        raise InvalidInput(f"matter {reference!r}", f"{matter.label} is already archived")
    with project.sessions.begin() as session:
        store.archive_matter(session, matter, actor)
    return find(project, f"{matter.client}/{matter.number}")


def delete(project: Project, reference: str, actor: str) -> dict[str, int]:
    """Delete a matter no one has reviewed, with its documents; one with reviews is refused (archive it)."""
    matter = find(project, reference)
    _administer(project)
    held = holdings(project, matter)
    reviewed = held["reviews"] + held["reviewer_tags"] + held["signoffs"]
    if reviewed:
        what = f"{held['reviews']} reviews, {held['reviewer_tags']} reviewers' tags and {held['signoffs']} sign-offs"
        raise InvalidInput(
            f"matter {reference!r}",
            f"{matter.label} holds {what}: it is not deleted; archive it instead (--archive {reference})",
        )
    with project.sessions.begin() as session:
        store.delete_matter(session, matter, actor)
    return held


def assign(project: Project, reference: str, document: str, actor: str) -> int:
    """File an unassigned document (and its answers, points, tags…) under a matter; the rows moved."""
    matter = find(project, reference)
    _administer(project)
    name = project.document_named(document)
    with project.sessions() as session:
        row = document_by_name(session, name)
        assert row is not None
        current = store.document_matters(session, [name]).get(name)
    if current == matter.id:
        raise InvalidInput(name, f"is already in matter {matter.label}")
    if current is not None:
        raise InvalidInput(name, "is in another matter: a document stays in the matter it was filed under")
    with project.sessions.begin() as session:
        return store.assign_document(session, row.id, matter, actor)


def filing_into(project: Project, reference: str, dataset: Path) -> Project:
    """The project, its new documents filed under the matter, for `assay import --matter`. Refused first:
    an archived matter, a document or answer of the dataset already in the project outside the matter
    (its answers would go to the document's matter, not this one)."""
    from app.ingest.datasets import read_dataset

    matter = find(project, reference)
    if matter.archived_at is not None:
        raise InvalidInput(f"matter {reference!r}", f"{matter.label} is archived: nothing is imported into it")
    rows, _ = read_dataset(dataset)
    with project.sessions() as session:
        documents = store.document_matters(session, {r.document for r in rows})
        answers = store.answer_matters(session, [r.id for r in rows])
    for row in rows:
        if row.document in documents and documents[row.document] != matter.id:
            where = "is unassigned" if documents[row.document] is None else "is in another matter"
            raise InvalidInput(
                row.place, f"document {row.document!r} {where} in this project, not in {matter.label}: nothing imported"
            )
        if row.id in answers and answers[row.id] != matter.id:
            raise InvalidInput(row.place, f"answer {row.id!r} is already in this project outside {matter.label}")
    return replace(project, sessions=store.filing_sessions(project.sessions, matter.id))


# ---------------------------------------------------------------- one matter, on its own


def _file_name(matter: Matter) -> str:
    return re.sub(r"[^\w.,() -]+", "-", f"{matter.client} {matter.number}").strip(" .-") or f"matter {matter.id}"


def _copy_into(project: Project, matter: Matter, out: Path, passphrase: str, actor: str) -> dict[str, int]:
    target = open_project(url_for_path(out), passphrase)
    try:
        with project.sessions() as source_session, target.begin() as target_session:
            copied = store.copy_matter(source_session.connection(), target_session.connection(), matter.id, actor)
            set_setting(target_session, MATTER_NAME, f"{matter.client} {matter.number}: {matter.name}")  # the title
        with target.begin() as target_session:  # the copy whole in its one file, for a rename to move
            target_session.connection().exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        target.kw["bind"].dispose()
    return copied


# A project file's name leaves room for SQLite's "-wal" and "-shm" beside it, within the 255 bytes of
# a name on every file system Assay runs on.
LONGEST_NAME = 250
_PARTIAL = re.compile(r"\.assay-export-(\d+)-[0-9a-f]{8}\.partial(-wal|-shm|-journal)?$")


def destination_problem(out: Path) -> str | None:
    """Why a matter cannot be written to `out` (it exists, or its name is too long); None when it can."""
    if len(os.fsencode(out.name)) > LONGEST_NAME:
        return f"its name is too long ({len(os.fsencode(out.name))} bytes; at most {LONGEST_NAME})"
    try:
        if out.exists():
            return "it exists already: give the name of a new project file"
    except OSError as exc:  # a path the system refuses to look at (too long as a whole, a loop)
        return f"cannot write it: {exc.strerror or exc}"
    return None


def export_matter(project: Project, reference: str, out: Path, passphrase: str | None, actor: str) -> dict[str, int]:
    """Write one matter as its own project file, encrypted with `passphrase` (SQLCipher), holding no row
    of any other matter nor the project's unassigned ones; its audit log a chain of its own that
    `audit verify` checks (storage/matters.py). It is written beside `out` under a hidden name and
    renamed into place once whole: a killed export leaves no `out`, only that encrypted partial file,
    which the next export into the folder removes. Nothing is left behind on failure."""
    matter = find(project, reference)
    if not passphrase:
        raise InvalidInput("--export", "a matter leaves encrypted: give a passphrase (ASSAY_PASSPHRASE or asked)")
    if problem := destination_problem(out):
        raise InvalidInput(str(out) if len(str(out)) <= 80 else f"{out.name[:40]}…", problem)
    _remove_stale(out.absolute().parent, _PARTIAL)
    partial = out.absolute().with_name(f".assay-export-{os.getpid()}-{secrets.token_hex(4)}.partial")
    try:
        copied = _copy_into(project, matter, partial, passphrase, actor)
        os.replace(partial, out)
        return copied
    finally:
        for leftover in (partial, *(partial.with_name(partial.name + end) for end in ("-wal", "-shm", "-journal"))):
            leftover.unlink(missing_ok=True)


_SCOPED = re.compile(r"assay-matter-(\d+)-")


def _remove_stale(folder: Path, pattern: re.Pattern[str]) -> None:
    """Remove what a killed Assay left in `folder`: entries named by `pattern` (its first group the
    process id) whose process is gone, or, where that cannot be told, a week old."""
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        found = pattern.match(entry.name)
        if found is None or not _gone(int(found.group(1)), entry):
            continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _gone(pid: int, entry: Path) -> bool:
    if pid == os.getpid():
        return False
    if os.name == "posix":
        try:
            os.kill(pid, 0)  # signal 0: only asks whether the process is there
        except ProcessLookupError:
            return True
        except PermissionError:
            return False  # another user's, and alive
        return False
    try:  # os.kill would end the process on Windows: age alone says
        return time.time() - entry.stat().st_mtime > 7 * 24 * 3600
    except OSError:
        return False


@contextmanager
def scoped(project: Project, reference: str) -> Iterator[tuple[Project, Matter]]:
    """The project as one matter alone: a copy of its rows in a private temporary project, which every
    figure, export and report reads as it reads a project. The copy is always encrypted, with a random
    key that never leaves this process: a killed command leaves only ciphertext no one can open, which
    the next command on one matter removes."""
    matter = find(project, reference)
    _remove_stale(Path(tempfile.gettempdir()), _SCOPED)
    folder = Path(tempfile.mkdtemp(prefix=f"assay-matter-{os.getpid()}-"))
    key = f"x'{secrets.token_hex(32)}'"  # a raw 256-bit key: no key derivation on each connection
    try:
        path = folder / f"{_file_name(matter)}.assay"
        _copy_into(project, matter, path, key, actor_of(project, None))
        view = Project.open(url_for_path(path), key)
        try:
            yield view, matter
        finally:
            view.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
