"""`assay init`, `info`, `network`, `backup` and `restore`: the project file itself, its passphrase,
the hosts it allows, its backups.

`restore` runs before the project is opened: the file it replaces may be too damaged to open.
"""

from __future__ import annotations

import argparse
import getpass
import ipaddress
import re
import sys
from pathlib import Path

from app import backups
from app.cli.output import print_summary, writing
from app.errors import AssayError, InvalidInput
from app.project import AskPassphrase, Project, project_passphrase, project_url
from storage.db import url_for_path
from storage.integrity import as_storage_error


def ask_in_terminal(where: str, new: bool) -> str | None:
    if not sys.stdin.isatty():
        return None
    passphrase = getpass.getpass(f"Passphrase for {where}: ")
    if new and getpass.getpass("The same passphrase again: ") != passphrase:
        raise InvalidInput("passphrase", "the two entries differ")
    return passphrase


def _init(project: Project, _args: argparse.Namespace) -> int:
    print(f"project ready: {project.url}")
    return 0


def _info(project: Project, args: argparse.Namespace) -> int:
    counts = project.counts()
    print_summary(counts, args.json, lambda: "\n".join([project.url, *(f"  {n:12} {c}" for n, c in counts.items())]))
    return 0


def _host(text: str) -> str:
    """A host as an API judge's URL names it (`urlsplit(...).hostname`: lower case, no port): a URL or
    a host:port allowed would never match, and the judge would still be refused."""
    host = text.strip().lower()
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        pass
    if not re.fullmatch(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*", host):
        raise InvalidInput(repr(text), "not a host: write the host alone, e.g. 10.0.0.7 or llm.example.com")
    return host


def _network(project: Project, args: argparse.Namespace) -> int:
    if args.action == "list" and args.host:
        raise AssayError("network list takes no host: allow or forbid one with `assay network allow|forbid HOST`")
    if args.action != "list":
        if not args.host:
            raise AssayError(f"network {args.action} needs a host, e.g. 10.0.0.7 or llm.example.com")
        host = _host(args.host)
        if args.action == "forbid":  # a typo would leave the host meant still allowed
            host = next((h for h in project.allowed_hosts() if h.lower() == host), "")
            if not host:
                allowed = ", ".join(project.allowed_hosts()) or "none"
                raise InvalidInput(repr(args.host), f"not an allowed host (allowed: {allowed})")
        project.set_host_allowed(host, args.action == "allow", getpass.getuser())
    hosts = project.allowed_hosts()
    print("\n".join(hosts) if hosts else "no host allowed: API judges need --allow-network for each run")
    return 0


def _backup(project: Project, _args: argparse.Namespace) -> int:
    path = backups.project_file(project.url)
    with writing(backups.backup_folder(path), folder=True):  # ASSAY_BACKUP_DIR or the settings may name a bad place
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
    if args.backup.isdigit() and len(args.backup) > 9:  # no list is that long (and int() refuses 4,300 digits)
        raise InvalidInput(f"{args.backup[:12]}…", "no such backup: `assay restore --list` shows the ones there are")
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
        from app.review.roles import refusal  # a write the login's role does not allow

        said = refusal(exc, url)
        return said or f"the database reported an error: {str(getattr(exc, 'orig', exc)).splitlines()[0]}"
    error = as_storage_error(path, exc)
    return f"{error}; {backups.advice(path)}" if hasattr(error, "problem") else str(error)


def _title(project: Project, args: argparse.Namespace) -> int:
    """The name of the matter the project reviews (the report's title): set with NAME, forgotten with --clear."""
    if args.clear and args.name is not None:
        raise AssayError("give a name, or --clear to forget the one set, not both")
    if args.clear or args.name is not None:
        if args.name is not None and not args.name.strip():
            raise InvalidInput("NAME", "the name is empty: write the matter's name, or --clear to forget it")
        project.set_matter_name("" if args.clear else args.name, getpass.getuser())
    named = project.matter_name()
    print(named if named else "no name set: the report is titled after the project file (assay title NAME)")
    return 0


COMMANDS = {"init": _init, "info": _info, "network": _network, "backup": _backup, "title": _title}
