"""Rotating backups of a project file, and restoring one without losing the work made since.

Backups live in the user data folder (or the folder the settings or ASSAY_BACKUP_DIR name), one
sub-folder per project. Each is a consistent copy made with SQLite's online backup API and checked
page by page before it counts; an encrypted project's backups are encrypted with the same key.
Kept: the newest 10, and the newest of each of the last 7 days. Restoring moves the current file
aside (with its write-ahead log) before the backup takes its place: nothing is overwritten. The
restore is recorded in the restored project's audit log, and this computer's anchor of the log
(app/anchors.py) moves with the replaced file, so that `audit verify` accepts the restored log.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from app.errors import AssayError, InvalidInput, StorageError
from storage.db import open_project, sqlite_path, url_for_path
from storage.errors import FileBusy
from storage.integrity import inspect_file
from storage.snapshots import check_file, copy_database, open_elsewhere

BACKUP_DIR_ENV = "ASSAY_BACKUP_DIR"  # tests and portable installs point it elsewhere
KEEP_LAST = 10
KEEP_DAYS = 7
EVERY_MINUTES = 15
_STAMP = "%Y-%m-%d_%H%M%S_%f"
_SIDECARS = ("-wal", "-shm")


@dataclass(frozen=True)
class Backup:
    path: Path
    taken: datetime  # local time, as the user reads it
    size: int

    def describe(self) -> str:
        return f"{self.taken:%Y-%m-%d %H:%M:%S}  {self.size / 1e6:8.1f} MB  {self.path}"


def backup_root() -> Path:
    if folder := os.environ.get(BACKUP_DIR_ENV):
        return Path(folder)
    from app.settings import load_settings

    if chosen := getattr(load_settings(), "backup_folder", None):
        return Path(chosen).expanduser()
    from platformdirs import user_data_path

    return user_data_path("Assay", appauthor=False) / "backups"


def backup_folder(project: Path, root: Path | None = None) -> Path:
    """One folder per project file; the path's hash keeps two `review.assay` files apart."""
    project = project.expanduser().resolve()
    digest = hashlib.sha256(str(project).encode()).hexdigest()[:8]
    return (root or backup_root()) / f"{project.stem}-{digest}"


def project_file(url: str) -> Path:
    path = sqlite_path(url)
    if path is None:
        raise AssayError("backups are for project files; a database server keeps its own backups")
    return path


def list_backups(project: Path, root: Path | None = None) -> list[Backup]:
    """This project's backups, newest first."""
    folder = backup_folder(project, root)
    found = []
    for path in folder.glob(f"{project.stem}-*{project.suffix}") if folder.is_dir() else []:
        try:
            taken = datetime.strptime(path.stem.removeprefix(f"{project.stem}-"), _STAMP)
        except ValueError:
            continue  # not ours: left alone
        found.append(Backup(path, taken, path.stat().st_size))
    return sorted(found, key=lambda b: b.taken, reverse=True)


def _last_change(project: Path) -> float:
    stamps = [p.stat().st_mtime for p in (project, *(Path(f"{project}{s}") for s in _SIDECARS[:1])) if p.exists()]
    return max(stamps, default=0.0)


def changed_since_backup(project: Path, root: Path | None = None) -> bool:
    newest = next(iter(list_backups(project, root)), None)
    return newest is None or _last_change(project) > newest.path.stat().st_mtime


def make_backup(
    project: Path, passphrase: str | None = None, root: Path | None = None, now: datetime | None = None
) -> Backup:
    """Copy the project into its backup folder (checked before it counts), then rotate."""
    if not project.is_file() or project.stat().st_size == 0:
        raise InvalidInput(str(project), "there is no project file to back up yet")
    now = now or datetime.now()
    target = backup_folder(project, root) / f"{project.stem}-{now.strftime(_STAMP)}{project.suffix}"
    copy_database(project, target, passphrase)
    rotate(project, root, now)
    return Backup(target, now, target.stat().st_size)


