"""The audit log's chain: how an entry is linked to the one before it, and appending one.

Apart from storage/audit.py (reading, verifying and signing the log) so that the modules whose
changes are audited (guidelines, reviewer keys) can append an entry without importing the verifier,
which reads them back to verify.

Each append notes, in the session's `info`, the newest entry the transaction appended (its mark):
whoever keeps a witness of the log outside the project (app/anchors.py) reads the note when the
transaction commits, so that the witness moves with every entry, and with nothing else.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from storage.schema import AuditRow, utcnow

GENESIS = "0" * 64
APPENDED = "assay.audit_appended"  # session.info: the mark of the newest entry this transaction appended
LOGIN = "assay.audit_login"  # session.info: the login writing, None when it administers (or on SQLite)


@dataclass(frozen=True, kw_only=True)
class EntryMark:
    """An entry as a witness outside the project keeps it: enough to find it, and to name it."""

    entry_id: int
    entry_hash: str
    action: str
    entity: str
    entity_id: str
    actor: str
    at: str  # UTC, to the minute, as text


def audit_hash(
    prev_hash: str, at: datetime, actor: str, action: str, entity: str, entity_id: str, payload: dict[str, Any]
) -> str:
    """The chain link: SHA-256 over the previous hash and this entry's content, canonically written."""
    stamp = at.replace(tzinfo=None).strftime("%Y-%m-%d %H:%M:%S.%f")
    content = json.dumps(
        [prev_hash, stamp, actor, action, entity, entity_id, payload],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(content.encode()).hexdigest()


def append_audit(
    session: Session, actor: str, action: str, entity: str, entity_id: str, payload: dict[str, Any]
) -> None:
    """Add an entry to the log, chained to the newest one."""
    session.flush()  # earlier entries of this transaction first, so the chain sees them
    prev = _newest_hash(session) or GENESIS
    at = utcnow()
    payload = json.loads(json.dumps(payload, default=str))  # exactly what the JSON column will give back
    login = _writing_login(session)
    if login is not None and login != actor:
        payload = {**payload, "login": login}
    row = AuditRow(
        at=at,
        actor=actor,
        action=action,
        entity=entity,
        entity_id=entity_id,
        payload=payload,
        prev_hash=prev,
        hash=audit_hash(prev, at, actor, action, entity, entity_id, payload),
    )
    session.add(row)
    session.flush()
    session.info[APPENDED] = EntryMark(
        entry_id=row.id,
        entry_hash=str(row.hash),
        action=action,
        entity=entity,
        entity_id=entity_id,
        actor=actor,
        at=at.strftime("%Y-%m-%d %H:%M"),
    )


def _writing_login(session: Session) -> str | None:
    """On a server, the login writing, when it does not administer: an entry names it, as its actor or
    beside a tool's name (migration 0021 refuses an entry in another's name). None elsewhere."""
    if session.get_bind().dialect.name != "postgresql":
        return None
    if LOGIN not in session.info:
        login, administers = session.execute(text("SELECT session_user, public.assay_administers()")).one()
        session.info[LOGIN] = None if administers else str(login)
    found: str | None = session.info[LOGIN]
    return found


def _newest_hash(session: Session) -> str | None:
    if session.get_bind().dialect.name == "postgresql":
        # The newest entry even where a matter's wall hides it; the function holds the log's lock until
        # the transaction ends, so no other writer links to the same entry (migration 0021).
        head: str | None = session.scalar(text("SELECT public.assay_audit_head()"))
        return head
    return session.scalar(select(AuditRow.hash).order_by(AuditRow.id.desc()).limit(1))
