"""Sign-offs: a reviewer's signature on their review of an answer, and the check that what was signed
is still what is stored.

The record signed binds the answer's text and the document (by SHA-256), every data point of the
reviewer on the answer with its tag, comment and citations, their comment and ratings on the whole
answer, the guideline version, the reviewer and the time. Its digest is the SHA-256 of its canonical
JSON; the record is kept beside it and the digest goes into the hash-chained audit log, so a check
can tell an edited review (the record no longer matches the live rows, and says what changed), an
edited sign-off (the record no longer matches its digest) and a forged one (no audit entry has it).

A digest alone does not stop whoever can write the project: they can re-hash an edited record. So
the record also names the reviewer's key (its fingerprint) and the audit log's head when it was
signed, and the reviewer's Ed25519 signature over the canonical record is kept beside it: an edited
record no longer verifies, a forged one cannot be signed without the private key, and a rewritten
audit chain no longer has the head the record names. Sign-offs made before reviewer keys (no key in
the record, and signed in this project, not brought by a bundle, by an audit entry older than the
project's first key) are checked by digest alone. A sign-off counts as its reviewer's only when the
key is theirs by storage/reviewer_keys.py's rules (their first key, or one their key rotated to) and
was not retired before it signed.

Bundles. A bundle's seal is a SHA-256 anyone can recompute, so it vouches for nothing: a sign-off
a bundle brings is added only when its reviewer's own key signed it. That key must be registered
here to that reviewer and not retired; or, when the project holds no key and no sign-off of that
reviewer, the bundle may bring their first key; or the bundle brings a rotation to it signed by
their key in force here. A bundle never reopens a sign-off in force here (`assay reopen` does that,
where the project is), and never brings an unsigned sign-off.
Each function takes a session and never commits it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage import reviews
from storage.audit import append_audit, newest_entry
from storage.guidelines import current_guidelines, guideline_version, text_sha256
from storage.reviewer_keys import (
    REGISTERED,
    RegisteredKey,
    Rotation,
    Signer,
    b64,
    fingerprint_of,
    register_key,
    registered_key,
    registered_keys,
    retirements,
    signature_valid,
    unb64,
    unvouched_keys,
)
from storage.schema import AnswerRow, AuditRow, DocumentRow, PassageRow, QuestionRow, RaterRow, SignOffRow, utcnow

RECORD_FORMAT = "assay-signoff/1"
SIGNED, REOPENED = "review.signed", "review.reopened"


class SignOffRefused(ValueError):
    """A bundle's sign-off that its reviewer's own key did not make, or that would reopen one here."""


def canonical(record: dict[str, Any]) -> str:
    """The one way a record is written for its digest: sorted keys, no spaces, UTF-8 as is."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_digest(record: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(record).encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class SignOff:
    """A sign-off in force: the reviewer signed and has not reopened."""

    answer_id: str
    reviewer: str
    signed_at: datetime
    digest: str
    guideline_version: int | None
    key_fingerprint: str | None = None
    key_created: bool = False  # the reviewer's signing key was made for this sign-off


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


def _utc(at: datetime) -> datetime:
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)  # SQLite gives it back naive


def live_content(session: Session, answer_id: str, rater_id: int) -> dict[str, Any]:
    """What the reviewer's review of the answer holds now: the part of a record that can change."""
    answer_text, document_name, document_sha, document_text = session.execute(
        select(AnswerRow.text, DocumentRow.name, DocumentRow.sha256, DocumentRow.text)
        .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
        .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
        .where(AnswerRow.id == answer_id)
    ).one()
    points = reviews.snapshot(session, answer_id, rater_id)
    names = dict(
        session.execute(
            select(PassageRow.id, PassageRow.citation_id).where(
                PassageRow.id.in_([pid for p in points for pid in p.passage_ids])
            )
        ).all()
    )
    review = reviews.review(session, answer_id, rater_id)
    return {
        "answer": {"id": answer_id, "sha256": text_sha256(answer_text)},
        "document": {"name": document_name, "sha256": document_sha, "text_sha256": text_sha256(document_text)},
        "points": [
            {
                "text": p.text,
                "span": None if p.span_start is None else [p.span_start, p.span_end],
                "tag": p.tag.value if p.tag else None,
                "comment": p.comment,
                "citations": [names[pid] for pid in p.passage_ids if pid in names],
            }
            for p in points
        ],
        "review": {
            "comment": review.comment,
            "holistic_correctness": review.holistic_correctness,
            "holistic_relevance": review.holistic_relevance,
        },
    }


def _in_force(session: Session, answer_id: str, rater_id: int) -> SignOffRow | None:
    """The reviewer's latest sign-off of the answer that was not reopened."""
    return session.scalar(
        select(SignOffRow)
        .where(SignOffRow.answer_id == answer_id, SignOffRow.rater_id == rater_id, SignOffRow.reopened_at.is_(None))
        .order_by(SignOffRow.id.desc())
        .limit(1)
    )


