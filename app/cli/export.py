"""`assay export`: the reviewed set in a shareable format, redacted when asked."""

from __future__ import annotations

import argparse

from app.cli.output import writing
from app.errors import InvalidInput, file_problem
from app.export.formats import export
from app.export.redaction import Redaction, keep_everything
from app.project import Project


def _export(project: Project, args: argparse.Namespace) -> int:
    names = list(args.redact_name)
    if args.redact_names_file:
        try:
            names += args.redact_names_file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise InvalidInput(str(args.redact_names_file), f"cannot read the names: {file_problem(exc)}") from exc
        except UnicodeDecodeError as exc:
            raise InvalidInput(str(args.redact_names_file), "cannot read the names: it is not UTF-8 text") from exc
    redact = Redaction(tuple(names)) if args.redact or names else keep_everything
    with writing(args.out):
        written = export(project, args.format, args.out, redact, args.paper)
    print(f"wrote {written}")
    return 0


COMMANDS = {"export": _export}
