"""`assay export`: the reviewed set in a shareable format, redacted when asked."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from app import limits
from app.cli.output import ProgressBar, print_summary, writing
from app.errors import InvalidInput, file_problem
from app.export.formats import export, kind_of_format, refuse_wrong_suffix
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
    bar = ProgressBar(f"exporting the {args.format}", "steps")
    parent = args.out.absolute().parent
    new_folder = None if os.path.isdir(parent) else parent  # made by the export, and said: a typo shows
    with writing(args.out, project=project, kind=kind_of_format(args.format), make_folder=True), bar:
        refuse_wrong_suffix(args.out, args.format)
        signer = _report_signer(project, args)  # once the file is known good: a refused export signs nothing
        written = export(project, args.format, args.out, redact, args.paper, lambda d, t, what: bar(d, t, step=what))
    if new_folder is not None and new_folder.is_dir():
        print(f"made the folder {new_folder}")
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
    from app.keys import retired_fingerprints
    from app.review.roles import default_reviewer

    reviewer = default_reviewer(project, args.reviewer)
    with project.sessions.begin() as session:  # their key in force here, registered: check_report knows it
        retired = retired_fingerprints(session, reviewer)  # a key retired here signs no report of it
        return report_signer(reviewer, args.cert, args.cert_key, retired, session=session)


def _report(project: Project, args: argparse.Namespace) -> int:
    """Check a signed report: the signature intact and covering every byte (nothing appended after it),
    by a key this project registered to the reviewer it names (or a certificate a CA given issued)."""
    from cryptography import x509

    from app.export.pdf_signing import check_report
    from storage.reviewer_keys import registered_keys

    trusted = []
    for path in args.ca:
        try:
            trusted.append(
                x509.load_pem_x509_certificate(limits.read_bounded(path, limits.CERTIFICATE, "a PEM certificate"))
            )
        except ValueError as exc:
            raise InvalidInput(str(path), "it is not a PEM certificate") from exc
    limits.check_regular(args.check, limits.DOCUMENT, "a signed PDF report")
    with project.sessions() as session:
        keys = registered_keys(session)
    check = check_report(args.check, keys, trusted)
    print_summary(
        {"file": str(args.check), "valid": check.valid, "said": list(check.said), "problems": list(check.problems)},
        args.json,
        lambda: (
            f"{args.check}: "
            + ("as signed" if check.valid else "NOT AS SIGNED")
            + "".join(f"\n  {line}" for line in (*check.problems, *check.said))
        ),
    )
    return 0 if check.valid else 1


COMMANDS = {"export": _export, "report": _report}
