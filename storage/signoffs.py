"""Sign-offs: a reviewer's signature on their review of an answer, and the record it signs.

The record signed binds the answer's text and the document (by SHA-256: its file, its text, and the
passages reviewers read and cite, since sign-offs made after issue 62), every data point of the
reviewer on the answer with its tag, comment and citations, their comment and ratings on the whole
answer, the guideline version, the reviewer and the time. Its digest is the SHA-256 of its canonical
JSON; the record is kept beside it and the digest goes into the hash-chained audit log. The record
also names the reviewer's key (its fingerprint) and the audit log's head when it was signed, and the
reviewer's Ed25519 signature over the canonical record is kept beside it. storage/signoff_checks.py
checks that what was signed is still what is stored, and storage/signoff_bundles.py carries
sign-offs between projects. Each function takes a session and never commits it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage import learned_checker, reviews
from storage.audit import append_audit, newest_entry
from storage.guidelines import current_guidelines, text_sha256
from storage.integrity import refuse_damaged
from storage.reviewer_keys import Signer, b64, registered_key, registered_keys
from storage.schema import AnswerRow, DocumentRow, PassageRow, QuestionRow, RaterRow, SignOffRow, utcnow

RECORD_FORMAT = "assay-signoff/1"
SIGNED, REOPENED = "review.signed", "review.reopened"


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


def as_utc(at: datetime) -> datetime:
    """A stored time in UTC."""
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)  # SQLite gives it back naive


def live_content(session: Session, answer_id: str, rater_id: int) -> dict[str, Any]:
    """What the reviewer's review of the answer holds now: the part of a record that can change."""
    answer_text, document_id, document_name, document_sha, document_text = session.execute(
        select(AnswerRow.text, DocumentRow.id, DocumentRow.name, DocumentRow.sha256, DocumentRow.text)
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
        "document": {
            "name": document_name,
            "sha256": document_sha,
            "text_sha256": text_sha256(document_text),
            "passages_sha256": passages_sha256(session, document_id),
        },
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


def passages_sha256(session: Session, document_id: int) -> str:
    """The SHA-256 of the document's passages as a reviewer reads and cites them (each one's citation
    id and text, in order): a sign-off vouches for the words that were reviewed."""
    rows = session.execute(
        select(PassageRow.citation_id, PassageRow.text)
        .where(PassageRow.document_id == document_id)
        .order_by(PassageRow.ordinal, PassageRow.id)
    ).all()
    return hashlib.sha256(canonical({"passages": [[c, t] for c, t in rows]}).encode()).hexdigest()


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
        signed_at=as_utc(row.signed_at),
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


def checker_that_spoke(session: Session, answer_id: str) -> str:
    """Which claim checker speaks for the answer's matter (or the unfiled answers): "shipped", or the one
    fitted on this project's reviews, by the SHA-256 its adoption pinned ("fitted 3f2a…"). A sign-off
    records it: a signed review says which checker's findings the reviewer saw."""
    matter = session.scalar(select(AnswerRow.matter_id).where(AnswerRow.id == answer_id))
    sha = learned_checker.pinned_sha256(session, matter)
    return "shipped" if sha is None else f"fitted {sha}"


def sign(session: Session, answer_id: str, rater_id: int, reviewer: str, signer: Signer) -> SignOff:
    """Sign the reviewer's review of the answer as it is now, under the current guidelines, with the
    reviewer's key: the record names the key and the audit log's head, and the signature covers it.
    ValueError when the key is not the reviewer's registered key in force here (a retired key signs nothing);
    ProjectDamaged when the project file's pages do not all read back (nothing is signed into it)."""
    connection = session.connection()
    refuse_damaged(connection, connection.engine.url.database or "the project", "a sign-off")
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
        "claim_checker": checker_that_spoke(session, answer_id),
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
