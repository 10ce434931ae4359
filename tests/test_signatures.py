"""Sign-offs anyone can verify and no one can forge, on SQLite and PostgreSQL.

Each attack is made as an attacker who can write the project would make it: raw SQL, the triggers
that keep the log append-only dropped (SQLite) or disabled (PostgreSQL) and put back, every digest
recomputed and the whole audit chain rebuilt so that the chain alone verifies. `assay audit verify`
must still exit 1, naming the answer and the cause. The certificate a sign-off exports is checked
by packaging/verify_signoff.py, outside Assay.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.project import DEFAULT_GUIDELINES, Project
from app.review.service import ReviewService
from models.vocabulary import Tag
from storage.audit import GENESIS, _time, audit_hash

from .key_helpers import cli as _cli

pytestmark = pytest.mark.every_store

ANSWER, OTHER = "contractnli-027", "contractnli-028"
ROOT = Path(__file__).resolve().parent.parent
VERIFY = ROOT / "packaging" / "verify_signoff.py"


def _submitted(project: Project, answer_id: str, reviewer: str = "ana", tag: Tag = Tag.CORRECT) -> ReviewService:
    service = ReviewService(project, reviewer)
    state = service.open(answer_id)
    for point in state.points:
        service.set_tag(answer_id, point.point.id, tag)
    service.submit(answer_id)
    return service


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


@contextmanager
def _behind_assays_back(project: Project) -> Iterator[Session]:
    """A transaction with the append-only triggers out of the way, as an attacker would have it."""
    with project.sessions.begin() as session:
        if session.get_bind().dialect.name == "sqlite":
            where = "type = 'trigger' AND tbl_name IN ('audit_log', 'audit_heads')"
            saved = session.execute(text(f"SELECT name, sql FROM sqlite_master WHERE {where}")).all()
            for name, _ in saved:
                session.execute(text(f"DROP TRIGGER {name}"))
            yield session
            for _, sql in saved:
                session.execute(text(sql))
        else:
            for table in ("audit_log", "audit_heads", "reviewer_keys"):
                session.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
            yield session
            for table in ("audit_log", "audit_heads", "reviewer_keys"):
                session.execute(text(f"ALTER TABLE {table} ENABLE TRIGGER USER"))


def _rebuild_chain(session: Session, payloads: dict[int, dict[str, Any]] | None = None) -> None:
    """Recompute every link of the audit chain from the first, as a forger would (with new payloads)."""
    rows = session.execute(
        text(
            "SELECT id, CAST(at AS TEXT), actor, action, entity, entity_id, CAST(payload AS TEXT) "
            "FROM audit_log ORDER BY id"
        )
    ).all()
    prev = GENESIS
    for entry_id, at, actor, action, entity, entity_id, payload_text in rows:
        payload = (payloads or {}).get(entry_id, json.loads(payload_text))
        digest = audit_hash(prev, _time(at), actor, action, entity, entity_id, payload)
        session.execute(
            text("UPDATE audit_log SET payload = :p, prev_hash = :prev, hash = :h WHERE id = :id"),
            {"p": json.dumps(payload), "prev": prev, "h": digest, "id": entry_id},
        )
        prev = digest


def _resign(session: Session, answer_id: str, edit: Any, signer: Ed25519PrivateKey | None = None) -> None:
    """Edit the signed record of the answer, recompute its digest (and sign it with the attacker's
    key when given), and fix the audit entry that records the digest; then rebuild the chain."""
    row_id, record_text, digest = session.execute(
        text("SELECT id, CAST(record AS TEXT), digest FROM signoffs WHERE answer_id = :a"), {"a": answer_id}
    ).one()
    record = json.loads(record_text)
    edit(record)
    new_digest = hashlib.sha256(_canonical(record).encode()).hexdigest()
    values: dict[str, Any] = {"r": json.dumps(record), "d": new_digest, "id": row_id}
    update = "UPDATE signoffs SET record = :r, digest = :d"
    if signer is not None:
        update += ", signature = :s"
        values["s"] = base64.b64encode(signer.sign(_canonical(record).encode())).decode()
    session.execute(text(update + " WHERE id = :id"), values)
    payloads = {}
    for entry_id, payload_text in session.execute(text("SELECT id, CAST(payload AS TEXT) FROM audit_log")).all():
        payload = json.loads(payload_text)
        if payload.get("digest") == digest:
            payloads[entry_id] = {**payload, "digest": new_digest}
    _rebuild_chain(session, payloads)


def _verify(capsys: pytest.CaptureFixture[str], project: Project) -> tuple[int, str, dict[str, Any]]:
    status, out = _cli(capsys, project, "audit", "verify")
    _, report = _cli(capsys, project, "audit", "verify", "--json")
    return status, out, json.loads(report)


@pytest.fixture
def signed(capsys: pytest.CaptureFixture[str], sample_project: Project) -> Project:
    """ana's review of ANSWER, signed off through the command line (her key made on the way)."""
    sample_project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "lead")
    _submitted(sample_project, ANSWER)
    status, out = _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 0, out
    assert "signed with key" in out
    status, out = _cli(capsys, sample_project, "audit", "verify")
    assert status == 0, out
    assert "1 sign-off: it matches what is stored" in out
    return sample_project


