"""Reviewers' public signing keys (Ed25519) as a project registers them, and checking signatures.

A key is named by its fingerprint, the SHA-256 of its raw 32 bytes, so a public key swapped in the
table no longer matches its name. Registering and retiring are audited; a key is never deleted
(triggers refuse it). The private half never enters the project: `app.keys` keeps it.

Whose key it is. A reviewer's first key in a project is taken on trust when it is registered (by
their first sign-off or `assay keys create`, or brought by their bundle while the project holds no
key and no sign-off of theirs). Every later key of theirs is registered only with a rotation: the
statement "this reviewer's key OLD is replaced by NEW", signed with OLD while OLD is in force here;
registering it retires OLD. A retired key signs nothing more, rotations included, so a reviewer
whose every key here is retired gets no new one, with one way back: a reviewer who lost their key
has a lead retire it (the lead's signature over the retirement), after which their next key is
taken on trust as a first key is. The rotation is kept in the audit entry that registers the key,
and `key_problems` reports any key registered beside a reviewer's key without one: whoever can
write the project can add a row under a reviewer's name, not sign for its key.

Retiring a key needs a signature too (`Retirement`): the key's own (its owner, who holds it) or a
lead's key in force, over "this reviewer's key K is retired", kept in the retirement's audit entry;
a rotation's retirement is vouched for by the rotation. `key_problems` reports a retirement with
neither. A new reviewer's name is refused when a reader could take it for another's
(models/names.py: invisible characters, mixed scripts, or the same name once folded).
Each function takes a session and never commits it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import select
from sqlalchemy.orm import Session

from models.names import reviewer_key, reviewer_name_problem
from storage.audit_chain import append_audit
from storage.schema import AuditRow, RaterRow, ReviewerKeyRow, utcnow

ALGORITHM = "ed25519"
REGISTERED, RETIRED = "key.registered", "key.retired"
ROTATION_FORMAT = "assay-key-rotation/1"
RETIREMENT_FORMAT = "assay-key-retirement/1"


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


def rotation_message(reviewer: str, old: str, new: str) -> bytes:
    """What a rotation's signature covers: the reviewer, the key replaced and the key replacing it."""
    return f"{ROTATION_FORMAT} {reviewer} {old} {new}".encode()


def retirement_message(reviewer: str, fingerprint: str, signer: str) -> bytes:
    """What a retirement's signature covers: whose key is retired, which, and the key that signs."""
    return f"{RETIREMENT_FORMAT} {reviewer} {fingerprint} {signer}".encode()


@dataclass(frozen=True)
class Retirement:
    """Who vouches for a key's retirement: `signer`'s signature over `retirement_message`, where the
    signer is the key retired (its owner) or a lead's key in force (`lead`: the lead's name)."""

    signer: str  # the fingerprint of the key that signs
    signature: str  # base64
    lead: str | None = None


@dataclass(frozen=True)
class Rotation:
    """A new key vouched for by the reviewer's key in force: `old`'s signature over `rotation_message`."""

    old: str  # the fingerprint of the key replaced
    signature: str  # base64


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


