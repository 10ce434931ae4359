"""Sign-offs in bundles: a reviewer's sign-offs as they travel, and merging a bundle's into a project.

A bundle's seal is a SHA-256 anyone can recompute, so it vouches for nothing: a sign-off (or an
adjudicator's decision) a bundle brings is added only when its reviewer's own key signed it. That key
must be registered here to that reviewer and not retired; or, when the project knows nothing of that
reviewer (no key, sign-off, review, label or decision of theirs: `knows_reviewer`), the bundle may
bring their first key; or the bundle brings a rotation to it signed by their key in force here. A
reviewer whose unsigned work is here already has their first key registered where the project is
(their first sign-off there, `assay keys create`): a bundle in their name could be anyone's. A bundle
never reopens a sign-off in force here (`assay reopen` does that, where the project is), and never
brings an unsigned sign-off. Each function takes a session and never commits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.audit import append_audit
from storage.reviewer_keys import (
    Rotation,
    fingerprint_of,
    fresh_start,
    register_key,
    registered_key,
    registered_keys,
    signature_valid,
    unb64,
)
from storage.schema import AdjudicationRow, AnswerRow, LabelRow, RaterRow, ReviewRow, SignOffRow
from storage.signoffs import REOPENED, SIGNED, as_utc, canonical, record_digest


class SignOffRefused(ValueError):
    """A bundle's sign-off that its reviewer's own key did not make, or that would reopen one here."""


def signoff_records(session: Session, rater_id: int) -> list[dict[str, Any]]:
    """A reviewer's sign-offs as they travel in a bundle: the record, its digest, its signature with the
    public key that verifies it, and any reopen."""
    keys = {key.fingerprint: key.public_key for key in registered_keys(session)}
    return [
        {
            "answer_id": row.answer_id,
            "digest": row.digest,
            "record": row.record,
            "key_fingerprint": row.key_fingerprint,
            "signature": row.signature,
            "public_key": keys.get(row.key_fingerprint or ""),
            "reopened_at": None if row.reopened_at is None else as_utc(row.reopened_at).isoformat(),
            "reopened_by": row.reopened_by,
            "reopen_reason": row.reopen_reason,
        }
        for row in session.scalars(select(SignOffRow).where(SignOffRow.rater_id == rater_id).order_by(SignOffRow.id))
    ]


def knows_reviewer(session: Session, rater_id: int | None, reviewer: str) -> bool:
    """Whether the project holds anything of the reviewer: a key, a sign-off, a review, a label, a decision."""
    if registered_keys(session, reviewer) or session.scalar(
        select(AdjudicationRow.id).where(AdjudicationRow.adjudicator == reviewer).limit(1)
    ):
        return True
    if rater_id is None:
        return False
    return any(
        session.scalar(select(table.id).where(table.rater_id == rater_id).limit(1)) is not None
        for table in (SignOffRow, ReviewRow, LabelRow)
    )


def merge_signoff(
    session: Session,
    rater_id: int,
    item: dict[str, Any],
    actor: str,
    travelled: dict[str, dict[str, Any]] | None = None,
    *,
    first_key: bool = False,
) -> None:
    """Add a bundle's sign-off (audited here as it was where it was signed), or its reopen; one already
    here changes nothing. A record that does not match its digest is refused (ValueError); one its
    reviewer's key did not sign, or a reopen of a sign-off in force here, is refused (SignOffRefused).
    `travelled`: the keys the bundle carries (`bundle_keys`), by fingerprint, with their rotations;
    `first_key`: whether the bundle may bring the reviewer's first key (`knows_reviewer` was False)."""
    record = item["record"]
    if not isinstance(record, dict) or record_digest(record) != item["digest"]:
        raise ValueError(f"the sign-off of answer {item['answer_id']!r} does not match its digest")
    if session.get(AnswerRow, item["answer_id"]) is None:
        raise ValueError(f"the sign-off names answer {item['answer_id']!r}, which this project does not have")
    reviewer = session.scalar(select(RaterRow.name).where(RaterRow.id == rater_id))
    if record.get("reviewer") != reviewer:
        raise SignOffRefused(
            f"the sign-off of answer {item['answer_id']} names {record.get('reviewer')!r}, not {reviewer!r}"
        )
    row = session.scalar(select(SignOffRow).where(SignOffRow.rater_id == rater_id, SignOffRow.digest == item["digest"]))
    if row is None:
        fingerprint, public_key = item.get("key_fingerprint"), item.get("public_key")
        if fingerprint != record.get("key"):
            fingerprint = None
        admit_key(
            session,
            str(reviewer),
            Signed(fingerprint, public_key, canonical(record).encode(), item.get("signature")),
            f"{reviewer}'s sign-off of answer {item['answer_id']}",
            actor,
            travelled or {},
            first_key=first_key,
        )
        guidelines = record.get("guidelines") or {}
        row = SignOffRow(
            answer_id=item["answer_id"],
            rater_id=rater_id,
            guideline_version=guidelines.get("version"),
            signed_at=datetime.fromisoformat(record["signed_at"]),
            digest=item["digest"],
            record=record,
            key_fingerprint=item["key_fingerprint"],
            signature=item["signature"],
        )
        session.add(row)
        payload = {
            "digest": row.digest,
            "reviewer": record["reviewer"],
            "guideline_version": row.guideline_version,
            "key": row.key_fingerprint,
        }
        append_audit(session, actor, SIGNED, "answer", row.answer_id, {**payload, "imported": True})
    elif item.get("reopened_at") and row.reopened_at is None:
        raise SignOffRefused(reopen_refusal(str(reviewer), row.answer_id))
    if item.get("reopened_at") and row.reopened_at is None:  # reopened where it was signed, before it came here
        row.reopened_at = datetime.fromisoformat(item["reopened_at"])
        row.reopened_by, row.reopen_reason = item.get("reopened_by"), item.get("reopen_reason")
        payload = {"digest": row.digest, "reason": row.reopen_reason, "imported": True}
        append_audit(session, actor, REOPENED, "answer", row.answer_id, payload)