def rotate(project: Path, root: Path | None = None, now: datetime | None = None) -> list[Path]:
    """Delete the backups the policy no longer keeps; return them."""
    today = (now or datetime.now()).date()
    backups = list_backups(project, root)
    keep = {b.path for b in backups[:KEEP_LAST]}
    days = set()
    for b in backups:  # newest first: the first of each day is that day's newest
        if (today - b.taken.date()).days < KEEP_DAYS and b.taken.date() not in days:
            days.add(b.taken.date())
            keep.add(b.path)
    removed = [b.path for b in backups if b.path not in keep]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def newest_good_backup(project: Path, root: Path | None = None) -> Backup | None:
    """The newest backup whose header reads (each was fully checked when it was made)."""
    for backup in list_backups(project, root):
        try:
            inspect_file(backup.path)
        except StorageError:
            continue
        return backup
    return None


def advice(project: Path, root: Path | None = None) -> str:
    """What to do about a damaged project: the backup to restore, and the command that does it."""
    try:
        backup = newest_good_backup(project, root)
    except OSError:
        backup = None
    if backup is None:
        return f"there is no backup of it in {backup_folder(project, root)}"
    return (
        f"the newest good backup is from {backup.taken:%Y-%m-%d %H:%M}: restore it with "
        f"`assay --project {project} restore {backup.path}` (the damaged file is kept aside)"
    )


def resolve_backup(project: Path, wanted: str, root: Path | None = None) -> Path:
    """A backup named by its path, its file name, or its number in `restore --list` (1 = newest)."""
    backups = list_backups(project, root)
    if wanted.isdigit() and 1 <= int(wanted) <= len(backups):
        return backups[int(wanted) - 1].path
    for backup in backups:
        if wanted == backup.path.name:
            return backup.path
    path = Path(wanted).expanduser()
    if path.is_file():
        return path
    raise InvalidInput(wanted, f"no such backup; `assay restore --list` shows the {len(backups)} there are")


def restore(project: Path, backup: Path, passphrase: str | None = None) -> Path | None:
    """Put `backup` in the project's place; the current file (and its log) is moved aside first.
    Returns where the current file went (None when there was none). A damaged backup is refused."""
    if (problem := check_file(backup, passphrase)) is not None:
        raise InvalidInput(str(backup), f"this backup cannot be restored: {problem}")
    if open_elsewhere(project, passphrase):  # its connections would stay on the file moved aside
        raise FileBusy(f"{project} is open in another Assay window or command: close it there, then restore")
    incoming = project.with_name(f".{project.name}.restoring")
    shutil.copyfile(backup, incoming)
    with incoming.open("rb") as handle:
        os.fsync(handle.fileno())
    aside = None
    if project.exists():
        aside = project.with_name(f"{project.stem}.before-restore-{datetime.now():%Y-%m-%d_%H%M%S}{project.suffix}")
        for sidecar in _SIDECARS:  # the log holds committed work not yet folded into the file
            if Path(f"{project}{sidecar}").exists():
                os.replace(f"{project}{sidecar}", f"{aside}{sidecar}")
        os.replace(project, aside)
    os.replace(incoming, project)
    _record_restore(project, backup, aside, passphrase)
    return aside


def _record_restore(project: Path, backup: Path, aside: Path | None, passphrase: str | None) -> None:
    """Keep `audit verify` true to a restore: this computer's anchors of the file replaced go with it
    to where it is kept aside, and the restored log records the restore (what it took back), whose
    entry becomes the anchor here."""
    import getpass

    from app import anchors
    from storage.audit import append_audit

    url = url_for_path(project)
    replaced = anchors.move_place(url, None if aside is None else url_for_path(aside))
    anchors.opened(url, created=False)
    sessions = open_project(url, passphrase)  # brought up to this version's schema, as opening it would
    try:
        with sessions.begin() as session:
            payload = {
                "backup": backup.name,
                "kept_aside": None if aside is None else aside.name,
                "replaced": None if replaced is None else {"entry": replaced.entry_id, "hash": replaced.entry_hash},
            }
            append_audit(session, getpass.getuser(), "project.restored", "project", project.name, payload)
    finally:
        sessions.kw["bind"].dispose()


class BackupSchedule:
    """When the next backup is due: every `minutes` of an open project, if anything changed."""

    def __init__(
        self, project: Path, minutes: float = EVERY_MINUTES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.project = project
        self.minutes = minutes
        self.clock = clock
        self.last_at = clock()
        self.last_change = _last_change(project)

    def due(self) -> bool:
        return self.clock() - self.last_at >= self.minutes * 60 and _last_change(self.project) > self.last_change

    def done(self) -> None:
        self.last_at = self.clock()
        self.last_change = _last_change(self.project)
