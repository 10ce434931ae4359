"""Reviewers' public signing keys (Ed25519) as a project registers them, and checking signatures.

A key is named by its fingerprint, the SHA-256 of its raw 32 bytes, so a public key swapped in the
table no longer matches its name. Registering and retiring are audited; a key is never deleted
(triggers refuse it). The private half never enters the project: `app.review.keys` keeps it.
Each function takes a session and never commits it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.audit_chain import append_audit
from storage.schema import ReviewerKeyRow, utcnow

ALGORITHM = "ed25519"
REGISTERED, RETIRED = "key.registered", "key.retired"


def fingerprint_of(public_raw: bytes) -> str:
    """A key's name: the SHA-256 of its raw public bytes, in hex."""
    return hashlib.sha256(public_raw).hexdigest()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: str) -> bytes:
    """Base64 text back to bytes; ValueError when it is not base64."""
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise ValueError("not base64") from exc


def signature_valid(public_key_b64: str, message: bytes, signature_b64: str | None) -> bool:
    """Whether the signature is the key's over the message; anything unreadable is simply not valid."""
    if not signature_b64:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(unb64(public_key_b64))
        key.verify(unb64(signature_b64), message)
    except (InvalidSignature, ValueError):
        return False
    return True


@dataclass(frozen=True)
class Signer:
    """Who signs, and how: the key's fingerprint and a function that signs bytes with its private half."""

    reviewer: str
    fingerprint: str
    sign: Callable[[bytes], bytes]


@dataclass(frozen=True, kw_only=True)
class RegisteredKey:
    """A reviewer's public key as the project has it."""

    fingerprint: str
    reviewer: str
    algorithm: str
    public_key: str  # base64 of the raw 32 bytes
    created_at: datetime
    retired_at: datetime | None
    retired_by: str | None

    @property
    def matches_fingerprint(self) -> bool:
        try:
            return fingerprint_of(unb64(self.public_key)) == self.fingerprint
        except ValueError:
            return False


def _of(row: ReviewerKeyRow) -> RegisteredKey:
    return RegisteredKey(
        fingerprint=row.fingerprint,
        reviewer=row.reviewer,
        algorithm=row.algorithm,
        public_key=row.public_key,
        created_at=row.created_at,
        retired_at=row.retired_at,
        retired_by=row.retired_by,
    )


def registered_keys(session: Session, reviewer: str | None = None) -> list[RegisteredKey]:
    """Every key the project knows, oldest first, or one reviewer's."""
    statement = select(ReviewerKeyRow).order_by(ReviewerKeyRow.id)
    if reviewer is not None:
        statement = statement.where(ReviewerKeyRow.reviewer == reviewer)
    return [_of(row) for row in session.scalars(statement)]


def registered_key(session: Session, fingerprint: str) -> RegisteredKey | None:
    row = session.scalar(select(ReviewerKeyRow).where(ReviewerKeyRow.fingerprint == fingerprint))
    return None if row is None else _of(row)


def register_key(session: Session, reviewer: str, public_raw: bytes, actor: str) -> tuple[RegisteredKey, bool]:
    """Register a reviewer's public key (audited); one registered already changes nothing (False).
    ValueError when the fingerprint is registered to another reviewer."""
    fingerprint = fingerprint_of(public_raw)
    existing = registered_key(session, fingerprint)
    if existing is not None:
        if existing.reviewer != reviewer:
            raise ValueError(f"key {fingerprint[:16]} is registered to {existing.reviewer}, not {reviewer}")
        return existing, False
    row = ReviewerKeyRow(
        fingerprint=fingerprint, reviewer=reviewer, algorithm=ALGORITHM, public_key=b64(public_raw), created_at=utcnow()
    )
    session.add(row)
    session.flush()
    payload = {"fingerprint": fingerprint, "reviewer": reviewer, "public_key": row.public_key}
    append_audit(session, actor, REGISTERED, "key", fingerprint, payload)
    return _of(row), True


def retire_key(session: Session, fingerprint: str, actor: str) -> RegisteredKey | None:
    """Retire a key (audited): it signs nothing more, and what it signed still verifies. None: unknown."""
    row = session.scalar(select(ReviewerKeyRow).where(ReviewerKeyRow.fingerprint == fingerprint))
    if row is None:
        return None
    if row.retired_at is None:
        row.retired_at, row.retired_by = utcnow(), actor
        session.flush()
        append_audit(session, actor, RETIRED, "key", fingerprint, {"fingerprint": fingerprint})
    return _of(row)


def key_problems(session: Session) -> list[str]:
    """What is wrong with the keys table: a public key that does not match its fingerprint (swapped),
    or a key no audit entry registered (added behind Assay's back)."""
    from storage.schema import AuditRow

    audited = {
        str((payload or {}).get("fingerprint")): str((payload or {}).get("public_key"))
        for payload in session.scalars(select(AuditRow.payload).where(AuditRow.action == REGISTERED))
    }
    problems = []
    for key in registered_keys(session):
        name = f"{key.reviewer}'s key {key.fingerprint[:16]}"
        if not key.matches_fingerprint:
            problems.append(f"{name}: its public key does not match its fingerprint (the key was swapped)")
        elif key.fingerprint not in audited:
            problems.append(f"{name}: no audit entry registered it (it was added behind Assay's back)")
        elif audited[key.fingerprint] != key.public_key:
            problems.append(f"{name}: its public key is not the one registered (the key was swapped)")
    return problems
