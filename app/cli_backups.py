"""`assay backup` and `assay restore`: the CLI side of app.backups, kept out of app/cli.py.

`restore` runs before the project is opened: the file it replaces may be too damaged to open.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app import backups
from app.project import AskPassphrase, Project, project_passphrase, project_url
from storage.db import url_for_path
from storage.integrity import as_storage_error


def add_commands(commands: Any) -> None:
    commands.add_parser("backup", help="copy the project into its backup folder now (the last 10 are kept, 1 a day)")
    restore = commands.add_parser("restore", help="put a backup in the project's place (the current file kept aside)")
    restore.add_argument("backup", nargs="?", help="a backup's number in --list (1 = newest), its name or its path")
    restore.add_argument("--list", action="store_true", help="list this project's backups, newest first")


def backup(project: Project, _args: argparse.Namespace) -> int:
    path = backups.project_file(project.url)
    made = backups.make_backup(path, project.passphrase)
    kept = backups.list_backups(path)
    print(f"backed up to {made.path} ({made.size / 1e6:.1f} MB, checked); {len(kept)} backups kept")
    return 0


def restore(args: argparse.Namespace, ask: AskPassphrase) -> int:
    """Runs without opening the project (see the module's note)."""
    path = backups.project_file(project_url(args.project, args.db))
    if args.list or not args.backup:
        found = backups.list_backups(path)
        if not found:
            print(f"no backups of {path} in {backups.backup_folder(path)}")
        for number, item in enumerate(found, start=1):
            print(f"{number:3}  {item.describe()}")
        if found and not args.list:
            print("restore one with `assay restore NUMBER`")
        return 0
    chosen = backups.resolve_backup(path, args.backup)
    passphrase = project_passphrase(url_for_path(chosen), False, ask)
    aside = backups.restore(path, chosen, passphrase)
    print(f"restored {path} from {chosen}")
    if aside is not None:
        print(f"the file it replaced is kept as {aside} (open it with --project to get work back from it)")
    return 0


def damaged(args: argparse.Namespace, exc: Exception) -> str:
    """A database error met mid-command: one sentence naming the file and the backup to restore."""
    url = project_url(args.project, args.db)
    path = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None
    if path is None:
        return f"the database reported an error: {str(getattr(exc, 'orig', exc)).splitlines()[0]}"
    error = as_storage_error(path, exc)
    return f"{error}; {backups.advice(path)}" if hasattr(error, "problem") else str(error)
