"""Verify the hash-chained audit log, reporting every kind of tampering rather than failing on it.

Rows are read as raw text: a payload edited into something that is not JSON, or a time that is no
time, is a finding to report, not an exception. What is found: an edited entry (its hash no longer
matches), a payload or time no longer readable, an entry removed or inserted (the next entry's link
points nowhere), entries reordered (a link points to another entry), and a dropped or disabled
trigger (the log is no longer append-only). A forger who rewrites every later hash, or deletes only
the newest entries, is not caught by a chain alone; backups keep the older state to compare with.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from storage.queries import GENESIS, audit_hash

SQLITE_TRIGGERS = ("audit_log_no_update", "audit_log_no_delete")
POSTGRES_TRIGGERS = ("audit_log_append_only", "audit_log_no_truncate")


@dataclass(frozen=True)
class AuditProblem:
    entry_id: int | None  # None: the log as a whole (a trigger)
    problem: str


def _time(value: Any) -> datetime:
    at = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo else at  # stored in UTC


def _trigger_problems(session: Session) -> list[AuditProblem]:
    dialect = session.get_bind().dialect.name
    if dialect == "sqlite":
        present = {r[0]: "O" for r in session.execute(text("SELECT name FROM sqlite_master WHERE type = 'trigger'"))}
        wanted = SQLITE_TRIGGERS
    elif dialect == "postgresql":
        present = dict(
            session.execute(
                text("SELECT tgname, tgenabled FROM pg_trigger WHERE tgrelid = 'audit_log'::regclass")
            ).all()
        )
        wanted = POSTGRES_TRIGGERS
    else:
        return []
    problems = []
    for name in wanted:
        if name not in present:
            problems.append(AuditProblem(None, f"the trigger {name} that keeps the log append-only was dropped"))
        elif present[name] == "D":
            problems.append(AuditProblem(None, f"the trigger {name} that keeps the log append-only is disabled"))
    return problems


def verify_audit(session: Session) -> tuple[int, list[AuditProblem]]:
    """The number of entries and what is wrong with them, entries in log order, then the log's own."""
    rows = session.execute(
        text(
            "SELECT id, CAST(at AS TEXT), actor, action, entity, entity_id, CAST(payload AS TEXT), prev_hash, hash "
            "FROM audit_log ORDER BY id"
        )
    ).all()
    position = {row.hash: i for i, row in enumerate(rows) if row.hash}
    problems: list[AuditProblem] = []
    expected_prev = GENESIS
    for i, (entry_id, at, actor, action, entity, entity_id, payload_text, prev_hash, digest) in enumerate(rows):
        if prev_hash != expected_prev:
            linked = position.get(prev_hash)
            if linked is not None and linked != i - 1:
                problems.append(
                    AuditProblem(entry_id, f"it follows entry {rows[linked][0]}, not the one before it (reordered)")
                )
            else:
                problems.append(
                    AuditProblem(entry_id, "it does not follow the entry before it (an entry was removed or inserted)")
                )
        expected_prev = digest or ""
        try:
            payload = json.loads(payload_text) if payload_text is not None else {}
        except ValueError:
            shown = payload_text[:60]
            problems.append(AuditProblem(entry_id, f"its payload is no longer JSON (it was edited): {shown!r}"))
            continue
        try:
            stamp = _time(at)
        except (TypeError, ValueError):
            problems.append(AuditProblem(entry_id, f"its time {at!r} is not a time (it was edited)"))
            continue
        if audit_hash(prev_hash or "", stamp, actor, action, entity, entity_id, payload or {}) != digest:
            problems.append(AuditProblem(entry_id, "its content does not match its hash (it was edited)"))
    return len(rows), problems + _trigger_problems(session)
