"""The `assay` command. Expected failures print one sentence and exit 2; nothing is half-written.

`parser.py` declares every command; the handlers live beside it, grouped as app/ is (`ingest`,
`judging`, `review`, `figures`, `export`, and `admin` for the project file itself), and print
through `output.py`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from sqlalchemy.exc import DatabaseError

from app.cli import admin, export, figures, ingest, judging, review
from app.cli.parser import build_parser
from app.errors import AssayError
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, AskPassphrase, Project, project_passphrase, project_url

EXIT_INVALID = 2

Command = Callable[[Project, argparse.Namespace], int]

COMMANDS: dict[str, Command] = {
    **admin.COMMANDS,
    **ingest.COMMANDS,
    **judging.COMMANDS,
    **review.COMMANDS,
    **figures.COMMANDS,
    **export.COMMANDS,
}


def main(
    argv: Sequence[str] | None = None,
    window_commands: dict[str, Command] | None = None,
    ask_in_window: AskPassphrase | None = None,
) -> int:
    """Run one command. `ui.main` passes the commands that open a window, and how a window asks for
    a passphrase, so app/ stays Qt-free."""
    args = build_parser().parse_args(argv)
    commands = {**COMMANDS, **(window_commands or {})}
    if args.command not in commands and args.command != "restore":
        print(f"assay: '{args.command}' needs the desktop application (run it as `assay`)", file=sys.stderr)
        return EXIT_INVALID
    try:
        url = project_url(args.project, args.db)
        ask = ask_in_window if ask_in_window and args.command in (window_commands or {}) else admin.ask_in_terminal
        if args.command == "restore":  # the file it replaces may not open at all
            return admin.restore(args, ask)
        project = Project.open(url, project_passphrase(url, args.encrypt, ask))
    except AssayError as exc:
        print(f"assay: {exc}", file=sys.stderr)
        return EXIT_INVALID
    try:
        return commands[args.command](project, args)
    except AssayError as exc:
        print(f"assay: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except DatabaseError as exc:  # a damaged page met mid-command
        print(f"assay: {admin.damaged(args, exc)}", file=sys.stderr)
        return EXIT_INVALID
    finally:
        project.close()


def prepare_gui(project: Project, args: argparse.Namespace) -> None:
    """What `assay gui` does before the window opens."""
    if args.sample and not project.answers():
        import_dataset(project.sessions, SAMPLE_DATASET)
