"""Checking sign-offs: that what a reviewer signed is still what is stored (storage/signoffs.py makes them).

A check can tell an edited review (the record no longer matches the live rows, and says what changed),
an edited sign-off (the record no longer matches its digest) and a forged one (no audit entry has it).
A digest alone does not stop whoever can write the project: they can re-hash an edited record. So the
reviewer's signature is checked too: an edited record no longer verifies, a forged one cannot be
signed without the private key, and a rewritten audit chain no longer has the head the record names.
Sign-offs made before reviewer keys (no key in the record, and signed in this project, not brought by
a bundle, by an audit entry older than the project's first key) are checked by digest alone. A
sign-off counts as its reviewer's only when the key is theirs by storage/reviewer_keys.py's rules
(their first key, or one their key rotated to) and was not retired before it signed.
Each function takes a session and never commits it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Text, cast, select
from sqlalchemy.orm import Session, defer

from storage.guidelines import guideline_version
from storage.reviewer_keys import (
    REGISTERED,
    RegisteredKey,
    registered_keys,
    retirements,
    signature_valid,
    unvouched_keys,
)
from storage.schema import AnswerRow, AuditRow, RaterRow, SignOffRow
from storage.signoffs import REOPENED, SIGNED, as_utc, canonical, live_content, record_digest


@dataclass(frozen=True, kw_only=True)
class SignOffCheck:
    """Whether a sign-off still matches what is stored; `problem` says what changed when not."""

    answer_id: str
    reviewer: str
    signed_at: datetime
    digest: str
    matches: bool
    problem: str | None
    guideline_version: int | None = None
    note: str | None = None  # what the sign-off does not cover (an old record, made before it could)


UNCOVERED_PASSAGES = (
    "it was signed before sign-offs covered the document's passages: an edit to the words reviewers read "
    "and cite is not seen in it"
)


def _differences(signed: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What changed between the record signed and the review now, in words."""
    found = []
    if signed.get("answer") != now["answer"]:
        found.append("the answer's text changed")
    document = signed.get("document") if isinstance(signed.get("document"), dict) else {}
    if not document or any(now["document"].get(k) != v for k, v in document.items() if k != "passages_sha256"):
        found.append("the document changed")
    elif "passages_sha256" in document and document["passages_sha256"] != now["document"]["passages_sha256"]:
        found.append("the document's passages changed (the words reviewers read and cite)")
    before, after = signed.get("review") or {}, now["review"]
    for field, name in (
        ("comment", "the comment on the answer"),
        ("holistic_correctness", "the holistic correctness"),
        ("holistic_relevance", "the holistic relevance"),
    ):
        if before.get(field) != after[field]:
            found.append(f"{name} was {before.get(field)!r} when signed, now {after[field]!r}")
    old, new = signed.get("points") or [], now["points"]
    if len(old) != len(new):
        found.append(f"{len(new)} data points now, {len(old)} when signed")
    for n, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        words = f"data point {n} “{str(b['text'])[:40]}”"
        if a.get("tag") != b["tag"]:
            found.append(f"{words} was tagged {a.get('tag')} when signed, now {b['tag']}")
        if a.get("comment") != b["comment"]:
            found.append(f"{words}: its comment was {a.get('comment')!r} when signed, now {b['comment']!r}")
        if a.get("text") != b["text"] or a.get("span") != b["span"]:
            found.append(f"data point {n}'s text changed")
        if a.get("citations") != b["citations"]:
            found.append(f"{words}: its citations changed")
    return found


def _audited(session: Session, action: str) -> dict[tuple[str, str], tuple[int, datetime, dict[str, Any]]]:
    """(answer id, digest) of every audit entry of this action: its id, time and payload."""
    return {
        (entity_id, str((payload or {}).get("digest"))): (entry_id, at, payload or {})
        for entry_id, at, entity_id, payload in session.execute(
            select(AuditRow.id, AuditRow.at, AuditRow.entity_id, AuditRow.payload)
            .where(AuditRow.action == action)
            .order_by(AuditRow.id)
        )
    }


