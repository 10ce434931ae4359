"""`assay guidelines`, `signoff` and `reopen`: the review guidelines of a project (versioned, audited),
and a reviewer's signature on their review of an answer, withdrawn only by an audited reopen.
`assay audit verify` (cli/review.py) checks the sign-offs with `signoff_lines` below."""

from __future__ import annotations

import argparse
import getpass
import json
from dataclasses import asdict
from typing import Any

from app.cli.output import print_summary
from app.errors import InvalidInput, file_problem
from app.project import Guidelines, Project, SignOffCheck
from app.review.service import ReviewService
from models.vocabulary import RaterKind
from storage import raters
from storage.signoffs import SignOff


def _guidelines_dict(guidelines: Guidelines) -> dict[str, Any]:
    return {**asdict(guidelines), "created_at": guidelines.created_at.isoformat()}


def _guidelines(project: Project, args: argparse.Namespace) -> int:
    if args.set is not None:
        path = args.set
        if path.is_dir():
            raise InvalidInput(str(path), "it is a folder: give the Markdown file of the guidelines")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(str(path), "it is not UTF-8 text (Markdown is expected)") from exc
        except OSError as exc:
            raise InvalidInput(str(path), f"cannot read it: {file_problem(exc)}") from exc
        guidelines, added = project.set_guidelines(text, args.author or getpass.getuser())
        print_summary(
            {**_guidelines_dict(guidelines), "added": added},
            args.json,
            lambda: (
                f"guidelines version {guidelines.version} by {guidelines.author}"
                + ("" if added else " (the same text: no new version)")
            ),
        )
        return 0
    current = project.guidelines()
    if args.json:
        print(json.dumps(None if current is None else _guidelines_dict(current), ensure_ascii=False))
    elif current is None:
        print("no review guidelines yet: assay guidelines --set FILE.md")
    else:
        print(f"version {current.version} · {current.author} · {current.created_at:%Y-%m-%d %H:%M} · {current.sha256}")
        print()
        print(current.text)
    return 0


def _service(project: Project, name: str) -> ReviewService:
    """The named reviewer's service; no reviewer is created by signing or reopening."""
    with project.sessions() as session:
        rater = raters.rater_named(session, name.strip())
    if rater is None or rater.kind is not RaterKind.HUMAN:
        raise InvalidInput("--reviewer", f"no reviewer named {name!r} in this project")
    return ReviewService(project, name)


def _signoff_dict(signoff: SignOff) -> dict[str, Any]:
    return {**asdict(signoff), "signed_at": signoff.signed_at.isoformat()}


def _signoff(project: Project, args: argparse.Namespace) -> int:
    signoff = _service(project, args.reviewer).sign_off(args.answer_id)
    version = "no guidelines" if signoff.guideline_version is None else f"guideline version {signoff.guideline_version}"
    print_summary(
        _signoff_dict(signoff),
        args.json,
        lambda: (
            f"{signoff.reviewer} signed off {signoff.answer_id} at {signoff.signed_at:%Y-%m-%d %H:%M:%S} UTC "
            f"under {version}\nsha256 {signoff.digest}"
        ),
    )
    return 0


def _reopen(project: Project, args: argparse.Namespace) -> int:
    withdrawn = _service(project, args.reviewer).reopen(args.answer_id, args.reason)
    print_summary(
        {**_signoff_dict(withdrawn), "reason": args.reason},
        args.json,
        lambda: (
            f"{withdrawn.reviewer}'s sign-off of {withdrawn.answer_id} "
            f"({withdrawn.signed_at:%Y-%m-%d %H:%M} UTC) is reopened: the review can be changed and signed again"
        ),
    )
    return 0


def signoff_dicts(checks: list[SignOffCheck]) -> list[dict[str, Any]]:
    return [{**asdict(c), "signed_at": c.signed_at.isoformat()} for c in checks]


def signoff_lines(checks: list[SignOffCheck]) -> list[str]:
    """What `assay audit verify` prints of the sign-offs: a count, then each, with what changed."""
    if not checks:
        return ["no sign-offs"]
    broken = sum(not c.matches for c in checks)
    plural = len(checks) > 1
    if plural:
        summary = f"{broken} no longer match" if broken else "all match"
    else:
        summary = "it no longer matches" if broken else "it matches"
    lines = [f"{len(checks)} sign-off{'s' if plural else ''}: {summary} what is stored"]
    for c in checks:
        state = "matches" if c.matches else f"DOES NOT MATCH: {c.problem}"
        lines.append(f"  {c.answer_id} signed by {c.reviewer} at {c.signed_at:%Y-%m-%d %H:%M} UTC: {state}")
    return lines


COMMANDS = {"guidelines": _guidelines, "signoff": _signoff, "reopen": _reopen}
