"""Sign-offs: a reviewer's signature on their review of an answer, and the check that what was signed
is still what is stored.

The record signed binds the answer's text and the document (by SHA-256), every data point of the
reviewer on the answer with its tag, comment and citations, their comment and ratings on the whole
answer, the guideline version, the reviewer and the time. Its digest is the SHA-256 of its canonical
JSON; the record is kept beside it and the digest goes into the hash-chained audit log, so a check
can tell an edited review (the record no longer matches the live rows, and says what changed), an
edited sign-off (the record no longer matches its digest) and a forged one (no audit entry has it).
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
from storage.audit import append_audit
from storage.guidelines import current_guidelines, guideline_version, text_sha256
from storage.schema import AnswerRow, AuditRow, DocumentRow, PassageRow, QuestionRow, RaterRow, SignOffRow, utcnow

RECORD_FORMAT = "assay-signoff/1"
SIGNED, REOPENED = "review.signed", "review.reopened"


def canonical(record: dict[str, Any]) -> str:
    """The one way a record is written for its digest: sorted keys, no spaces, UTF-8 as is."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_digest(record: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(record).encode()).hexdigest()


@dataclass(frozen=True)
class SignOff:
    """A sign-off in force: the reviewer signed and has not reopened."""

    answer_id: str
    reviewer: str
    signed_at: datetime
    digest: str
    guideline_version: int | None


@dataclass(frozen=True)
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


def standing_signoff(session: Session, answer_id: str, rater_id: int) -> SignOff | None:
    """The reviewer's sign-off of the answer in force, if any."""
    row = _in_force(session, answer_id, rater_id)
    if row is None:
        return None
    return SignOff(answer_id, str(row.record.get("reviewer")), _utc(row.signed_at), row.digest, row.guideline_version)


def sign(session: Session, answer_id: str, rater_id: int, reviewer: str) -> SignOff:
    """Sign the reviewer's review of the answer as it is now, under the current guidelines."""
    guidelines = current_guidelines(session)
    at = utcnow()
    record = {
        "format": RECORD_FORMAT,
        **live_content(session, answer_id, rater_id),
        "guidelines": None if guidelines is None else {"version": guidelines.version, "sha256": guidelines.sha256},
        "reviewer": reviewer,
        "signed_at": at.isoformat(),
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
        )
    )
    append_audit(
        session,
        reviewer,
        SIGNED,
        "answer",
        answer_id,
        {"digest": digest, "reviewer": reviewer, "guideline_version": version},
    )
    return SignOff(answer_id, reviewer, at, digest, version)


def reopen(session: Session, answer_id: str, rater_id: int, actor: str, reason: str) -> SignOff | None:
    """Withdraw the reviewer's sign-off in force (None if there is none): its row stays, marked."""
    row = _in_force(session, answer_id, rater_id)
    if row is None:
        return None
    row.reopened_at, row.reopened_by, row.reopen_reason = utcnow(), actor, reason
    append_audit(session, actor, REOPENED, "answer", answer_id, {"digest": row.digest, "reason": reason})
    return SignOff(answer_id, str(row.record.get("reviewer")), _utc(row.signed_at), row.digest, row.guideline_version)


def signoffs_in_force(session: Session) -> dict[tuple[str, str], SignOff]:
    """Every sign-off in force, by (answer id, reviewer): what exports carry."""
    rows = session.execute(
        select(SignOffRow, RaterRow.name)
        .join(RaterRow, RaterRow.id == SignOffRow.rater_id)
        .where(SignOffRow.reopened_at.is_(None))
        .order_by(SignOffRow.id)
    ).all()
    return {
        (row.answer_id, name): SignOff(row.answer_id, name, _utc(row.signed_at), row.digest, row.guideline_version)
        for row, name in rows
    }


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


def _audited(session: Session, action: str) -> set[tuple[str, str]]:
    """(answer id, digest) of every audit entry of this action."""
    return {
        (entity_id, str((payload or {}).get("digest")))
        for entity_id, payload in session.execute(
            select(AuditRow.entity_id, AuditRow.payload).where(AuditRow.action == action)
        )
    }


def check_signoffs(session: Session) -> list[SignOffCheck]:
    """Every sign-off in force (and any marked reopened that no audit entry reopened), checked against
    its digest, the audit log and the review as stored now."""
    signed, reopened = _audited(session, SIGNED), _audited(session, REOPENED)
    checks = []
    rows = session.execute(
        select(SignOffRow, RaterRow.name).join(RaterRow, RaterRow.id == SignOffRow.rater_id).order_by(SignOffRow.id)
    ).all()
    for row, reviewer in rows:
        key = (row.answer_id, row.digest)
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
                row.answer_id,
                reviewer,
                _utc(row.signed_at),
                row.digest,
                not problems,
                "; ".join(problems) or None,
                row.guideline_version,
            )
        )
    return checks


# ---------------------------------------------------------------- bundles


def signoff_records(session: Session, rater_id: int) -> list[dict[str, Any]]:
    """A reviewer's sign-offs as they travel in a bundle: the record, its digest and any reopen."""
    return [
        {
            "answer_id": row.answer_id,
            "digest": row.digest,
            "record": row.record,
            "reopened_at": None if row.reopened_at is None else _utc(row.reopened_at).isoformat(),
            "reopened_by": row.reopened_by,
            "reopen_reason": row.reopen_reason,
        }
        for row in session.scalars(select(SignOffRow).where(SignOffRow.rater_id == rater_id).order_by(SignOffRow.id))
    ]


def merge_signoff(session: Session, rater_id: int, item: dict[str, Any], actor: str) -> None:
    """Add a bundle's sign-off (audited here as it was where it was signed), or its reopen; one already
    here changes nothing. A record that does not match its digest is refused (ValueError)."""
    record = item["record"]
    if not isinstance(record, dict) or record_digest(record) != item["digest"]:
        raise ValueError(f"the sign-off of answer {item['answer_id']!r} does not match its digest")
    if session.get(AnswerRow, item["answer_id"]) is None:
        raise ValueError(f"the sign-off names answer {item['answer_id']!r}, which this project does not have")
    row = session.scalar(select(SignOffRow).where(SignOffRow.rater_id == rater_id, SignOffRow.digest == item["digest"]))
    if row is None:
        guidelines = record.get("guidelines") or {}
        row = SignOffRow(
            answer_id=item["answer_id"],
            rater_id=rater_id,
            guideline_version=guidelines.get("version"),
            signed_at=datetime.fromisoformat(record["signed_at"]),
            digest=item["digest"],
            record=record,
        )
        session.add(row)
        payload = {"digest": row.digest, "reviewer": record["reviewer"], "guideline_version": row.guideline_version}
        append_audit(session, actor, SIGNED, "answer", row.answer_id, {**payload, "imported": True})
    if item.get("reopened_at") and row.reopened_at is None:
        row.reopened_at = datetime.fromisoformat(item["reopened_at"])
        row.reopened_by, row.reopen_reason = item.get("reopened_by"), item.get("reopen_reason")
        payload = {"digest": row.digest, "reason": row.reopen_reason, "imported": True}
        append_audit(session, actor, REOPENED, "answer", row.answer_id, payload)
