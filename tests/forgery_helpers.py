"""What the forgery tests share (tests/test_forgery*.py): two computers, each its own key folder, and
what an attacker needs to seal, sign and count as Assay does."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backends.fail
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text

from app import keys
from app.project import Project
from app.review.service import ReviewService
from models.vocabulary import Tag

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


def submitted(project: Project, answer_id: str, reviewer: str = "ana", tag: Tag = Tag.CORRECT) -> ReviewService:
    service = ReviewService(project, reviewer)
    for point in service.open(answer_id).points:
        service.set_tag(answer_id, point.point.id, tag)
    service.submit(answer_id)
    return service


def signed_then_retired(capsys: pytest.CaptureFixture[str], project: Project) -> keys.LocalKey:
    """Both answers reviewed by ana, ANSWER signed off with her key, then that key retired: it is returned."""
    submitted(project, ANSWER)
    submitted(project, OTHER)
    assert _cli(capsys, project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    (local,) = keys.local_keys("ana")
    assert _cli(capsys, project, "keys", "retire", local.fingerprint)[0] == 0
    return local


def state(project: Project) -> tuple[int, ...]:
    """Sign-offs, keys, audit entries and labels: what a refusal must leave as it was."""
    with project.sessions() as session:
        return tuple(
            session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one()
            for table in ("signoffs", "reviewer_keys", "audit_log", "labels")
        )


def verify(capsys: pytest.CaptureFixture[str], project: Project) -> tuple[int, str]:
    return _cli(capsys, project, "audit", "verify")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def reseal(path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit a bundle and recompute its seal, as anyone can: the seal is a plain SHA-256."""
    bundle = json.loads(path.read_text(encoding="utf-8"))
    bundle.pop("sha256")
    edit(bundle)
    seal = hashlib.sha256(json.dumps(bundle, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    path.write_text(json.dumps({**bundle, "sha256": seal}), encoding="utf-8")


def public_key_of(key: Ed25519PrivateKey) -> tuple[str, str]:
    """The key's fingerprint and base64 public key, as Assay names them."""
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest(), b64(raw)