def register_key(
    session: Session, reviewer: str, public_raw: bytes, actor: str, rotation: Rotation | None = None
) -> tuple[RegisteredKey, bool]:
    """Register a reviewer's public key (audited); one registered already changes nothing (False).
    A reviewer's first key needs nothing more; a later one needs a rotation signed with their key in
    force, which it then replaces (retired). ValueError when the fingerprint is registered to another
    reviewer, or a later key comes without a rotation that verifies."""
    fingerprint = fingerprint_of(public_raw)
    existing = registered_key(session, fingerprint)
    if existing is not None:
        if existing.reviewer != reviewer:
            raise ValueError(f"key {fingerprint[:16]} is registered to {existing.reviewer}, not {reviewer}")
        return existing, False
    theirs = registered_keys(session, reviewer)
    if not theirs and (problem := new_reviewer_problem(session, reviewer)):
        raise ValueError(problem)
    if theirs and fresh_start(session, reviewer):
        theirs, rotation = [], None  # their keys were retired by a lead (lost): the next is a first key
    if theirs and (problem := _rotation_problem(reviewer, theirs, fingerprint, rotation)):
        raise ValueError(problem)
    row = ReviewerKeyRow(
        fingerprint=fingerprint, reviewer=reviewer, algorithm=ALGORITHM, public_key=b64(public_raw), created_at=utcnow()
    )
    session.add(row)
    session.flush()
    payload = {"fingerprint": fingerprint, "reviewer": reviewer, "public_key": row.public_key}
    if theirs and rotation is not None:
        payload |= {"rotated_from": rotation.old, "rotation_signature": rotation.signature}
    append_audit(session, actor, REGISTERED, "key", fingerprint, payload)
    if theirs and rotation is not None:
        _retire(session, rotation.old, actor, {"replaced_by": fingerprint})
    return _of(row), True


def new_reviewer_problem(session: Session, reviewer: str) -> str | None:
    """Why a name the project does not know yet cannot be a reviewer's (None: it can): a name a
    reader could take for another (models/names.py), or one that folds to a reviewer's already here."""
    names = set(session.scalars(select(RaterRow.name))) | set(session.scalars(select(ReviewerKeyRow.reviewer)))
    if reviewer in names:
        return None
    if problem := reviewer_name_problem(reviewer):
        return problem
    folded = reviewer_key(reviewer)
    for name in sorted(names):
        if reviewer_key(name) == folded:
            return f"the reviewer name {reviewer!r} reads as {name!r}, already in this project: choose another name"
    return None


def fresh_start(session: Session, reviewer: str) -> bool:
    """Whether every key of the reviewer here is retired and the last of them by a lead (a lost key):
    their next key is then registered as a first key."""
    theirs = registered_keys(session, reviewer)
    if not theirs or any(k.retired_at is None for k in theirs):
        return False
    fingerprints = {k.fingerprint for k in theirs}
    last = [p for _, action, p in _registrations(session) if action == RETIRED and p.get("fingerprint") in fingerprints]
    return bool(last) and bool(last[-1].get("lead"))


def _rotation_problem(
    reviewer: str, theirs: list[RegisteredKey], fingerprint: str, rotation: Rotation | None
) -> str | None:
    """Why a key may not join the reviewer's keys (None: it may): no rotation, or not a good one."""
    in_force = [k for k in theirs if k.retired_at is None]
    if rotation is None:
        if not in_force:
            return (
                f"every key of {reviewer} in this project is retired, and a retired key signs nothing: "
                f"no new key of theirs can be registered here"
            )
        return (
            f"{reviewer} already has key {in_force[-1].fingerprint[:16]} in this project: another key of "
            "theirs is registered only with a rotation signed by it"
        )
    old = next((k for k in theirs if k.fingerprint == rotation.old), None)
    if old is None:
        return f"the rotation to key {fingerprint[:16]} names key {rotation.old[:16]}, which is not {reviewer}'s here"
    if old.retired_at is not None:
        return f"the rotation to key {fingerprint[:16]} is signed with {reviewer}'s retired key {old.fingerprint[:16]}"
    message = rotation_message(reviewer, old.fingerprint, fingerprint)
    if not old.matches_fingerprint or not signature_valid(old.public_key, message, rotation.signature):
        return f"the rotation to key {fingerprint[:16]} does not verify with {reviewer}'s key {old.fingerprint[:16]}"
    return None


def retire_key(session: Session, fingerprint: str, actor: str, retirement: Retirement) -> RegisteredKey | None:
    """Retire a key (audited): it signs nothing more, and what it signed still verifies. None: unknown.
    ValueError when the retirement is not signed by the key itself or by a lead's key in force."""
    key = registered_key(session, fingerprint)
    if key is None:
        return None
    if problem := retirement_problem(session, key.reviewer, fingerprint, retirement):
        raise ValueError(problem)
    payload = {"reviewer": key.reviewer, "signed_by": retirement.signer, "signature": retirement.signature}
    return _retire(session, fingerprint, actor, payload | {"lead": retirement.lead})


