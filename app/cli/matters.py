"""`assay matters`: a firm's matters, who is on each and who is walled from which client; one matter
exported as its own encrypted project; and `--matter M` on the figures, exports and reports, which
then read that matter alone and say so."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from typing import Any

from app import matters
from app.cli.admin import ask_in_terminal
from app.cli.output import protected_problem, writing
from app.cli.parser import MATTER_SCOPED
from app.errors import InvalidInput
from app.project import PASSPHRASE_ENV, Project

Command = Callable[[Project, argparse.Namespace], int]


def _matters(project: Project, args: argparse.Namespace) -> int:
    actor = matters.actor_of(project, args.by)
    if args.create is not None:
        if args.client is None or args.name is None:
            raise InvalidInput("--create", "a new matter needs --client CLIENT and --name NAME too")
        made = matters.create(project, args.client, args.create, args.name, actor)
        print(f"created matter {made.label}")
    elif args.add is not None:
        matter = matters.add_person(project, _given(args.to, "--add", "--to"), args.add, actor)
        print(f"{args.add.strip()} is on {matter.label}: {', '.join(matter.members)}")
    elif args.remove is not None:
        matter = matters.remove_person(project, _given(args.from_, "--remove", "--from"), args.remove, actor)
        print(f"{args.remove.strip()} is off {matter.label}")
    elif args.wall is not None:
        matters.wall(project, args.wall, _given(args.client, "--wall", "--client"), args.reason, actor)
        print(f"{args.wall.strip()} is walled from {args.client.strip()}")
    elif args.unwall is not None:
        matters.unwall(project, args.unwall, _given(args.client, "--unwall", "--client"), actor)
        print(f"{args.unwall.strip()} is no longer walled from {args.client.strip()}")
    elif args.archive is not None:
        print(f"archived {matters.archive(project, args.archive, actor).label}")
    elif args.delete is not None:
        held = matters.delete(project, args.delete, actor)
        print(f"deleted matter {args.delete} with its {held['documents']} documents and {held['answers']} answers")
    elif args.assign is not None:
        moved = matters.assign(project, _given(args.to, "--assign", "--to"), args.assign, actor)
        print(f"filed {args.assign} under {args.to}: {moved} rows")
    elif args.export is not None:
        reference, out = args.export
        _export(project, reference, out, actor)
    else:
        _list(project, args.json)
    return 0


def _given(value: str | None, action: str, option: str) -> str:
    if value is None:
        raise InvalidInput(action, f"say which with {option}")
    return value


def _export(project: Project, reference: str, out: str, actor: str) -> None:
    from pathlib import Path

    path = Path(out)
    matter = matters.find(project, reference)  # an unknown matter is said before a passphrase is asked
    if problem := matters.destination_problem(path):  # before anything looks at a name the system refuses
        raise InvalidInput(out if len(out) <= 80 else f"{path.name[:40]}…", problem)
    if problem := protected_problem(path, project, kind="project"):
        raise InvalidInput(out, problem)
    passphrase = os.environ.get(PASSPHRASE_ENV) or ask_in_terminal(out, True)
    with writing(path, project=project, kind="project"):
        copied = matters.export_matter(project, reference, path, passphrase, actor)
    print(
        f"wrote {out}: matter {matter.label}, encrypted; {copied['documents']} documents, "
        f"{copied['answers']} answers, {copied['labels']} tags, {copied['reviews']} reviews"
    )


def _list(project: Project, as_json: bool) -> None:
    found = matters.list_matters(project)
    held = {m.id: matters.holdings(project, m) for m in found}
    walls = matters.walls(project)
    if as_json:
        print(
            json.dumps(
                {
                    "matters": [m.as_dict() | held[m.id] for m in found],
                    "walls": [{"person": w.person, "client": w.client, "reason": w.reason} for w in walls],
                }
            )
        )
        return
    if not found:
        print("no matters (assay matters --create NUMBER --client CLIENT --name NAME)")
    for m in found:
        state = "  archived" if m.archived_at else ""
        print(
            f"{m.client[:24]:24} {m.number[:14]:14} {m.name[:36]:36} {held[m.id]['documents']:4} documents"
            f"{state}  on it: {', '.join(m.members) or 'nobody'}"
        )
    for w in walls:
        print(f"wall: {w.person} sees nothing of {w.client}" + (f" ({w.reason})" if w.reason else ""))


def _scoped(name: str, handler: Command) -> Command:
    """The command run on one matter alone, when `--matter M` is given; it says which on stderr, and in
    its JSON when that is an object."""

    def run(project: Project, args: argparse.Namespace) -> int:
        reference = getattr(args, "matter", None)
        if reference is None:
            return handler(project, args)
        if name == "export" and (problem := protected_problem(args.out, project)):
            raise InvalidInput(str(args.out), problem)  # the real project's files, not the scoped copy's
        with matters.scoped(project, reference) as (view, matter):
            print(f"matter {matter.label} only", file=sys.stderr)
            if not getattr(args, "json", False):
                return handler(view, args)
            captured = io.StringIO()
            with redirect_stdout(captured):
                status = handler(view, args)
            print(_with_matter(captured.getvalue(), matter.as_dict()), end="")
            return status

    return run


def _with_matter(printed: str, matter: dict[str, Any]) -> str:
    try:
        value = json.loads(printed)
    except ValueError:
        return printed
    if not isinstance(value, dict):
        return printed
    return json.dumps({"matter": matter} | value) + "\n"


def scope(commands: dict[str, Command]) -> dict[str, Command]:
    """The commands, those in MATTER_SCOPED taking `--matter`."""
    return {name: _scoped(name, handler) if name in MATTER_SCOPED else handler for name, handler in commands.items()}


COMMANDS: dict[str, Command] = {"matters": _matters}
