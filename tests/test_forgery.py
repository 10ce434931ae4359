"""Bundles and the project file cannot forge a reviewer's sign-off (issue 57, section 3): bundles and
keys on SQLite and PostgreSQL, the file's own edits on SQLite.

Each attack is made as its attacker would make it: a bundle's JSON edited and its SHA-256 seal
recomputed (anyone can: it is a plain hash), or the project file edited with Python's sqlite3, the
audit chain extended with correctly computed links. The rules they meet are in
storage/signoff_bundles.py, storage/signoff_checks.py and storage/reviewer_keys.py: a bundle brings a
sign-off only when its reviewer's own key made it, a reviewer's key other than their first is theirs
only by a rotation their key in force signed, a retired key signs nothing, and a bundle never reopens
a sign-off in force where it is merged.

Two computers are two key folders: ana's laptop, where she reviews and signs, and the lead's.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import keyring
import keyring.backends.fail
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text

from app import keys
from app.cli import main
from app.errors import InvalidInput
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from app.review.service import ReviewService
from app.review.team import export_bundle, import_bundle
from models.vocabulary import Tag
from storage.audit_chain import audit_hash
from storage.db import sqlite_path
from storage.signoffs import live_content

from .key_helpers import MemoryKeyring
from .key_helpers import cli as _cli

ANSWER, OTHER = "contractnli-027", "contractnli-028"


@pytest.fixture(autouse=True)
def computer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], Path]]:
    """Move to a computer by name: its own key folder, nothing unlocked from another; ana's laptop first."""

    def move(name: str) -> Path:
        folder = tmp_path / f"keys-{name}"
        monkeypatch.setenv("ASSAY_KEY_DIR", str(folder))
        keys._unlocked.clear()
        keys._unlocked_reports.clear()
        return folder

    monkeypatch.setenv("ASSAY_KEY_PASSPHRASE", "correct horse")
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    move("laptop")
    yield move
    keyring.set_keyring(previous)
    keys._unlocked.clear()
    keys._unlocked_reports.clear()


@pytest.fixture
def lead(new_project_url: Callable[[str], str]) -> Iterator[Project]:
    """The lead's project: the same sample answers, no review of its own."""
    opened = Project.open(new_project_url("lead"))
    import_dataset(opened.sessions, SAMPLE_DATASET)
    yield opened
    opened.close()


def _submitted(project: Project, answer_id: str, reviewer: str = "ana", tag: Tag = Tag.CORRECT) -> ReviewService:
    service = ReviewService(project, reviewer)
    for point in service.open(answer_id).points:
        service.set_tag(answer_id, point.point.id, tag)
    service.submit(answer_id)
    return service


def _state(project: Project) -> tuple[int, ...]:
    """Sign-offs, keys, audit entries and labels: what a refusal must leave as it was."""
    with project.sessions() as session:
        return tuple(
            session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in ("signoffs", "reviewer_keys", "audit_log", "labels")
        )


def _verify(capsys: pytest.CaptureFixture[str], project: Project) -> tuple[int, str]:
    return _cli(capsys, project, "audit", "verify")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _public(key: Ed25519PrivateKey) -> tuple[str, str]:
    """The key's fingerprint and base64 public key, as Assay names them."""
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest(), _b64(raw)


