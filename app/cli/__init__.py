"""The `assay` command. Expected failures print one sentence and exit 2; nothing is half-written.

`parser.py` declares every command; the handlers live beside it, grouped as app/ is (`ingest`,
`judging`, `review`, `figures`, `export`, and `admin` for the project file itself), and print
through `output.py`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence

from sqlalchemy import make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, SQLAlchemyError

from app.cli import adjudication as adjudication_cli
from app.cli import admin, contract, export, figures, ingest, judging, models, review
from app.cli import checker as checker_cli
from app.cli import compare as compare_cli
from app.cli import matters as matters_cli
from app.cli import signoff as signoff_cli
from app.cli.parser import build_parser
from app.errors import AssayError, InvalidInput, StorageError, file_problem
from app.project import AskPassphrase, Project, project_passphrase, project_url
from models.checker.manifest import ArtefactUnavailable
from storage.db import sqlite_path

EXIT_INVALID = 2
EXAMPLE_URL = "postgresql+psycopg://user@host/assay"
BUSY_SECONDS = 5  # storage/db.py's busy_timeout: how long a second writer waits
CREATING = ("init", "import")  # the commands that make a project file that is not there

Command = Callable[[Project, argparse.Namespace], int]

COMMANDS: dict[str, Command] = {
    **admin.COMMANDS,
    **ingest.COMMANDS,
    **contract.COMMANDS,
    **judging.COMMANDS,
    **models.COMMANDS,  # after judging: `assay models` with its discovery and check flags
    **review.COMMANDS,
    **figures.COMMANDS,
    **export.COMMANDS,
    **adjudication_cli.COMMANDS,  # adjudicate, adjudicators, qualification
    **signoff_cli.COMMANDS,  # guidelines, signoff, reopen
    **compare_cli.COMMANDS,  # compare two generators
    **matters_cli.COMMANDS,  # matters, their people, walls
    **checker_cli.COMMANDS,  # the claim checker fitted to the project's reviews
}
COMMANDS = matters_cli.scope(COMMANDS)  # `--matter M`: the figures, exports and reports of one matter


def main(
    argv: Sequence[str] | None = None,
    window_commands: dict[str, Command] | None = None,
    ask_in_window: AskPassphrase | None = None,
) -> int:
    """Run one command. `ui.main` passes the commands that open a window, and how a window asks for
    a passphrase, so app/ stays Qt-free."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if (refused := _refused_argument(argv)) is not None:
        print(f"assay: {refused}", file=sys.stderr)
        return EXIT_INVALID
    args = build_parser().parse_args(argv)
    commands = {**COMMANDS, **(window_commands or {})}
    if args.command not in commands and args.command != "restore":
        print(f"assay: '{args.command}' needs the desktop application (run it as `assay`)", file=sys.stderr)
        return EXIT_INVALID
    try:
        if args.db is not None and not args.db.strip():  # else the default project would open, unasked for
            raise InvalidInput("--db", f"no URL given, e.g. {EXAMPLE_URL}")
        url = project_url(args.project, args.db)
        ask = ask_in_window if ask_in_window and args.command in (window_commands or {}) else admin.ask_in_terminal
        if args.command == "restore":  # the file it replaces may not open at all
            return admin.restore(args, ask)
        no_project_named = args.project is None and args.db is None
        if args.command == "models" and (args.install is not None or (not args.check and no_project_named)):
            return models.without_project(args)  # this computer's models: no project opened or made
        _refuse_missing(url, args)
        project = _open(url, args, ask)
    except AssayError as exc:
        print(f"assay: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        status = commands[args.command](project, args)
        sys.stdout.flush()  # here, so that a reader gone away (`| head -1`) is met below
        return status
    except BrokenPipeError:
        return _reader_gone()
    except (AssayError, ArtefactUnavailable) as exc:  # a shipped model file altered: its one sentence
        print(f"assay: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except DatabaseError as exc:  # a damaged page met mid-command, or another writer holding the file
        print(f"assay: {busy(args) if is_busy(exc) else admin.damaged(args, exc)}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        project.close()


_SURROGATE = re.compile("[\ud800-\udfff]")
LONGEST_ARGUMENT = 10_000  # characters: a path is at most 4,096 bytes, a name or an id far less


def _refused_argument(argv: list[str]) -> str | None:
    """An argument no command takes, in one sentence: one with a lone surrogate (bytes that are not
    UTF-8 in the terminal, which nothing can store or print), or longer than any path, name or id."""
    for number, argument in enumerate(argv, start=1):
        if _SURROGATE.search(argument):
            shown = ascii(argument[:40])
            return f"argument {number} ({shown}) is not valid text: it holds bytes that are not UTF-8"
        if len(argument) > LONGEST_ARGUMENT:
            return (
                f"argument {number} ({argument[:20]}…) is {len(argument):,} characters long; "
                f"no name, id or path is longer than {LONGEST_ARGUMENT:,}"
            )
    return None


def _refuse_missing(url: str, args: argparse.Namespace) -> None:
    """A project file that is not there is made only by the commands that make one (`init`, `import`,
    `gui --sample`, which imports the sample; the window's New): any other command on a mistyped name
    says so and makes nothing."""
    path = sqlite_path(url)
    if path is None or os.path.lexists(path) or args.command in CREATING or getattr(args, "sample", False):
        return
    raise InvalidInput(str(args.project or path), "no such project: `assay init` or `assay import` makes one")


def _reader_gone() -> int:
    """The reader of stdout closed the pipe (`assay … | head -1`): not an error of ours. As Python's
    documentation recommends, what is left to flush goes to devnull so that exit prints nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout replaced by something without a descriptor (tests)
        pass
    finally:
        os.close(devnull)
    return 1


def is_busy(exc: BaseException) -> bool:
    """SQLite's word for a file another connection is writing: busy, not damaged."""
    message = str(getattr(exc, "orig", None) or exc).lower()
    return "database is locked" in message or "database is busy" in message


def busy(args: argparse.Namespace) -> str:
    where = args.project or "the project"
    return (
        f"{where} is busy: another Assay is writing to it (waited {BUSY_SECONDS:g} s); "
        "try again when it has finished (nothing was changed)"
    )


def _open(url: str, args: argparse.Namespace, ask: AskPassphrase) -> Project:
    """The project, or one sentence on why it cannot be opened (storage names a bad project file)."""
    try:
        try:
            return Project.open(url, project_passphrase(url, args.encrypt, ask))
        except (StorageError, SQLAlchemyError) as exc:
            if is_busy(exc):  # another writer held it past busy_timeout: busy, not damaged
                raise AssayError(busy(args)) from exc
            raise
    except OSError as exc:  # its folder cannot be made: a file in the way, no permission
        raise InvalidInput(str(args.project or url), f"cannot open or create the project: {file_problem(exc)}") from exc
    except (ArgumentError, ModuleNotFoundError, SQLAlchemyError) as exc:
        if args.db is None:  # a project file's problems are named by storage: anything else is a bug
            raise
        if isinstance(exc, ArgumentError):
            raise InvalidInput("--db", f"not a database URL Assay can use, e.g. {EXAMPLE_URL}") from exc
        if isinstance(exc, ModuleNotFoundError):
            raise InvalidInput(f"--db {_shown(url)}", f"its database driver is not installed ({exc.name})") from exc
        problem = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]  # a server unreachable, or refusing
        raise InvalidInput(f"--db {_shown(url)}", f"cannot open the database: {problem}") from exc


def _shown(url: str) -> str:
    """A database URL without its password."""
    return make_url(url).render_as_string(hide_password=True)