def retirement_problem(session: Session, reviewer: str, fingerprint: str, retirement: Retirement) -> str | None:
    """Why a retirement's signature does not vouch for it (None: it does)."""
    signer = registered_key(session, retirement.signer)
    name = f"{reviewer}'s key {fingerprint[:16]}"
    if signer is None or not signer.matches_fingerprint:
        return f"the retirement of {name} is signed with key {retirement.signer[:16]}, which this project does not have"
    if signer.fingerprint != fingerprint:
        if not retirement.lead or signer.reviewer != retirement.lead:
            return f"the retirement of {name} is signed neither by that key nor by a lead's key"
        if signer.retired_at is not None:
            return f"the retirement of {name} is signed with {signer.reviewer}'s retired key {signer.fingerprint[:16]}"
    message = retirement_message(reviewer, fingerprint, signer.fingerprint)
    if not signature_valid(signer.public_key, message, retirement.signature):
        return f"the retirement of {name} does not verify with key {signer.fingerprint[:16]}"
    return None


def _retire(session: Session, fingerprint: str, actor: str, vouched: dict[str, Any]) -> RegisteredKey | None:
    row = session.scalar(select(ReviewerKeyRow).where(ReviewerKeyRow.fingerprint == fingerprint))
    if row is None:
        return None
    if row.retired_at is None:
        row.retired_at, row.retired_by = utcnow(), actor
        session.flush()
        append_audit(session, actor, RETIRED, "key", fingerprint, {"fingerprint": fingerprint, **vouched})
    return _of(row)


def _registrations(session: Session) -> list[tuple[int, str, dict[str, Any]]]:
    """Every registration and retirement in the audit log, in log order: id, action, payload."""
    rows = session.execute(
        select(AuditRow.id, AuditRow.action, AuditRow.payload)
        .where(AuditRow.action.in_((REGISTERED, RETIRED)))
        .order_by(AuditRow.id)
    )
    return [(int(i), str(action), payload if isinstance(payload, dict) else {}) for i, action, payload in rows]


def unvouched_keys(session: Session) -> dict[str, str]:
    """Keys registered under a reviewer's name that are not theirs by the rules above, by fingerprint,
    with why: a key registered beside their key without a rotation signed by a key of theirs in force
    then (the audit log's order tells "then")."""
    keys_of: dict[str, dict[str, str]] = {}  # reviewer -> fingerprint -> public key, as registered
    retired: set[str] = set()
    lost: set[str] = set()  # reviewers whose every key a lead retired: their next key is a first key
    found: dict[str, str] = {}
    for _, action, payload in _registrations(session):
        fingerprint = str(payload.get("fingerprint"))
        if action == RETIRED:
            retired.add(fingerprint)
            owner = next((r for r, keys in keys_of.items() if fingerprint in keys), None)
            if owner is not None and payload.get("lead") and set(keys_of[owner]) <= retired:
                lost.add(owner)
            continue
        reviewer = str(payload.get("reviewer"))
        theirs = keys_of.setdefault(reviewer, {})
        if reviewer in lost and not payload.get("rotated_from"):
            lost.discard(reviewer)
            theirs.clear()
        if theirs and fingerprint not in theirs:
            old = str(payload.get("rotated_from") or "")
            message = rotation_message(reviewer, old, fingerprint)
            if old not in theirs or old in found:
                found[fingerprint] = (
                    f"it was registered beside {reviewer}'s key {next(iter(theirs))[:16]} without a rotation "
                    f"signed by {reviewer}'s key: it is not {reviewer}'s"
                )
            elif old in retired:
                found[fingerprint] = f"its rotation is signed with {reviewer}'s key {old[:16]}, retired before it"
            elif not signature_valid(theirs[old], message, payload.get("rotation_signature")):
                found[fingerprint] = f"its rotation does not verify with {reviewer}'s key {old[:16]} (forged)"
        theirs[fingerprint] = str(payload.get("public_key"))
    return found