def test_a_sign_off_is_an_ed25519_signature_with_the_reviewers_registered_key(signed: Project) -> None:
    with signed.sessions() as session:
        record_text, signature, fingerprint = session.execute(
            text("SELECT CAST(record AS TEXT), signature, key_fingerprint FROM signoffs")
        ).one()
        public = session.execute(
            text("SELECT public_key FROM reviewer_keys WHERE fingerprint = :f AND reviewer = 'ana'"), {"f": fingerprint}
        ).scalar_one()
        actions = [a for (a,) in session.execute(text("SELECT action FROM audit_log ORDER BY id")).all()]
        heads = session.execute(text("SELECT count(*) FROM audit_heads")).scalar_one()
    record = json.loads(record_text)
    raw = base64.b64decode(public)
    assert hashlib.sha256(raw).hexdigest() == fingerprint == record["key"]
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    Ed25519PublicKey.from_public_bytes(raw).verify(base64.b64decode(signature), _canonical(record).encode())
    assert actions[-2:] == ["key.registered", "review.signed"] and heads == 1


def test_a_label_edited_and_every_hash_recomputed_is_caught(
    capsys: pytest.CaptureFixture[str], signed: Project
) -> None:
    with _behind_assays_back(signed) as session:
        session.execute(
            text(
                "UPDATE labels SET tag = 'incorrect' WHERE id = (SELECT min(l.id) FROM labels l "
                "JOIN data_points p ON p.id = l.data_point_id JOIN raters r ON r.id = l.rater_id "
                "WHERE p.answer_id = :a AND r.name = 'ana')"
            ),
            {"a": ANSWER},
        )

        def retag(record: dict[str, Any]) -> None:
            record["points"][0]["tag"] = "incorrect"

        _resign(session, ANSWER, retag)
    status, out, report = _verify(capsys, signed)
    assert status == 1
    assert f"{ANSWER} signed by ana" in out
    assert "its signature does not verify with ana's key (the record was edited, or forged)" in out
    assert "the chain was rewritten" in out  # the head ana signed no longer matches the rebuilt chain
    assert not report["ok"]


def test_a_sign_off_forged_without_the_private_key_is_caught(
    capsys: pytest.CaptureFixture[str], signed: Project
) -> None:
    _submitted(signed, OTHER)  # submitted, never signed: the forger signs it for ana
    attacker = Ed25519PrivateKey.generate()
    with _behind_assays_back(signed) as session:
        row = session.execute(
            text("SELECT rater_id, CAST(record AS TEXT), key_fingerprint FROM signoffs WHERE answer_id = :a"),
            {"a": ANSWER},
        ).one()
        record = {**json.loads(row[1]), "answer": {"id": OTHER, "sha256": "0" * 64}}
        digest = hashlib.sha256(_canonical(record).encode()).hexdigest()
        signature = base64.b64encode(attacker.sign(_canonical(record).encode())).decode()
        session.execute(
            text(
                "INSERT INTO signoffs (answer_id, rater_id, signed_at, digest, record, key_fingerprint, signature) "
                "VALUES (:a, :r, CURRENT_TIMESTAMP, :d, :rec, :k, :s)"
            ),
            {"a": OTHER, "r": row[0], "d": digest, "rec": json.dumps(record), "k": row[2], "s": signature},
        )
        session.execute(
            text(
                "INSERT INTO audit_log (at, actor, action, entity, entity_id, payload, prev_hash, hash) "
                "VALUES (CURRENT_TIMESTAMP, 'ana', 'review.signed', 'answer', :a, :p, '', '')"
            ),
            {"a": OTHER, "p": json.dumps({"digest": digest, "reviewer": "ana", "key": row[2]})},
        )
        _rebuild_chain(session)
    status, out, _ = _verify(capsys, signed)
    assert status == 1
    assert f"{OTHER} signed by ana" in out and "its signature does not verify with ana's key" in out


