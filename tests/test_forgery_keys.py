"""A reviewer's signing keys cannot be forged or misused (issue 57, section 3; storage/reviewer_keys.py):
a second key only as a rotation the first signs, a retired key signs nothing, a damaged key or an
overlong signer's name is one sentence."""

from __future__ import annotations

import json
from pathlib import Path

import keyring
import pytest
from sqlalchemy import text

from app import keys
from app.project import Project

from .forgery_helpers import ANSWER, OTHER, signed_then_retired, state, submitted, verify
from .forgery_helpers import computer as computer  # autouse: ana's laptop, or another computer by name
from .key_helpers import MemoryKeyring
from .key_helpers import cli as _cli


@pytest.mark.every_store
def test_a_second_key_is_made_only_as_a_rotation_signed_by_the_first(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer
) -> None:
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    (first,) = keys.local_keys("ana")
    computer("elsewhere")  # a computer without ana's key: it cannot sign the rotation
    before = state(sample_project)
    for argv in (("keys", "create", "--reviewer", "ana"), ("signoff", ANSWER, "--reviewer", "ana")):
        if argv[0] == "signoff":
            submitted(sample_project, ANSWER)
            before = state(sample_project)
        status, out = _cli(capsys, sample_project, *argv)
        assert status == 2, out
        assert out.strip().count("\n") == 0 and f"ana's signing key in this project ({first.fingerprint[:16]})" in out
        assert "is not on this computer" in out
        assert state(sample_project) == before
    assert keys.local_keys("ana") == []  # nothing made there either

    computer("laptop")
    status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")
    assert status == 0 and f"it replaces {first.fingerprint[:16]}, which signed the rotation and is now retired" in out
    listed = json.loads(_cli(capsys, sample_project, "keys", "--json")[1])
    assert [(k["fingerprint"] == first.fingerprint, k["retired_at"] is not None) for k in listed] == [
        (True, True),
        (False, False),
    ]
    with sample_project.sessions() as session:
        payload = session.execute(
            text("SELECT CAST(payload AS TEXT) FROM audit_log WHERE action = 'key.registered' ORDER BY id DESC")
        ).scalar()
    assert json.loads(payload)["rotated_from"] == first.fingerprint
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    status, out = verify(capsys, sample_project)
    assert status == 0, out


@pytest.mark.every_store
def test_a_retired_key_signs_nothing(
    capsys: pytest.CaptureFixture[str], sample_project: Project, tmp_path: Path
) -> None:
    local = signed_then_retired(capsys, sample_project)
    before = state(sample_project)
    status, out = _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "every signing key of ana in this project is retired, and a retired key signs nothing" in out
    status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")
    assert status == 2 and "a retired key signs nothing" in out, out
    report = tmp_path / "report.pdf"
    status, out = _cli(capsys, sample_project, "export", "--format", "pdf", str(report), "--sign", "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "ana's signing key on this computer is retired in this project" in out and not report.exists()
    assert state(sample_project) == before and [k.fingerprint for k in keys.local_keys("ana")] == [local.fingerprint]


def test_a_damaged_key_in_the_keyring_is_one_sentence(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    double = MemoryKeyring()
    keyring.set_keyring(double)
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    (entry,) = double.kept
    double.kept[entry] = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n"
    keys._unlocked.clear()  # a new process
    submitted(sample_project, ANSWER)
    before = state(sample_project)
    status, out = _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "in the OS keyring is damaged (not a readable private key): nothing was signed" in out
    assert state(sample_project) == before


def test_a_damaged_key_file_is_one_sentence(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer
) -> None:
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    (pem,) = computer("laptop").glob("*.pem")
    pem.write_bytes(b"\x00garbage")
    submitted(sample_project, ANSWER)
    status, out = _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "is damaged (not an encrypted PEM key): nothing was signed" in out


def test_a_report_signer_named_over_64_characters_is_one_sentence(
    capsys: pytest.CaptureFixture[str], project: Project, tmp_path: Path
) -> None:
    report = tmp_path / "report.pdf"
    name = "a" * 65
    status, out = _cli(capsys, project, "export", "--format", "pdf", str(report), "--sign", "--reviewer", name)
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "a report is signed under a name of at most 64 bytes of UTF-8 (an accented letter takes two), not 65" in out
    assert not report.exists() and keys.local_keys() == []


@pytest.mark.every_store
def test_a_key_is_retired_only_with_its_own_signature_or_a_leads(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 62, item 5: anyone retired anyone's key, even with a wrong passphrase, and its owner could
    then never sign or rotate again."""
    submitted(sample_project, ANSWER)
    submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    (local,) = keys.local_keys("ana")
    before = state(sample_project)
    computer("elsewhere")  # mallory's computer: no key of ana's, none of a lead's
    status, out = _cli(capsys, sample_project, "keys", "retire", local.fingerprint, "--reviewer", "mallory")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "a lead retires it with the lead's own key in force in this project: mallory has none here" in out
    computer("laptop")  # ana's laptop, a wrong passphrase
    monkeypatch.setenv("ASSAY_KEY_PASSPHRASE", "wrong horse")
    status, out = _cli(capsys, sample_project, "keys", "retire", local.fingerprint, "--reviewer", "ana")
    assert status == 2 and "wrong passphrase" in out, out
    assert state(sample_project) == before
    monkeypatch.setenv("ASSAY_KEY_PASSPHRASE", "correct horse")
    assert _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")[0] == 0  # her key still signs
    status, out = verify(capsys, sample_project)
    assert status == 0, out


@pytest.mark.every_store
def test_a_lead_retires_a_lost_key_and_the_reviewer_signs_again_with_a_new_one(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer
) -> None:
    submitted(sample_project, ANSWER)
    submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    (lost,) = keys.local_keys("ana")
    computer("lead")
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "lead")[0] == 0
    status, out = _cli(capsys, sample_project, "keys", "retire", lost.fingerprint, "--reviewer", "lead")
    assert status == 0 and f"retired ana's key {lost.fingerprint}" in out, out
    with sample_project.sessions() as session:
        payload = session.execute(
            text("SELECT CAST(payload AS TEXT) FROM audit_log WHERE action = 'key.retired' ORDER BY id DESC")
        ).scalar()
    assert json.loads(payload)["lead"] == "lead"
    computer("new laptop")  # ana's laptop was stolen: her next key is a first key again
    status, out = _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")
    assert status == 0 and "a signing key was made for ana" in out, out
    listed = json.loads(_cli(capsys, sample_project, "keys", "--json")[1])
    assert [(k["reviewer"], k["retired_at"] is not None) for k in listed] == [
        ("ana", True),
        ("lead", False),
        ("ana", False),
    ]
    status, out = verify(capsys, sample_project)
    assert status == 0 and "2 sign-offs: all match what is stored" in out, out


def test_a_retirement_written_behind_assays_back_is_named_by_verify(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    from storage.audit_chain import append_audit

    submitted(sample_project, ANSWER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    (local,) = keys.local_keys("ana")
    with sample_project.sessions.begin() as session:  # whoever can write the file, without ana's key
        session.execute(text("UPDATE reviewer_keys SET retired_at = CURRENT_TIMESTAMP, retired_by = 'mallory'"))
        append_audit(session, "mallory", "key.retired", "key", local.fingerprint, {"fingerprint": local.fingerprint})
    status, out = verify(capsys, sample_project)
    assert status == 1 and "retired it with no signature of that key or a lead's" in out, out