def reopen_refusal(reviewer: str, answer_id: str) -> str:
    return (
        f"the bundle reopens {reviewer}'s sign-off of answer {answer_id}, in force here: a sign-off is reopened "
        "only where the project is (assay reopen)"
    )


@dataclass(frozen=True)
class Signed:
    """What a bundle says was signed: the key (fingerprint, base64 public key), the bytes, the signature."""

    fingerprint: Any
    public_key: Any
    message: bytes
    signature: Any


def admit_key(
    session: Session,
    reviewer: str,
    signed: Signed,
    what: str,
    actor: str,
    travelled: dict[str, dict[str, Any]],
    *,
    first_key: bool,
) -> None:
    """Accept the key `what` (a sign-off, a decision) was signed with, by the rules in this module's
    docstring, registering it when the bundle may bring it; SignOffRefused when it is not the reviewer's."""
    fingerprint, public_key, signature = signed.fingerprint, signed.public_key, signed.signature
    if not (isinstance(fingerprint, str) and isinstance(signature, str) and isinstance(public_key, str)):
        raise SignOffRefused(
            f"{what} is not signed with their key (a bundle's hash proves nothing: anyone can recompute it)"
        )
    raw = unb64(public_key)
    if fingerprint_of(raw) != fingerprint or not signature_valid(public_key, signed.message, signature):
        raise SignOffRefused(f"{what} does not verify with the key it names")
    known = registered_key(session, fingerprint)
    if known is not None:
        if known.reviewer != reviewer:
            raise SignOffRefused(f"{what} is signed with {known.reviewer}'s key, not {reviewer}'s")
        if known.retired_at is not None:
            raise SignOffRefused(
                f"{what} is signed with their key {fingerprint[:16]}, which this project retired: it signs nothing more"
            )
        return
    if not first_key and (not registered_keys(session, reviewer) or fresh_start(session, reviewer)):
        before_keys = select(SignOffRow.id).join(RaterRow).where(RaterRow.name == reviewer).limit(1)
        if session.scalar(before_keys) is not None:
            raise SignOffRefused(
                f"{reviewer} has sign-offs in this project made before reviewer keys: a bundle does not bring "
                "their first key here (it could be anyone's)"
            )
        raise SignOffRefused(
            f"{reviewer} has work in this project and no key here: a bundle does not bring their first key (it "
            "could be anyone's); they register it where the project is, with their first sign-off there or "
            "`assay keys create`"
        )
    try:
        for key, key_raw in _rotated_to(session, fingerprint, raw, travelled):
            entry = travelled.get(key) or {}
            old, rotation_signed = entry.get("rotated_from"), entry.get("rotation_signature")
            rotation = (
                Rotation(old, rotation_signed) if isinstance(old, str) and isinstance(rotation_signed, str) else None
            )
            register_key(session, reviewer, key_raw, actor, rotation=rotation)
    except ValueError as exc:
        raise SignOffRefused(f"{what} is signed with key {fingerprint[:16]}: {exc}") from None


def _rotated_to(
    session: Session, fingerprint: str, raw: bytes, travelled: dict[str, dict[str, Any]]
) -> list[tuple[str, bytes]]:
    """The keys to register, oldest first, to reach `fingerprint` by the rotations a bundle carries from
    a key registered here (the reviewer rotated more than once since the project last heard of them);
    each is checked as it is registered, so a broken link refuses the key."""
    path = [(fingerprint, raw)]
    while len(path) <= len(travelled):
        older = str((travelled.get(path[-1][0]) or {}).get("rotated_from") or "")
        entry = travelled.get(older)
        if registered_key(session, older) is not None or entry is None or not isinstance(entry.get("public_key"), str):
            break
        path.append((older, unb64(entry["public_key"])))
    return path[::-1]