def _reseal(path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit a bundle and recompute its seal, as anyone can: the seal is a plain SHA-256."""
    bundle = json.loads(path.read_text(encoding="utf-8"))
    bundle.pop("sha256")
    edit(bundle)
    seal = hashlib.sha256(json.dumps(bundle, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    path.write_text(json.dumps({**bundle, "sha256": seal}), encoding="utf-8")


def _forged(item: dict[str, Any], edit: Callable[[dict[str, Any]], None], key: Ed25519PrivateKey | None) -> dict:
    """A bundle's sign-off with its record edited, its digest recomputed, signed with `key` (None: unsigned)."""
    record = copy.deepcopy(item["record"])
    edit(record)
    fingerprint = signature = public = None
    if key is None:
        record.pop("key", None)
    else:
        fingerprint, public = _public(key)
        record["key"] = fingerprint
        signature = _b64(key.sign(_canonical(record).encode()))
    digest = hashlib.sha256(_canonical(record).encode()).hexdigest()
    return {
        **item,
        "record": record,
        "digest": digest,
        "key_fingerprint": fingerprint,
        "signature": signature,
        "public_key": public,
        "reopened_at": None,
    }


def _retag(tag: str) -> Callable[[dict[str, Any]], None]:
    def edit(record: dict[str, Any]) -> None:
        for point in record["points"]:
            point["tag"] = tag

    return edit


def _retag_items(bundle: dict[str, Any], answer_id: str, tag: str) -> None:
    for item in bundle["items"]:
        if item["answer_id"] == answer_id:
            for point in item["points"]:
                point["tag"] = tag


def _anas_bundle(project: Project, tmp_path: Path, *answers: str) -> Path:
    """ana reviews and signs the answers on her laptop, through the command line, and exports her bundle."""
    for answer in answers:
        _submitted(project, answer)
        assert main(["--db", project.url, "signoff", answer, "--reviewer", "ana"]) == 0
    path = tmp_path / "ana.json"
    export_bundle(project, "ana", path)
    return path


# ---------------------------------------------------------------- bundles


@pytest.mark.every_store
def test_a_bundle_with_an_unsigned_sign_off_is_refused(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    """An unsigned sign-off marked "imported" was taken as signed before reviewer keys."""
    bundle = _anas_bundle(sample_project, tmp_path, ANSWER)

    def forge(data: dict[str, Any]) -> None:
        data["signoffs"] = [_forged(data["signoffs"][0], _retag("incorrect"), None)]
        _retag_items(data, ANSWER, "incorrect")
        data.pop("keys", None)

    _reseal(bundle, forge)
    computer("lead")
    before = _state(lead)
    with pytest.raises(InvalidInput, match=r"ana's sign-off of answer contractnli-027 is not signed with their key"):
        import_bundle(lead, bundle)
    assert _state(lead) == before
    assert _verify(capsys, lead)[0] == 0


@pytest.mark.every_store
def test_a_bundle_cannot_reopen_a_sign_off_and_sign_again_with_a_key_it_brings(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    genuine = _anas_bundle(sample_project, tmp_path, ANSWER)
    computer("lead")
    import_bundle(lead, genuine)
    assert _verify(capsys, lead)[0] == 0
    attacker = Ed25519PrivateKey.generate()
    forged = tmp_path / "forged.json"
    forged.write_text(genuine.read_text(encoding="utf-8"), encoding="utf-8")

    def forge(data: dict[str, Any]) -> None:
        signed = data["signoffs"][0]
        data["signoffs"] = [
            {**signed, "reopened_at": datetime.now(UTC).isoformat(), "reopened_by": "ana", "reopen_reason": "x"},
            _forged(signed, _retag("incorrect"), attacker),
        ]
        _retag_items(data, ANSWER, "incorrect")

    _reseal(forged, forge)
    before = _state(lead)
    with pytest.raises(
        InvalidInput, match=r"the bundle reopens ana's sign-off of answer contractnli-027, in force here"
    ):
        import_bundle(lead, forged)
    assert _state(lead) == before

    # Without the reopen, a sign-off of another answer with a key the bundle brings under ana's name.
    def sign_other(data: dict[str, Any]) -> None:
        other = _forged(data["signoffs"][1], lambda r: r["answer"].update(id=OTHER), attacker) | {"answer_id": OTHER}
        data["signoffs"] = [data["signoffs"][0] | {"reopened_at": None}, other]
        _retag_items(data, ANSWER, "correct")  # ana's signed review as it is here

    _reseal(forged, sign_other)
    with pytest.raises(InvalidInput, match=r"ana already has key [0-9a-f]{16} in this project: another key of theirs"):
        import_bundle(lead, forged)
    assert _state(lead) == before
    assert _verify(capsys, lead)[0] == 0


@pytest.mark.every_store
def test_a_bundle_cannot_carry_a_sign_off_of_another_reviewer(
    sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    bundle = _anas_bundle(sample_project, tmp_path, ANSWER)
    _reseal(bundle, lambda data: data.update(reviewer="ben"))  # ana's signed work, passed off as ben's bundle
    computer("lead")
    before = _state(lead)
    with pytest.raises(InvalidInput, match=r"the sign-off of answer contractnli-027 names 'ana', not 'ben'"):
        import_bundle(lead, bundle)
    assert _state(lead) == before


@pytest.mark.every_store
def test_a_bundle_brings_a_first_key_and_a_rotation_signed_by_it(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    """The honest case: ana signs, rotates her key, signs again; the lead takes both sign-offs."""
    _submitted(sample_project, ANSWER)
    _submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")
    assert status == 0, out
    assert _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")[0] == 0
    bundle = tmp_path / "ana.json"
    export_bundle(sample_project, "ana", bundle)
    computer("lead")
    import_bundle(lead, bundle)
    assert [c.matches for c in lead.signoffs()] == [True, True]
    listed = json.loads(_cli(capsys, lead, "keys", "--json")[1])
    assert [k["retired_at"] is not None for k in listed] == [True, False]
    status, out = _verify(capsys, lead)
    assert status == 0, out
    assert import_bundle(lead, bundle).already_imported


@pytest.mark.every_store
def test_a_bundle_brings_the_rotations_from_the_key_the_project_knows(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    """ana rotates twice after the lead last heard of her: both rotations travel, and are checked."""
    first = _anas_bundle(sample_project, tmp_path, ANSWER)
    computer("lead")
    import_bundle(lead, first)
    computer("laptop")
    for _ in range(2):
        assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    _submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")[0] == 0
    second = tmp_path / "ana-again.json"
    export_bundle(sample_project, "ana", second)
    broken = tmp_path / "broken.json"
    broken.write_text(second.read_text(encoding="utf-8"), encoding="utf-8")
    _reseal(broken, lambda data: data["keys"][1].update(rotation_signature=data["keys"][2]["rotation_signature"]))
    computer("lead")
    before = _state(lead)
    with pytest.raises(InvalidInput, match=r"the rotation to key [0-9a-f]{16} does not verify with ana's key"):
        import_bundle(lead, broken)
    assert _state(lead) == before
    import_bundle(lead, second)
    assert [c.matches for c in lead.signoffs()] == [True, True]
    listed = json.loads(_cli(capsys, lead, "keys", "--json")[1])
    assert [k["retired_at"] is not None for k in listed] == [True, True, False]
    status, out = _verify(capsys, lead)
    assert status == 0, out


@pytest.mark.every_store
def test_a_bundle_brings_no_first_key_for_a_reviewer_who_signed_here_before_keys(
    sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    bundle = _anas_bundle(sample_project, tmp_path, ANSWER)
    computer("lead")
    _submitted(lead, OTHER)
    with lead.sessions.begin() as session:  # a sign-off from before reviewer keys
        rater = session.execute(text("SELECT id FROM raters WHERE name = 'ana'")).scalar_one()
        session.execute(
            text(
                "INSERT INTO signoffs (answer_id, rater_id, signed_at, digest, record) "
                "VALUES (:a, :r, CURRENT_TIMESTAMP, :d, '{}')"
            ),
            {"a": OTHER, "r": rater, "d": "0" * 64},
        )
    before = _state(lead)
    with pytest.raises(InvalidInput, match=r"ana has sign-offs in this project made before reviewer keys"):
        import_bundle(lead, bundle)
    assert _state(lead) == before


# ---------------------------------------------------------------- the project file


def _file(project: Project) -> Path:
    path = sqlite_path(project.url)
    assert path is not None
    return path


def _append(db: sqlite3.Connection, actor: str, action: str, entity: str, entity_id: str, payload: dict) -> int:
    """An audit entry appended with its link computed, as Assay would have written it."""
    prev = db.execute("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1").fetchone()[0]
    at = datetime.now(UTC).replace(tzinfo=None)
    cursor = db.execute(
        "INSERT INTO audit_log (at, actor, action, entity, entity_id, payload, prev_hash, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            at.strftime("%Y-%m-%d %H:%M:%S.%f"),
            actor,
            action,
            entity,
            entity_id,
            json.dumps(payload),
            prev,
            audit_hash(prev, at, actor, action, entity, entity_id, payload),
        ),
    )
    return int(cursor.lastrowid or 0)


def _sign_in_file(project: Project, answer_id: str, key: Ed25519PrivateKey | None, *, imported: bool = False) -> None:
    """Sign ana's review of the answer as it is stored, straight into the file: the record built from
    the live rows, signed with `key` (None: unsigned), with its audit entry."""
    with project.sessions() as session:
        rater = session.execute(text("SELECT id FROM raters WHERE name = 'ana'")).scalar_one()
        genuine = session.execute(text("SELECT CAST(record AS TEXT) FROM signoffs ORDER BY id LIMIT 1")).scalar()
        live = live_content(session, answer_id, rater)
    now = datetime.now(UTC)
    record = {**json.loads(genuine), **live, "signed_at": now.isoformat(), "reviewer": "ana"}
    fingerprint = signature = None
    if key is None:
        record.pop("key", None)
    else:
        fingerprint = _public(key)[0]
        record["key"] = fingerprint
        signature = _b64(key.sign(_canonical(record).encode()))
    digest = hashlib.sha256(_canonical(record).encode()).hexdigest()
    with sqlite3.connect(_file(project)) as db:
        db.execute(
            "INSERT INTO signoffs (answer_id, rater_id, guideline_version, signed_at, digest, record, "
            "key_fingerprint, signature) VALUES (?, ?, NULL, ?, ?, ?, ?, ?)",
            (
                answer_id,
                rater,
                now.strftime("%Y-%m-%d %H:%M:%S.%f"),
                digest,
                json.dumps(record),
                fingerprint,
                signature,
            ),
        )
        payload: dict[str, Any] = {"digest": digest, "reviewer": "ana", "guideline_version": None, "key": fingerprint}
        _append(db, "ana", "review.signed", "answer", answer_id, payload | ({"imported": True} if imported else {}))


def test_a_second_key_added_to_the_file_and_a_review_signed_again_with_it_is_reported(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    _submitted(sample_project, ANSWER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    attacker = Ed25519PrivateKey.generate()
    fingerprint, public = _public(attacker)
    with sqlite3.connect(_file(sample_project)) as db:
        db.execute(
            "INSERT INTO reviewer_keys (fingerprint, reviewer, algorithm, public_key, created_at) "
            "VALUES (?, 'ana', 'ed25519', ?, CURRENT_TIMESTAMP)",
            (fingerprint, public),
        )
        _append(
            db,
            "ana",
            "key.registered",
            "key",
            fingerprint,
            {"fingerprint": fingerprint, "reviewer": "ana", "public_key": public},
        )
        digest = db.execute("SELECT digest FROM signoffs").fetchone()[0]
        db.execute("UPDATE signoffs SET reopened_at = CURRENT_TIMESTAMP, reopened_by = 'ana', reopen_reason = 'x'")
        _append(db, "ana", "review.reopened", "answer", ANSWER, {"digest": digest, "reason": "x"})
        db.execute(
            "UPDATE labels SET tag = 'incorrect' WHERE rater_id = (SELECT id FROM raters WHERE name = 'ana') "
            "AND data_point_id IN (SELECT id FROM data_points WHERE answer_id = ?)",
            (ANSWER,),
        )
    _sign_in_file(sample_project, ANSWER, attacker)
    status, out = _verify(capsys, sample_project)
    assert status == 1, out
    assert f"ana's key {fingerprint[:16]}: it was registered beside ana's key" in out
    assert "without a rotation signed by ana's key: it is not ana's" in out
    assert f"it is signed with key {fingerprint[:16]}, registered under ana's name without a rotation" in out


def test_an_unsigned_sign_off_marked_imported_in_the_file_is_reported(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    _submitted(sample_project, ANSWER)
    _submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    _sign_in_file(sample_project, OTHER, None, imported=True)
    status, out = _verify(capsys, sample_project)
    assert status == 1, out
    assert "it is not signed: a bundle brought it without its reviewer's signature" in out


def test_a_sign_off_made_after_its_key_was_retired_is_reported(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer
) -> None:
    _submitted(sample_project, ANSWER)
    _submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    (local,) = keys.local_keys("ana")
    assert _cli(capsys, sample_project, "keys", "retire", local.fingerprint)[0] == 0
    _sign_in_file(sample_project, OTHER, keys.private_key(local))  # the retired key, taken from the laptop
    status, out = _verify(capsys, sample_project)
    assert status == 1, out
    assert f"it is signed with ana's key {local.fingerprint[:16]}, retired before" in out


# ---------------------------------------------------------------- keys


@pytest.mark.every_store
def test_a_second_key_is_made_only_as_a_rotation_signed_by_the_first(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer
) -> None:
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    (first,) = keys.local_keys("ana")
    computer("elsewhere")  # a computer without ana's key: it cannot sign the rotation
    before = _state(sample_project)
    for argv in (("keys", "create", "--reviewer", "ana"), ("signoff", ANSWER, "--reviewer", "ana")):
        if argv[0] == "signoff":
            _submitted(sample_project, ANSWER)
            before = _state(sample_project)
        status, out = _cli(capsys, sample_project, *argv)
        assert status == 2, out
        assert out.strip().count("\n") == 0 and f"ana's signing key in this project ({first.fingerprint[:16]})" in out
        assert "is not on this computer" in out
        assert _state(sample_project) == before
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
    status, out = _verify(capsys, sample_project)
    assert status == 0, out


@pytest.mark.every_store
def test_a_retired_key_signs_nothing(
    capsys: pytest.CaptureFixture[str], sample_project: Project, tmp_path: Path
) -> None:
    _submitted(sample_project, ANSWER)
    _submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    (local,) = keys.local_keys("ana")
    assert _cli(capsys, sample_project, "keys", "retire", local.fingerprint)[0] == 0
    before = _state(sample_project)
    status, out = _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "every signing key of ana in this project is retired, and a retired key signs nothing" in out
    status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")
    assert status == 2 and "a retired key signs nothing" in out, out
    report = tmp_path / "report.pdf"
    status, out = _cli(capsys, sample_project, "export", "--format", "pdf", str(report), "--sign", "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "ana's signing key on this computer is retired in this project" in out and not report.exists()
    assert _state(sample_project) == before and [k.fingerprint for k in keys.local_keys("ana")] == [local.fingerprint]


def test_a_damaged_key_in_the_keyring_is_one_sentence(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    double = MemoryKeyring()
    keyring.set_keyring(double)
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    (entry,) = double.kept
    double.kept[entry] = "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n"
    keys._unlocked.clear()  # a new process
    _submitted(sample_project, ANSWER)
    before = _state(sample_project)
    status, out = _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 2 and out.strip().count("\n") == 0, out
    assert "in the OS keyring is damaged (not a readable private key): nothing was signed" in out
    assert _state(sample_project) == before


def test_a_damaged_key_file_is_one_sentence(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer
) -> None:
    assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    (pem,) = computer("laptop").glob("*.pem")
    pem.write_bytes(b"\x00garbage")
    _submitted(sample_project, ANSWER)
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
    assert "a report is signed under a name of at most 64 characters, not 65" in out
    assert not report.exists() and keys.local_keys() == []