def _stored(row: SignOffRow, reviewer: str | None = None) -> SignOff:
    """The sign-off a stored row records, by the reviewer its record names unless told."""
    return SignOff(
        answer_id=row.answer_id,
        reviewer=str(row.record.get("reviewer")) if reviewer is None else reviewer,
        signed_at=_utc(row.signed_at),
        digest=row.digest,
        guideline_version=row.guideline_version,
        key_fingerprint=row.key_fingerprint,
    )


def standing_signoff(session: Session, answer_id: str, rater_id: int) -> SignOff | None:
    """The reviewer's sign-off of the answer in force, if any."""
    row = _in_force(session, answer_id, rater_id)
    if row is None:
        return None
    return _stored(row)


def sign(session: Session, answer_id: str, rater_id: int, reviewer: str, signer: Signer) -> SignOff:
    """Sign the reviewer's review of the answer as it is now, under the current guidelines, with the
    reviewer's key: the record names the key and the audit log's head, and the signature covers it.
    ValueError when the key is not the reviewer's registered key in force here (a retired key signs nothing)."""
    key = registered_key(session, signer.fingerprint)
    if key is None or key.reviewer != reviewer or key.retired_at is not None:
        raise ValueError(f"key {signer.fingerprint[:16]} is not {reviewer}'s key in force in this project")
    guidelines = current_guidelines(session)
    head = newest_entry(session)
    at = utcnow()
    record = {
        "format": RECORD_FORMAT,
        **live_content(session, answer_id, rater_id),
        "guidelines": None if guidelines is None else {"version": guidelines.version, "sha256": guidelines.sha256},
        "reviewer": reviewer,
        "signed_at": at.isoformat(),
        "key": signer.fingerprint,
        "audit_head": None if head is None else {"entry": head[0], "hash": head[1]},
    }
    digest = record_digest(record)
    version = guidelines.version if guidelines else None
    session.add(
        SignOffRow(
            answer_id=answer_id,
            rater_id=rater_id,
            guideline_version=version,
            signed_at=at,
            digest=digest,
            record=record,
            key_fingerprint=signer.fingerprint,
            signature=b64(signer.sign(canonical(record).encode())),
        )
    )
    append_audit(
        session,
        reviewer,
        SIGNED,
        "answer",
        answer_id,
        {"digest": digest, "reviewer": reviewer, "guideline_version": version, "key": signer.fingerprint},
    )
    return SignOff(
        answer_id=answer_id,
        reviewer=reviewer,
        signed_at=at,
        digest=digest,
        guideline_version=version,
        key_fingerprint=signer.fingerprint,
    )


def signed_record(session: Session, answer_id: str, rater_id: int) -> dict[str, Any] | None:
    """The reviewer's sign-off of the answer in force as a certificate needs it: the record, its
    digest, the signature and the key (fingerprint and public key). None when none is in force."""
    row = _in_force(session, answer_id, rater_id)
    if row is None:
        return None
    keys = {key.fingerprint: key for key in registered_keys(session)}
    key = keys.get(row.key_fingerprint or "")
    return {
        "record": row.record,
        "digest": row.digest,
        "signature": row.signature,
        "fingerprint": row.key_fingerprint,
        "public_key": None if key is None else key.public_key,
    }


def reopen(session: Session, answer_id: str, rater_id: int, actor: str, reason: str) -> SignOff | None:
    """Withdraw the reviewer's sign-off in force (None if there is none): its row stays, marked."""
    row = _in_force(session, answer_id, rater_id)
    if row is None:
        return None
    row.reopened_at, row.reopened_by, row.reopen_reason = utcnow(), actor, reason
    append_audit(session, actor, REOPENED, "answer", answer_id, {"digest": row.digest, "reason": reason})
    return _stored(row)


def signoffs_in_force(session: Session) -> dict[tuple[str, str], SignOff]:
    """Every sign-off in force, by (answer id, reviewer): what exports carry."""
    rows = session.execute(
        select(SignOffRow, RaterRow.name)
        .join(RaterRow, RaterRow.id == SignOffRow.rater_id)
        .where(SignOffRow.reopened_at.is_(None))
        .order_by(SignOffRow.id)
    ).all()
    return {(row.answer_id, name): _stored(row, name) for row, name in rows}


# ---------------------------------------------------------------- checking


