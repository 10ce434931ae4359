"""The project file cannot forge a reviewer's sign-off (issue 57, section 3), on SQLite: the file is
edited with Python's sqlite3 as an attacker would, the audit chain extended with correctly computed
links, and `assay audit verify` reports each forgery (storage/signoff_checks.py)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text

from app import keys
from app.project import Project
from storage.audit_chain import audit_hash
from storage.db import sqlite_path
from storage.signoffs import live_content

from .forgery_helpers import ANSWER, OTHER, b64, canonical, public_key_of, signed_then_retired, submitted, verify
from .forgery_helpers import computer as computer  # autouse: ana's laptop, or another computer by name
from .key_helpers import cli as _cli


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
        fingerprint = public_key_of(key)[0]
        record["key"] = fingerprint
        signature = b64(key.sign(canonical(record).encode()))
    digest = hashlib.sha256(canonical(record).encode()).hexdigest()
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
    submitted(sample_project, ANSWER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    attacker = Ed25519PrivateKey.generate()
    fingerprint, public = public_key_of(attacker)
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
    status, out = verify(capsys, sample_project)
    assert status == 1, out
    assert f"ana's key {fingerprint[:16]}: it was registered beside ana's key" in out
    assert "without a rotation signed by ana's key: it is not ana's" in out
    assert f"it is signed with key {fingerprint[:16]}, registered under ana's name without a rotation" in out


def test_an_unsigned_sign_off_marked_imported_in_the_file_is_reported(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    submitted(sample_project, ANSWER)
    submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    _sign_in_file(sample_project, OTHER, None, imported=True)
    status, out = verify(capsys, sample_project)
    assert status == 1, out
    assert "it is not signed: a bundle brought it without its reviewer's signature" in out


def test_a_sign_off_made_after_its_key_was_retired_is_reported(
    capsys: pytest.CaptureFixture[str], sample_project: Project, computer
) -> None:
    local = signed_then_retired(capsys, sample_project)
    _sign_in_file(sample_project, OTHER, keys.private_key(local))  # the retired key, taken from the laptop
    status, out = verify(capsys, sample_project)
    assert status == 1, out
    assert f"it is signed with ana's key {local.fingerprint[:16]}, retired before" in out
