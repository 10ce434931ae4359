"""The signed report against tampering (issue 57): a revision appended after the signature that
replaces page 1, a self-signed certificate under another reviewer's name, and a retired key.

pdfsig checks only the signed byte range, so it still says "Signature is Valid" for the first two;
Assay's check (`check_report`) says what pyHanko finds the signature covers, and whether a key the
project registered to the reviewer named vouches for the certificate.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.x509.oid import NameOID

from app.errors import InvalidInput
from app.export import pdf_signing
from app.export.pdf_signing import ReportSigner, check_report, sign_pdf, validate_pdf
from app.project import Project
from storage.reviewer_keys import RegisteredKey, registered_keys

from .key_helpers import cli as _cli
from .key_helpers import key_folder as key_folder  # autouse: a key folder of each test's own


def _signed_report(capsys: pytest.CaptureFixture[str], project: Project, folder: Path) -> Path:
    report = folder / "report.pdf"
    status, out = _cli(capsys, project, "export", "--format", "pdf", str(report), "--sign", "--reviewer", "ana")
    assert status == 0 and "signed by ana" in out, out
    return report


def _registered(project: Project) -> list[RegisteredKey]:
    with project.sessions() as session:
        return registered_keys(session)


def _replace_page_one(signed: Path, out: Path) -> None:
    """An incremental update after the signature whose page 1 says something else."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    with signed.open("rb") as source:
        writer = IncrementalPdfFileWriter(source, strict=False)
        content = generic.StreamObject(stream_data=b"BT /F1 24 Tf 72 720 Td (Every answer was correct.) Tj ET")
        page_ref, _ = writer.find_page_for_modification(0)
        page = page_ref.get_object()
        page["/Contents"] = writer.add_object(content)
        writer.update_container(page)
        with out.open("wb") as target:
            writer.write(target)


def test_the_genuine_report_is_signed_by_the_reviewers_registered_key(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path
) -> None:
    report = _signed_report(capsys, project, tmp_path)
    check = check_report(report, _registered(project))
    assert check.valid, check
    assert str(check).startswith("signed by ana with their registered key") and "the file is as signed" in str(check)


def test_a_revision_appended_after_the_signature_is_a_change(
    capsys: pytest.CaptureFixture[str], project: Project, key_folder: Path, tmp_path: Path
) -> None:
    report = _signed_report(capsys, project, tmp_path)
    changed = tmp_path / "changed.pdf"
    _replace_page_one(report, changed)
    added = changed.stat().st_size - report.stat().st_size

    check = check_report(changed, _registered(project))
    assert not check.valid
    assert f"{added:,} bytes were added after ana's signature" in str(check)
    assert "what a reader shows is not what was signed" in str(check)
    (cert_path,) = key_folder.glob("*.pdf.crt")
    ok, summary = validate_pdf(changed, [x509.load_pem_x509_certificate(cert_path.read_bytes())])
    assert not ok and "bytes were added after ana's signature" in summary


def test_trailing_bytes_after_the_signature_are_a_change_too(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path
) -> None:
    report = _signed_report(capsys, project, tmp_path)
    report.write_bytes(report.read_bytes() + b"\n% a comment after the end\n")
    check = check_report(report, _registered(project))
    assert not check.valid and "bytes were added after ana's signature" in str(check)


def _forged_signer(name: str, fingerprint: str, vouching: Ed25519PrivateKey | None) -> ReportSigner:
    """A self-signed certificate under `name` and the fingerprint of their key, made by someone else:
    with no binding, or one made by another Ed25519 key."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, name),
            x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "Assay reviewer"),
            x509.NameAttribute(NameOID.SERIAL_NUMBER, fingerprint),
        ]
    )
    binding = None
    if vouching is not None:
        binding = vouching.sign(pdf_signing._binding_message(name, key.public_key()))
    cert = pdf_signing._certificate(subject, key.public_key(), subject, key, binding=binding)
    return ReportSigner(name, fingerprint, key, cert)


@pytest.mark.parametrize("vouching", [None, Ed25519PrivateKey.generate()], ids=["no binding", "another key's"])
def test_a_self_signed_certificate_under_another_reviewers_name_is_not_theirs(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path, vouching: Ed25519PrivateKey | None
) -> None:
    _signed_report(capsys, project, tmp_path)  # ana's key is registered
    (ana,) = _registered(project)
    unsigned = tmp_path / "unsigned.pdf"
    assert _cli(capsys, project, "export", "--format", "pdf", str(unsigned))[0] == 0
    sign_pdf(unsigned, _forged_signer("ana", ana.fingerprint, vouching))

    check = check_report(unsigned, _registered(project))
    assert not check.valid
    assert "the certificate names ana, but its key is not a registered key of ana's" in str(check)


def test_a_certificate_naming_a_key_of_another_reviewer_is_not_theirs(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path
) -> None:
    _signed_report(capsys, project, tmp_path)
    (ana,) = _registered(project)
    unsigned = tmp_path / "unsigned.pdf"
    assert _cli(capsys, project, "export", "--format", "pdf", str(unsigned))[0] == 0
    sign_pdf(unsigned, _forged_signer("bob", ana.fingerprint, None))
    check = check_report(unsigned, _registered(project))
    assert not check.valid and "the key it names is ana's" in str(check)


def test_a_retired_key_signs_no_report(
    capsys: pytest.CaptureFixture[str], project: Project, key_folder: Path, tmp_path: Path
) -> None:
    _signed_report(capsys, project, tmp_path)
    (ana,) = _registered(project)
    assert _cli(capsys, project, "keys", "retire", ana.fingerprint, "--reviewer", "ana")[0] == 0
    certificates = sorted(key_folder.glob("*.pdf.crt"))
    again = tmp_path / "again.pdf"
    status, out = _cli(capsys, project, "export", "--format", "pdf", str(again), "--sign", "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "retired" in out
    assert not again.exists() and sorted(key_folder.glob("*.pdf.crt")) == certificates


def test_an_unsigned_or_unreadable_file_is_one_sentence(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path
) -> None:
    unsigned = tmp_path / "unsigned.pdf"
    assert _cli(capsys, project, "export", "--format", "pdf", str(unsigned))[0] == 0
    assert str(check_report(unsigned)) == "the PDF is not signed"
    with pytest.raises(InvalidInput, match="not a regular file"):
        check_report(Path("/dev/zero"))
    damaged = tmp_path / "damaged.pdf"
    damaged.write_bytes(b"%PDF-1.7\n" + b"\x00" * 100)
    with pytest.raises(InvalidInput, match="cannot read this signed PDF"):
        check_report(damaged)


def test_a_ca_certificate_from_dev_zero_is_refused_at_once(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path
) -> None:
    report = tmp_path / "report.pdf"
    argv = ("export", "--format", "pdf", str(report), "--sign", "--reviewer", "ana")
    status, out = _cli(capsys, project, *argv, "--cert", "/dev/zero", "--cert-key", "/dev/zero")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "not a regular file" in out and not report.exists()
