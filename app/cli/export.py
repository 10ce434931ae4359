"""`assay export`: the reviewed set in a shareable format, redacted when asked."""

from __future__ import annotations

import argparse

from app import limits
from app.cli.output import writing
from app.errors import InvalidInput, file_problem
from app.export.formats import export
from app.export.redaction import Redaction, keep_everything
from app.project import Project


def _export(project: Project, args: argparse.Namespace) -> int:
    names = list(args.redact_name)
    if args.redact_names_file:
        path = args.redact_names_file
        try:
            path.stat()
        except OSError as exc:
            raise InvalidInput(str(path), f"cannot read the names: {file_problem(exc)}") from exc
        if path.is_dir():
            raise InvalidInput(str(path), "cannot read the names: it is a folder, not a file")
        names += limits.read_text(path, limits.NAMES, "a file of names to redact").splitlines()
    redact = Redaction(tuple(names)) if args.redact or names else keep_everything
    with writing(args.out, project=project, make_folder=True):
        written = export(project, args.format, args.out, redact, args.paper)
    print(f"wrote {written}")
    return 0


COMMANDS = {"export": _export}
