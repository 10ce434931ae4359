"""Reviewers' keys (`assay keys`) and the signed report, on a SQLite project.

This machine has no OS keyring, as a headless server or container has none: keys go to a
passphrase-encrypted PKCS#8 file. Where a test needs a keyring it uses MemoryKeyring, a test double
named so (an OS keyring cannot run here). Each refusal is one sentence, exit 2, nothing signed and
nothing changed. The signed PDF is checked with poppler's `pdfsig` and pyHanko's validator.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.x509.oid import NameOID
from sqlalchemy import text

from app import keys
from app.export.pdf_signing import validate_pdf
from app.project import Project
from app.review.service import ReviewService
from models.vocabulary import Tag

from .key_helpers import MemoryKeyring
from .key_helpers import cli as _cli
from .key_helpers import key_folder as key_folder  # autouse: a key folder of each test's own

ANSWER, OTHER = "contractnli-027", "contractnli-028"


def _submitted(project: Project, answer_id: str, reviewer: str = "ana") -> None:
    service = ReviewService(project, reviewer)
    for point in service.open(answer_id).points:
        service.set_tag(answer_id, point.point.id, Tag.CORRECT)
    service.submit(answer_id)


def _state(project: Project) -> tuple[int, int, int]:
    """Sign-offs, registered keys and audit entries: what a refusal must leave as it was."""
    with project.sessions() as session:
        return tuple(  # type: ignore[return-value]
            session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in ("signoffs", "reviewer_keys", "audit_log")
        )


def test_no_keyring_and_no_passphrase_is_one_sentence_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], sample_project: Project, key_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _submitted(sample_project, ANSWER)
    monkeypatch.delenv("ASSAY_KEY_PASSPHRASE")
    before = _state(sample_project)
    for argv in (("keys", "create", "--reviewer", "ana"), ("signoff", ANSWER, "--reviewer", "ana")):
        status, out = _cli(capsys, sample_project, *argv)
        assert status == 2
        assert out.strip().count("\n") == 0 and "set ASSAY_KEY_PASSPHRASE or enter its passphrase" in out
    assert _state(sample_project) == before
    kept = list(key_folder.iterdir()) if key_folder.exists() else []
    assert [p.name for p in kept] in ([], ["anchors"])  # no key; the log's anchor (app/anchors.py) is no key


def test_a_wrong_passphrase_signs_nothing(
    capsys: pytest.CaptureFixture[str], sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _submitted(sample_project, ANSWER)
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    keys._unlocked.clear()  # a new process: the key must be unlocked again
    monkeypatch.setenv("ASSAY_KEY_PASSPHRASE", "wrong horse")
    before = _state(sample_project)
    status, out = _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 2 and "wrong passphrase for ana's signing key" in out and "nothing was signed" in out
    assert _state(sample_project) == before


def test_a_key_in_a_keyring_that_is_gone_signs_nothing(
    capsys: pytest.CaptureFixture[str], sample_project: Project, key_folder: Path
) -> None:
    _submitted(sample_project, ANSWER)
    double = MemoryKeyring()
    keyring.set_keyring(double)
    status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")
    assert status == 0 and "kept in the OS keyring" in out, out
    assert not list(key_folder.glob("*.pem")) and len(double.kept) == 1  # the private key never hit the disk
    keyring.set_keyring(keyring.backends.fail.Keyring())  # the keyring is not there any more
    keys._unlocked.clear()
    before = _state(sample_project)
    status, out = _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 2 and "is kept in the OS keyring, which is not available here" in out
    assert _state(sample_project) == before


def test_an_unknown_key_is_named(capsys: pytest.CaptureFixture[str], sample_project: Project) -> None:
    before = _state(sample_project)
    for action in ("retire", "export"):
        status, out = _cli(capsys, sample_project, "keys", action, "0000beef")
        assert status == 2 and "no key in this project has the fingerprint '0000beef'" in out
    assert _state(sample_project) == before


def test_keys_are_listed_exported_and_retired_never_deleted(
    capsys: pytest.CaptureFixture[str], sample_project: Project, tmp_path: Path
) -> None:
    _submitted(sample_project, ANSWER)
    _submitted(sample_project, OTHER)
    status, out = _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 0 and "a signing key was made for ana (the first sign-off)" in out
    status, out = _cli(capsys, sample_project, "keys", "--json")
    (first,) = json.loads(out)
    assert first["reviewer"] == "ana" and first["on_this_computer"] and first["retired_at"] is None
    pem = tmp_path / "ana.pub.pem"
    assert _cli(capsys, sample_project, "keys", "export", first["fingerprint"][:12], str(pem))[0] == 0
    public = serialization.load_pem_public_key(pem.read_bytes())
    assert isinstance(public, Ed25519PublicKey)
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert (
        hashlib.sha256(raw).hexdigest() == first["fingerprint"]
        and base64.b64encode(raw).decode() == first["public_key"]
    )

    status, out = _cli(capsys, sample_project, "keys", "retire", first["fingerprint"])
    assert status == 0 and "it signs nothing more" in out
    with pytest.raises(Exception, match="retired, never deleted"), sample_project.sessions.begin() as session:
        session.execute(text("DELETE FROM reviewer_keys"))
    # No new key behind a retired one: only a key in force signs the rotation to another (tests/test_forgery_keys.py).
    status, out = _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")
    assert status == 2 and "a retired key signs nothing" in out, out
    listed = json.loads(_cli(capsys, sample_project, "keys", "--json")[1])
    assert [k["retired_at"] is not None for k in listed] == [True]
    status, out = _cli(capsys, sample_project, "audit", "verify")  # what the retired key signed still verifies
    assert status == 0 and "1 sign-off: it matches what is stored" in out, out
    with sample_project.sessions() as session:
        actions = [a for (a,) in session.execute(text("SELECT action FROM audit_log WHERE entity = 'key'"))]
    assert actions == ["key.registered", "key.retired"]


def _pdfsig(path: Path) -> str:
    run = subprocess.run(["pdfsig", str(path)], capture_output=True, text=True, timeout=60)
    return run.stdout + run.stderr


@pytest.mark.skipif(shutil.which("pdfsig") is None, reason="poppler-utils (pdfsig) is installed by make test-deps")
def test_the_signed_report_validates_and_one_changed_byte_breaks_it(
    capsys: pytest.CaptureFixture[str], project: Project, key_folder: Path, tmp_path: Path
) -> None:
    report = tmp_path / "report.pdf"
    status, out = _cli(capsys, project, "export", "--format", "pdf", str(report), "--sign", "--reviewer", "ana")
    assert status == 0 and "signed by ana" in out, out
    said = _pdfsig(report)
    assert "Signature Validation: Signature is Valid." in said and "Signer Certificate Common Name: ana" in said
    assert "Total document signed" in said
    (cert_path,) = key_folder.glob("*.pdf.crt")
    cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
    ok, summary = validate_pdf(report, [cert])
    assert ok, summary

    data = report.read_bytes()
    changed = tmp_path / "changed.pdf"
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0x01  # a byte of the page content, inside the signed range
    changed.write_bytes(bytes(flipped))
    assert "Signature is Valid." not in _pdfsig(changed)
    assert not validate_pdf(changed, [cert])[0]


def _firm_ca(tmp_path: Path) -> tuple[Path, Path, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Firm CA")])
    import datetime as dt

    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "ca.pem", tmp_path / "ca.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path, cert


def test_a_firm_ca_issues_the_reviewers_certificate_and_a_mismatched_one_is_refused(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path
) -> None:
    cert_path, key_path, ca = _firm_ca(tmp_path)
    (tmp_path / "other").mkdir()
    other_cert, _, _ = _firm_ca(tmp_path / "other")
    report = tmp_path / "report.pdf"
    argv = ("export", "--format", "pdf", str(report), "--sign", "--reviewer", "ana")
    before = _state(project)
    status, out = _cli(capsys, project, *argv, "--cert", str(other_cert), "--cert-key", str(key_path))
    assert status == 2 and f"the certificate does not match the key {key_path}" in out
    assert out.strip().count("\n") == 0 and not report.exists() and _state(project) == before
    status, out = _cli(capsys, project, *argv, "--cert", str(cert_path), "--cert-key", str(key_path))
    assert status == 0, out
    ok, summary = validate_pdf(report, [ca])  # trusted through the firm's CA alone
    assert ok, summary


def test_the_window_makes_the_key_on_the_first_sign_off_and_says_so(sample_project: Project) -> None:
    """The review window's session (app/review/session.py, what the window shows): its first
    sign-off makes the reviewer's key and its sentence says so; the second says nothing of keys."""
    from app.review.session import ReviewSession

    _submitted(sample_project, ANSWER)
    _submitted(sample_project, OTHER)
    session = ReviewSession(sample_project, "ana")
    said: list[str] = []
    session.subscribe(lambda changes: said.append(changes.message) if changes.message else None)
    assert session.open(ANSWER) and session.sign_off()
    assert "Signed off" in said[-1] and "This was your first sign-off: a signing key was made for you" in said[-1]
    assert session.open(OTHER) and session.sign_off()
    assert "Signed off" in said[-1] and "signing key" not in said[-1]
    assert [k.reviewer for k in keys.local_keys()] == ["ana"]