def retirements(session: Session) -> dict[str, int]:
    """The audit entry that retired each retired key, by fingerprint: what it signed after is forged."""
    return {
        str(payload.get("fingerprint")): entry_id
        for entry_id, action, payload in reversed(_registrations(session))
        if action == RETIRED
    }


def bundle_keys(session: Session, reviewer: str) -> list[dict[str, Any]]:
    """A reviewer's keys as they travel in a bundle, oldest first: each public key with the rotation
    that vouches for it (none for their first key)."""
    return [
        {
            "fingerprint": str(payload.get("fingerprint")),
            "public_key": payload.get("public_key"),
            "rotated_from": payload.get("rotated_from"),
            "rotation_signature": payload.get("rotation_signature"),
        }
        for _, action, payload in _registrations(session)
        if action == REGISTERED and payload.get("reviewer") == reviewer
    ]


def key_problems(session: Session) -> list[str]:
    """What is wrong with the keys table: a public key that does not match its fingerprint (swapped),
    a key no audit entry registered (added behind Assay's back), or a key registered under a
    reviewer's name that their own key did not vouch for (a second key without a signed rotation)."""
    audited = {
        str(payload.get("fingerprint")): (str(payload.get("public_key")), payload.get("reviewer"))
        for _, action, payload in _registrations(session)
        if action == REGISTERED
    }
    unvouched = unvouched_keys(session)
    problems = []
    for key in registered_keys(session):
        name = f"{key.reviewer}'s key {key.fingerprint[:16]}"
        if not key.matches_fingerprint:
            problems.append(f"{name}: its public key does not match its fingerprint (the key was swapped)")
        elif key.fingerprint not in audited:
            problems.append(f"{name}: no audit entry registered it (it was added behind Assay's back)")
        elif audited[key.fingerprint][0] != key.public_key:
            problems.append(f"{name}: its public key is not the one registered (the key was swapped)")
        elif audited[key.fingerprint][1] != key.reviewer:
            problems.append(f"{name}: it was registered as {audited[key.fingerprint][1]}'s (its owner was changed)")
        elif key.fingerprint in unvouched:
            problems.append(f"{name}: {unvouched[key.fingerprint]}")
    return problems + unvouched_retirements(session)


def unvouched_retirements(session: Session) -> list[str]:
    """Each retirement that neither a rotation nor a signature of the key itself or a lead's vouches for
    (a key retired behind its owner's back, or with a forged signature)."""
    entries = _registrations(session)
    owners = {str(p.get("fingerprint")): str(p.get("reviewer")) for _, action, p in entries if action == REGISTERED}
    rotated = {str(p.get("rotated_from")) for _, action, p in entries if action == REGISTERED and p.get("rotated_from")}
    problems = []
    for entry_id, action, payload in entries:
        fingerprint = str(payload.get("fingerprint"))
        if action != RETIRED or fingerprint in rotated:
            continue
        reviewer = owners.get(fingerprint, "?")
        signer, signature = payload.get("signed_by"), payload.get("signature")
        name = f"{reviewer}'s key {fingerprint[:16]}"
        if not isinstance(signer, str) or not isinstance(signature, str):
            problems.append(f"{name}: audit entry {entry_id} retired it with no signature of that key or a lead's")
            continue
        lead = payload.get("lead")
        signing = registered_key(session, signer)
        message = retirement_message(reviewer, fingerprint, signer)
        if (
            signing is None
            or (signer != fingerprint and (not lead or signing.reviewer != lead))
            or not signature_valid(signing.public_key, message, signature)
        ):
            problems.append(f"{name}: audit entry {entry_id} retired it with a signature that does not vouch for it")
    return problems
