"""`assay guidelines`, `signoff` and `reopen`: the review guidelines of a project (versioned, audited),
and a reviewer's signature on their review of an answer (Ed25519, with their key: app/keys.py),
withdrawn only by an audited reopen; `signoff --export CERT` writes the signed certificate that
packaging/verify_signoff.py checks without Assay. `assay audit verify` (cli/review.py) checks the
sign-offs with `signoff_lines` below. `assay keys` (cli/keys.py) is registered here too."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from app import limits
from app.cli import keys as keys_cli
from app.cli.output import print_summary, writing
from app.errors import InvalidInput
from app.project import Guidelines, Project, SignOffCheck
from app.raters import NotAReviewer, human_named
from app.review import roles
from app.review.service import ReviewService
from storage.signoffs import SignOff, canonical, signed_record, standing_signoff

CERTIFICATE_FORMAT = "assay-signoff-certificate/1"
CERTIFICATE_ABOUT = (
    "A reviewer's sign-off of an answer, made with Assay. 'signature' is the Ed25519 signature (base64) "
    "of the UTF-8 bytes of 'record' written as canonical JSON (keys sorted, separators ',' and ':', "
    "non-ASCII as is); 'public_key' is the raw 32-byte Ed25519 key (base64) and 'fingerprint' its "
    "SHA-256 (hex), which 'record.key' names; 'sha256' is the SHA-256 of the canonical record. The "
    "file itself is this object as canonical JSON and a newline. Check it with "
    "packaging/verify_signoff.py CERT, or any Ed25519 library."
)


def _guidelines_dict(guidelines: Guidelines) -> dict[str, Any]:
    return {**asdict(guidelines), "created_at": guidelines.created_at.isoformat()}


def _guidelines(project: Project, args: argparse.Namespace) -> int:
    if args.set is not None:
        path = args.set
        data = limits.read_bounded(path, limits.GUIDELINES, "the Markdown file of the guidelines")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InvalidInput(str(path), "it is not UTF-8 text (Markdown is expected)") from exc
        guidelines, added = project.set_guidelines(text, roles.default_reviewer(project, args.author))
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


def _service(project: Project, typed: str | None) -> ReviewService:
    """The reviewer's service (the database login on a server, else the name given, else the OS user);
    no reviewer is created by signing or reopening."""
    login = roles.database_login(project)
    if login is not None and typed is not None and typed.strip() != login:
        raise InvalidInput("--reviewer", f"on a database server the reviewer is the login {login!r}, not {typed!r}")
    name = roles.default_reviewer(project, typed)
    with project.sessions() as session:
        try:
            human_named(session, name.strip())
        except NotAReviewer as exc:
            raise InvalidInput("--reviewer", str(exc)) from None
    return ReviewService(project, name)


def _signoff_dict(signoff: SignOff) -> dict[str, Any]:
    return {**asdict(signoff), "signed_at": signoff.signed_at.isoformat()}


def certificate(session: Session, answer_id: str, rater_id: int) -> dict[str, Any]:
    """The sign-off in force as a self-contained certificate: the record, its SHA-256, the Ed25519
    signature over the record's canonical JSON, the public key and its fingerprint."""
    signed = signed_record(session, answer_id, rater_id)
    if signed is None or not signed["signature"] or not signed["public_key"]:
        raise InvalidInput("--export", f"the sign-off of {answer_id} predates reviewer keys: it has no signature")
    return {
        "format": CERTIFICATE_FORMAT,
        "about": CERTIFICATE_ABOUT,
        "record": signed["record"],
        "sha256": signed["digest"],
        "signature": signed["signature"],
        "public_key": signed["public_key"],
        "fingerprint": signed["fingerprint"],
        "algorithm": "ed25519",
    }


def _write_certificate(session: Session, out: Path, answer_id: str, rater_id: int) -> None:
    out.write_text(canonical(certificate(session, answer_id, rater_id)) + "\n", encoding="utf-8")  # every byte counts


def _signoff(project: Project, args: argparse.Namespace) -> int:
    """Sign the review; with --export, write the certificate of the sign-off (made now if none stands).
    The certificate is written inside the sign-off's transaction: a file that cannot be written (or
    must not be: a project, its log, a device) signs nothing."""
    service = _service(project, args.reviewer)
    out: Path | None = args.export
    if out is None:
        standing, signoff = None, service.sign_off(args.answer_id)
    else:
        with writing(out, project=project, kind="text"):
            with project.sessions() as session:
                standing = standing_signoff(session, args.answer_id, service.rater_id)
                if standing is not None:
                    _write_certificate(session, out, args.answer_id, service.rater_id)
            written: list[Path] = []

            def write(session: Session) -> None:
                _write_certificate(session, out, args.answer_id, service.rater_id)
                written.append(out)

            try:
                signoff = standing or service.sign_off(args.answer_id, write)
            except BaseException:  # not committed after all: the certificate written certifies nothing
                if written:
                    out.unlink(missing_ok=True)
                raise
    version = "no guidelines" if signoff.guideline_version is None else f"guideline version {signoff.guideline_version}"

    def lines() -> str:
        said = "had signed off" if standing is not None else "signed off"
        text = (
            f"{signoff.reviewer} {said} {signoff.answer_id} at {signoff.signed_at:%Y-%m-%d %H:%M:%S} UTC "
            f"under {version}\nsha256 {signoff.digest}"
        )
        if signoff.key_fingerprint:
            text += f"\nsigned with key {signoff.key_fingerprint}"
        if signoff.key_created:
            text += f"\na signing key was made for {signoff.reviewer} (the first sign-off): `assay keys` lists it"
        if args.export is not None:
            text += f"\nwrote the certificate {args.export} (packaging/verify_signoff.py checks it)"
        return text

    print_summary(_signoff_dict(signoff), args.json, lines)
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
        if c.note:
            state += f" ({c.note})"
        lines.append(f"  {c.answer_id} signed by {c.reviewer} at {c.signed_at:%Y-%m-%d %H:%M} UTC: {state}")
    return lines


COMMANDS = {"guidelines": _guidelines, "signoff": _signoff, "reopen": _reopen, **keys_cli.COMMANDS}