def _differences(signed: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What changed between the record signed and the review now, in words."""
    found = []
    if signed.get("answer") != now["answer"]:
        found.append("the answer's text changed")
    if signed.get("document") != now["document"]:
        found.append("the document changed")
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
        select(SignOffRow, RaterRow.name).join(RaterRow, RaterRow.id == SignOffRow.rater_id).order_by(SignOffRow.id)
    ).all()
    for row, reviewer in rows:
        key = (row.answer_id, row.digest)
        kept.add(key)
        problems = []
        if row.reopened_at is not None:
            if key in reopened:
                continue  # withdrawn by its reviewer: no longer a claim
            problems.append("it is marked reopened, but the audit log records no reopen")
        record = row.record if isinstance(row.record, dict) else {}
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
            stored = guideline_version(session, int(guidelines.get("version", 0)))
            if stored is None or stored.sha256 != guidelines.get("sha256"):
                problems.append(f"guideline version {guidelines.get('version')} is not the text that was signed under")
        if session.get(AnswerRow, row.answer_id) is not None:
            problems += _differences(record, live_content(session, row.answer_id, row.rater_id))
        checks.append(
            SignOffCheck(
                answer_id=row.answer_id,
                reviewer=reviewer,
                signed_at=_utc(row.signed_at),
                digest=row.digest,
                matches=not problems,
                problem="; ".join(problems) or None,
                guideline_version=row.guideline_version,
            )
        )
    for (answer_id, digest), (entry_id, at, payload) in signed.items():
        if (answer_id, digest) not in kept:
            gone = "" if session.get(AnswerRow, answer_id) is not None else " (and the answer with it)"
            checks.append(
                SignOffCheck(
                    answer_id=answer_id,
                    reviewer=str(payload.get("reviewer")),
                    signed_at=_utc(at),
                    digest=digest,
                    matches=False,
                    problem=f"the sign-off was deleted{gone}: audit entry {entry_id} records it, "
                    "the project no longer has it",
                    guideline_version=payload.get("guideline_version"),
                )
            )
    return checks


# ---------------------------------------------------------------- bundles


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
            "reopened_at": None if row.reopened_at is None else _utc(row.reopened_at).isoformat(),
            "reopened_by": row.reopened_by,
            "reopen_reason": row.reopen_reason,
        }
        for row in session.scalars(select(SignOffRow).where(SignOffRow.rater_id == rater_id).order_by(SignOffRow.id))
    ]


def merge_signoff(
    session: Session,
    rater_id: int,
    item: dict[str, Any],
    actor: str,
    travelled: dict[str, dict[str, Any]] | None = None,
) -> None:
    """Add a bundle's sign-off (audited here as it was where it was signed), or its reopen; one already
    here changes nothing. A record that does not match its digest is refused (ValueError); one its
    reviewer's key did not sign, or a reopen of a sign-off in force here, is refused (SignOffRefused).
    `travelled`: the keys the bundle carries (`bundle_keys`), by fingerprint, with their rotations."""
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
        _admit_key(session, rater_id, str(reviewer), item, actor, travelled or {})
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


def _admit_key(
    session: Session,
    rater_id: int,
    reviewer: str,
    item: dict[str, Any],
    actor: str,
    travelled: dict[str, dict[str, Any]],
) -> None:
    """Accept the key a bundle's new sign-off was signed with, by the rules in this module's docstring,
    registering it when the bundle may bring it; SignOffRefused when it is not the reviewer's."""
    answer = item["answer_id"]
    fingerprint, signature, public_key = item.get("key_fingerprint"), item.get("signature"), item.get("public_key")
    if not (fingerprint and signature and isinstance(public_key, str) and fingerprint == item["record"].get("key")):
        raise SignOffRefused(
            f"{reviewer}'s sign-off of answer {answer} is not signed with their key (a bundle's hash proves "
            "nothing: anyone can recompute it)"
        )
    raw = unb64(public_key)
    if fingerprint_of(raw) != fingerprint or not signature_valid(
        public_key, canonical(item["record"]).encode(), signature
    ):
        raise SignOffRefused(f"{reviewer}'s sign-off of answer {answer} does not verify with the key it names")
    known = registered_key(session, fingerprint)
    if known is not None:
        if known.reviewer != reviewer:
            raise SignOffRefused(
                f"the sign-off of answer {answer} is signed with {known.reviewer}'s key, not {reviewer}'s"
            )
        if known.retired_at is not None:
            raise SignOffRefused(
                f"{reviewer}'s sign-off of answer {answer} is signed with their key {fingerprint[:16]}, which this "
                "project retired: it signs nothing more"
            )
        return
    before_keys = select(SignOffRow.id).where(SignOffRow.rater_id == rater_id).limit(1)
    if not registered_keys(session, reviewer) and session.scalar(before_keys) is not None:
        raise SignOffRefused(
            f"{reviewer} has sign-offs in this project made before reviewer keys: a bundle does not bring "
            "their first key here (it could be anyone's)"
        )
    try:
        for key, key_raw in _rotated_to(session, fingerprint, raw, travelled):
            entry = travelled.get(key) or {}
            old, signed = entry.get("rotated_from"), entry.get("rotation_signature")
            rotation = Rotation(old, signed) if isinstance(old, str) and isinstance(signed, str) else None
            register_key(session, reviewer, key_raw, actor, rotation=rotation)
    except ValueError as exc:
        raise SignOffRefused(
            f"{reviewer}'s sign-off of answer {answer} is signed with key {fingerprint[:16]}: {exc}"
        ) from None


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