def _signature_problems(
    session: Session,
    row: SignOffRow,
    record: dict[str, Any],
    audited: dict[str, Any] | None,
    keys_since: int | None,
    keys: dict[str, RegisteredKey],
    trust: tuple[dict[str, str], dict[str, int]] = ({}, {}),
) -> list[str]:
    """What is wrong with a sign-off's signature: missing where one is due (after the project's first
    key, or brought by a bundle), made with an unknown, swapped, retired or not-the-reviewer's key, not
    verifying over the record, or naming an audit head the log no longer has. `trust`: the keys not
    their reviewer's (`unvouched_keys`) and the entry that retired each retired key."""
    fingerprint = row.key_fingerprint
    named = record.get("key") or (audited or {}).get("key")
    if not fingerprint or not row.signature:
        entry_id = (audited or {}).get("entry_id")
        after_keys = keys_since is not None and (entry_id is None or entry_id > keys_since)
        if (audited or {}).get("imported"):
            return [
                "it is not signed: a bundle brought it without its reviewer's signature, and a bundle's hash "
                "proves nothing (anyone can recompute it)"
            ]
        if named or after_keys:
            return ["it is not signed: its signature is missing (forged without the reviewer's key?)"]
        return []  # signed here before reviewer keys: its digest and the audit log vouch for it
    if named and named != fingerprint:
        return [f"its record names key {str(named)[:16]} but it is stored with key {fingerprint[:16]}"]
    key = keys.get(fingerprint)
    if key is None:
        return [f"it is signed with key {fingerprint[:16]}, which this project has not registered (forged?)"]
    if not key.matches_fingerprint:
        return [f"{key.reviewer}'s key {fingerprint[:16]} was swapped in the keys table: its signature proves nothing"]
    if key.reviewer != record.get("reviewer"):
        return [f"it is signed with {key.reviewer}'s key, not {record.get('reviewer')!r}'s"]
    unvouched, retired = trust
    if fingerprint in unvouched:
        return [
            f"it is signed with key {fingerprint[:16]}, registered under {key.reviewer}'s name without a rotation "
            f"signed by their key: not {key.reviewer}'s signature"
        ]
    entry_id = (audited or {}).get("entry_id")
    if fingerprint in retired and entry_id is not None and entry_id > retired[fingerprint]:
        return [
            f"it is signed with {key.reviewer}'s key {fingerprint[:16]}, retired before (entry {retired[fingerprint]})"
        ]
    if not signature_valid(key.public_key, canonical(record).encode(), row.signature):
        return [f"its signature does not verify with {key.reviewer}'s key (the record was edited, or forged)"]
    head = record.get("audit_head")
    if isinstance(head, dict) and not (audited or {}).get("imported"):
        found = session.scalar(select(AuditRow.hash).where(AuditRow.id == head.get("entry")))
        if found != head.get("hash"):
            return [f"the audit log no longer has the entry {head.get('entry')} it was signed after (rewritten)"]
    return []


def _record_of(stored: str | None) -> tuple[dict[str, Any], str | None]:
    """A sign-off's record from its stored JSON text, and what is wrong when it does not read back."""
    try:
        record = json.loads(stored) if stored is not None else None
    except (ValueError, RecursionError):
        return {}, "its stored record is not readable JSON (edited by hand?)"
    if not isinstance(record, dict):
        return {}, "its stored record is not a JSON object (edited by hand?)"
    return record, None


def check_signoffs(session: Session) -> list[SignOffCheck]:
    """Every sign-off in force (and any marked reopened that no audit entry reopened), checked against
    its digest, the audit log and the review as stored now."""
    signed, reopened = _audited(session, SIGNED), _audited(session, REOPENED)
    keys = {key.fingerprint: key for key in registered_keys(session)}
    keys_since = session.scalar(select(AuditRow.id).where(AuditRow.action == REGISTERED).order_by(AuditRow.id).limit(1))
    trust = (unvouched_keys(session), retirements(session))
    checks = []
    kept = set()
    rows = session.execute(
        select(SignOffRow, RaterRow.name, cast(SignOffRow.record, Text))
        .join(RaterRow, RaterRow.id == SignOffRow.rater_id)
        .options(defer(SignOffRow.record, raiseload=True))  # read as text below: an edit may have broken it
        .order_by(SignOffRow.id)
    ).all()
    for row, reviewer, stored_text in rows:
        key = (row.answer_id, row.digest)
        kept.add(key)
        problems = []
        if row.reopened_at is not None:
            if key in reopened:
                continue  # withdrawn by its reviewer: no longer a claim
            problems.append("it is marked reopened, but the audit log records no reopen")
        record, unreadable = _record_of(stored_text)
        if unreadable:
            problems.append(unreadable)
        if record_digest(record) != row.digest:
            problems.append("the stored sign-off was edited (its record no longer matches its digest)")
        if key not in signed:
            problems.append("no audit entry records this sign-off (it was added or its digest edited)")
        entry = signed.get(key)
        audited = None if entry is None else {**entry[2], "entry_id": entry[0]}
        problems += _signature_problems(session, row, record, audited, keys_since, keys, trust)
        if record.get("reviewer") != reviewer:
            problems.append(f"it names {record.get('reviewer')!r} but is stored as {reviewer!r}'s")
        guidelines = record.get("guidelines")
        if guidelines:
            version = guidelines.get("version") if isinstance(guidelines, dict) else None
            stored = guideline_version(session, version) if type(version) is int and abs(version) < 2**31 else None
            if stored is None or not isinstance(guidelines, dict) or stored.sha256 != guidelines.get("sha256"):
                problems.append(f"guideline version {version} is not the text that was signed under")
        if session.get(AnswerRow, row.answer_id) is not None:
            problems += _differences(record, live_content(session, row.answer_id, row.rater_id))
        checks.append(
            SignOffCheck(
                answer_id=row.answer_id,
                reviewer=reviewer,
                signed_at=as_utc(row.signed_at),
                digest=row.digest,
                matches=not problems,
                problem="; ".join(problems) or None,
                guideline_version=row.guideline_version,
                note=None if "passages_sha256" in (record.get("document") or {}) else UNCOVERED_PASSAGES,
            )
        )
    for (answer_id, digest), (entry_id, at, payload) in signed.items():
        if (answer_id, digest) not in kept:
            gone = "" if session.get(AnswerRow, answer_id) is not None else " (and the answer with it)"
            checks.append(
                SignOffCheck(
                    answer_id=answer_id,
                    reviewer=str(payload.get("reviewer")),
                    signed_at=as_utc(at),
                    digest=digest,
                    matches=False,
                    problem=f"the sign-off was deleted{gone}: audit entry {entry_id} records it, "
                    "the project no longer has it",
                    guideline_version=payload.get("guideline_version"),
                )
            )
    return checks
