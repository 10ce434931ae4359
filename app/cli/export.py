"""`assay export`: the reviewed set in a shareable format, redacted when asked."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from app import limits
from app.cli.output import ProgressBar, writing
from app.errors import InvalidInput, file_problem
from app.export.formats import export
from app.export.redaction import Redaction, keep_everything
from app.project import Project

if TYPE_CHECKING:
    from app.export.pdf_signing import ReportSigner


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
    signer = _report_signer(project, args)  # checked before anything is written: nothing signed on a refusal
    bar = ProgressBar(f"exporting the {args.format}", "steps")
    with writing(args.out, project=project, make_folder=True), bar:
        written = export(project, args.format, args.out, redact, args.paper, lambda d, t, what: bar(d, t, step=what))
    if signer is not None:
        from app.export.pdf_signing import sign_pdf

        sign_pdf(args.out, signer)
        print(f"wrote {written}, signed by {signer.reviewer} (key {signer.fingerprint[:16]}, PAdES)")
        if signer.key_created:
            print(f"a signing key was made for {signer.reviewer}: `assay keys` lists it")
        return 0
    print(f"wrote {written}")
    return 0


def _report_signer(project: Project, args: argparse.Namespace) -> ReportSigner | None:
    if not args.sign:
        if args.cert or args.cert_key:
            raise InvalidInput("--cert", "a certificate is for signing: add --sign")
        return None
    if args.format != "pdf":
        raise InvalidInput("--sign", f"only the pdf report is signed, not {args.format}")
    from app.export.pdf_signing import report_signer
    from app.review.roles import default_reviewer

    return report_signer(default_reviewer(project, args.reviewer), args.cert, args.cert_key)


COMMANDS = {"export": _export}