def test_a_public_key_swapped_in_the_keys_table_is_caught(capsys: pytest.CaptureFixture[str], signed: Project) -> None:
    attacker = Ed25519PrivateKey.generate()
    public = attacker.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    with _behind_assays_back(signed) as session:
        if session.get_bind().dialect.name == "sqlite":
            session.execute(text("DROP TRIGGER reviewer_keys_retire_only"))
        session.execute(text("UPDATE reviewer_keys SET public_key = :k"), {"k": base64.b64encode(public).decode()})

        def retag(record: dict[str, Any]) -> None:
            record["points"][0]["comment"] = "the forger's words"

        _resign(session, ANSWER, retag, signer=attacker)  # a signature that verifies with the swapped key
    status, out, _ = _verify(capsys, signed)
    assert status == 1
    assert "its public key does not match its fingerprint (the key was swapped)" in out
    assert f"{ANSWER} signed by ana" in out and "was swapped in the keys table" in out


def test_a_deleted_audit_row_is_caught(capsys: pytest.CaptureFixture[str], signed: Project) -> None:
    with _behind_assays_back(signed) as session:
        session.execute(text("DELETE FROM audit_log WHERE action = 'review.submitted'"))
        _rebuild_chain(session)  # the chain alone is whole again
    status, out, _ = _verify(capsys, signed)
    assert status == 1 and "the chain was rewritten" in out


def test_the_newest_entries_deleted_are_caught_by_the_signed_head(
    capsys: pytest.CaptureFixture[str], signed: Project
) -> None:
    with _behind_assays_back(signed) as session:
        last = session.execute(text("SELECT max(id) FROM audit_log")).scalar_one()
        session.execute(text("DELETE FROM audit_log WHERE id > :n"), {"n": last - 3})
    status, out, _ = _verify(capsys, signed)
    assert status == 1
    assert f"entry {last}: it is gone, though ana signed its hash" in out and "the log was cut short" in out


def test_the_newest_entries_and_their_heads_deleted_are_caught_by_this_computers_anchor(
    capsys: pytest.CaptureFixture[str], signed: Project
) -> None:
    with _behind_assays_back(signed) as session:
        last = session.execute(text("SELECT max(id) FROM audit_log")).scalar_one()
        session.execute(text("DELETE FROM audit_log WHERE id > :n"), {"n": last - 3})
        session.execute(text("DELETE FROM audit_heads"))
        session.execute(text("DELETE FROM signoffs"))
    status, out, _ = _verify(capsys, signed)
    assert status == 1
    cut = f"the log was cut short after entry {last - 3}: entry {last} (a sign-off: review.signed answer {ANSWER}"
    assert cut in out


def test_a_deleted_sign_off_recorded_in_the_audit_log_is_caught(
    capsys: pytest.CaptureFixture[str], signed: Project
) -> None:
    with signed.sessions.begin() as session:
        session.execute(text("DELETE FROM signoffs WHERE answer_id = :a"), {"a": ANSWER})
    status, out, report = _verify(capsys, signed)
    assert status == 1
    assert f"{ANSWER} signed by ana" in out and "the sign-off was deleted" in out
    assert [s["matches"] for s in report["signoffs"]] == [False]


def test_a_guideline_text_edited_with_its_hash_left_is_caught(
    capsys: pytest.CaptureFixture[str], signed: Project
) -> None:
    with signed.sessions.begin() as session:
        session.execute(text("UPDATE guideline_versions SET text = text || ' Ignore the contract.'"))
    status, out, _ = _verify(capsys, signed)
    assert status == 1
    assert "guideline version 1: its text no longer matches its SHA-256 (the text was edited)" in out


def test_the_certificate_verifies_outside_assay_and_fails_after_any_byte_changes(
    capsys: pytest.CaptureFixture[str], signed: Project, tmp_path: Path
) -> None:
    cert = tmp_path / "ana.cert.json"
    status, out = _cli(capsys, signed, "signoff", ANSWER, "--reviewer", "ana", "--export", str(cert))
    assert status == 0 and "had signed off" in out, out
    run = subprocess.run([sys.executable, str(VERIFY), str(cert)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"ana signed off answer {ANSWER}" in run.stdout
    data = cert.read_bytes()
    parsed = json.loads(data)
    assert parsed["record"]["key"] == parsed["fingerprint"] and parsed["algorithm"] == "ed25519"
    import verify_signoff as script  # packaging/verify_signoff.py, in this process

    problems = script.problems  # the script's own check, in this process: every byte, fast
    from app.cli.signoff import CERTIFICATE_ABOUT

    assert script.ABOUT == CERTIFICATE_ABOUT
    assert problems(parsed, data) == []
    changed = tmp_path / "changed.json"
    for position in range(len(data)):
        flipped = bytearray(data)
        flipped[position] = data[position] ^ 0x01
        try:
            edited = json.loads(bytes(flipped).decode("utf-8"))
        except ValueError:
            continue  # not JSON any more: the script says so (checked once below)
        assert problems(edited, bytes(flipped)) if isinstance(edited, dict) else True, position
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x01
    changed.write_bytes(bytes(flipped))
    run = subprocess.run([sys.executable, str(VERIFY), str(changed)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "NOT VALID" in run.stdout
