"""The hash-chained audit log: appending an entry, reading entries, and verifying the chain.

Each entry's hash covers the previous entry's hash and its own content, canonically written.
Verifying reports every kind of tampering rather than failing on it. Rows are read as raw text: a
payload edited into something that is not JSON, or a time that is no time, is a finding to report,
not an exception. What is found: an edited entry (its hash no longer matches), a payload or time no
longer readable, an entry removed or inserted (the next entry's link points nowhere), entries
reordered (a link points to another entry), and a dropped or disabled trigger (the log is no longer
append-only). A forger who rewrites every later hash, or deletes only the newest entries, is not
caught by a chain alone: signed heads are. Whenever a reviewer signs (a sign-off, a reopen, a key),
the newest entry's id and hash are signed with their key and kept in `audit_heads`; a rewritten
chain no longer has the hash signed, a cut one no longer has the entry, and no one without the
private key can sign a new head. Heads, not a signature on every entry: verifying 100,000
Ed25519 signatures costs seconds, verifying the heads costs one per signed action (bench/signing.py).

Heads are signed only where a reviewer signs; the newest entries after the last head (a guideline
change after the last sign-off) are witnessed outside the project instead: after every commit that
appends to the log, the app records the newest entry in the user's key folder (app/anchors.py),
keyed by the log's identity (`log_identity`: its first entry, which every copy of the file shares)
and by the file's place. What `assay audit verify` sees, in one sentence, is `VERIFY_SEES`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from storage.audit_chain import GENESIS as GENESIS  # the chain's links, re-exported: callers import them here
from storage.audit_chain import EntryMark as EntryMark
from storage.audit_chain import append_audit as append_audit
from storage.audit_chain import audit_hash as audit_hash
from storage.schema import AuditHeadRow, AuditRow, utcnow

if TYPE_CHECKING:
    from storage.reviewer_keys import Signer

HEAD_FORMAT = "assay-audit-head/1"
EXPORTED = "matter.exported"  # the first entry of a matter copied out of a firm's project (storage.matters)
SQLITE_TRIGGERS: tuple[str, ...] = (
    "audit_log_no_update",
    "audit_log_no_delete",
    "audit_heads_no_update",
    "audit_heads_no_delete",
)
POSTGRES_TRIGGERS: tuple[str, ...] = ("audit_log_append_only", "audit_log_no_truncate", "audit_heads_append_only")
VERIFY_SEES = (
    "Audit verify sees any entry edited, removed, reordered or cut off the end of this log, in this file or in a "
    "copy of it on this computer, up to the newest entry this computer wrote or verified; it cannot see entries "
    "that only another computer wrote cut off the end (unless a head signed there names them), a log rebuilt "
    "from its first entry in a copy, or a whole file brought from another computer."
)


@dataclass(frozen=True, kw_only=True)
class AuditEntry:
    """One entry of the log, as stored."""

    id: int
    at: datetime
    actor: str
    action: str
    entity: str
    entity_id: str
    payload: dict[str, Any]
    prev_hash: str | None
    hash: str | None

    def as_dict(self, *, portable: bool = False) -> dict[str, Any]:
        """The entry as JSON values, its time as text. `portable`: for a reviewer's bundle, which
        travels to another project: without the row id and the link to the previous entry, which
        mean something only in this project's log, and without the actor, whom the bundle names."""
        whole = {
            "id": self.id,
            "at": str(self.at),
            "actor": self.actor,
            "action": self.action,
            "entity": self.entity,
            "entity_id": self.entity_id,
            "payload": self.payload,
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }
        if portable:
            for key in ("id", "actor", "prev_hash"):
                del whole[key]
        return whole


def audit_entries(session: Session, actor: str | None = None) -> list[AuditEntry]:
    """The log in order, or one actor's entries."""
    statement = select(AuditRow).order_by(AuditRow.id)
    if actor is not None:
        statement = statement.where(AuditRow.actor == actor)
    return [
        AuditEntry(
            id=row.id,
            at=row.at,
            actor=row.actor,
            action=row.action,
            entity=row.entity,
            entity_id=row.entity_id,
            payload=row.payload,
            prev_hash=row.prev_hash,
            hash=row.hash,
        )
        for row in session.scalars(statement)
    ]


def audit_has(session: Session, action: str, sha256: str | None) -> bool:
    """Whether an entry of this action already records this content hash (bundles import once)."""
    for payload in session.scalars(select(AuditRow.payload).where(AuditRow.action == action)):
        if isinstance(payload, dict) and payload.get("sha256") == sha256:
            return True
    return False


@dataclass(frozen=True, kw_only=True)
class AuditProblem:
    entry_id: int | None  # None: the log as a whole (a trigger)
    problem: str
    # On a server: the login whose own entry it is. Migration 0021 lets a login other than the owner's
    # role write entries only in its own name, linked to the newest entry, and heads only with its key:
    # what the database cannot check (a hash against its content, a signature) is that login's doing.
    login: str | None = None


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
                text(
                    "SELECT tgname, tgenabled FROM pg_trigger "
                    "WHERE tgrelid IN ('audit_log'::regclass, 'audit_heads'::regclass)"
                )
            ).all()
        )
        wanted = POSTGRES_TRIGGERS
    else:
        return []
    problems = []
    for name in wanted:
        if name not in present:
            problems.append(
                AuditProblem(entry_id=None, problem=f"the trigger {name} that keeps the log append-only was dropped")
            )
        elif present[name] == "D":
            problems.append(
                AuditProblem(entry_id=None, problem=f"the trigger {name} that keeps the log append-only is disabled")
            )
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
                    AuditProblem(
                        entry_id=entry_id,
                        problem=f"it follows entry {rows[linked][0]}, not the one before it (reordered)",
                    )
                )
            else:
                problems.append(
                    AuditProblem(
                        entry_id=entry_id,
                        problem="it does not follow the entry before it (an entry was removed or inserted)",
                    )
                )
        expected_prev = digest or ""
        try:
            payload = json.loads(payload_text) if payload_text is not None else {}
        except ValueError:
            shown = payload_text[:60]
            problems.append(
                AuditProblem(entry_id=entry_id, problem=f"its payload is no longer JSON (it was edited): {shown!r}")
            )
            continue
        try:
            stamp = _time(at)
        except (TypeError, ValueError):
            problems.append(AuditProblem(entry_id=entry_id, problem=f"its time {at!r} is not a time (it was edited)"))
            continue
        if audit_hash(prev_hash or "", stamp, actor, action, entity, entity_id, payload or {}) != digest:
            named = payload.get("login") if isinstance(payload, dict) else None
            problems.append(_content_problem(session, entry_id, str(named or actor)))
    hashes = {row[0]: row[8] for row in rows}
    last = rows[-1][0] if rows else 0
    problems += _head_problems(session, hashes, last)
    problems += _project_problems(session) + _trigger_problems(session)
    return len(rows), problems + _own_doing(problems)


def _on_server(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def _content_problem(session: Session, entry_id: int, actor: str) -> AuditProblem:
    """An entry whose hash is not its content's: edited, or, on a server, written so by its own login
    (an entry is edited by no one there: the log is append-only for its owner too)."""
    if _on_server(session):
        return AuditProblem(
            entry_id=entry_id,
            problem=f"its content does not match its hash: written so in {actor}'s name, which only their login "
            "(or the owner's role) may write in",
            login=actor,
        )
    return AuditProblem(entry_id=entry_id, problem="its content does not match its hash (it was edited)")


def _own_doing(problems: list[AuditProblem]) -> list[AuditProblem]:
    """One line for each login whose own entries are the problems found: no one else's are."""
    logins = sorted({p.login for p in problems if p.login is not None})
    others = any(p.login is None for p in problems)
    found = []
    for login in logins:
        entries = sorted({p.entry_id for p in problems if p.login == login and p.entry_id is not None})
        named = ", ".join(str(e) for e in entries) or "none"
        rest = "" if others else "; every other login's entries check"
        found.append(
            AuditProblem(
                entry_id=None,
                problem=f"{login} broke their own entries (entries {named}): the server lets no other login "
                f"write in their name or sign with their key{rest}",
                login=login,
            )
        )
    return found


# ---------------------------------------------------------------- signed heads


@dataclass(frozen=True, kw_only=True)
class AuditHead:
    """A signed checkpoint: every entry up to `entry_id` is as the key's holder saw it."""

    entry_id: int
    entry_hash: str
    fingerprint: str
    signed_at: datetime


def head_message(entry_id: int, entry_hash: str, fingerprint: str) -> bytes:
    """What a head's signature covers."""
    return f"{HEAD_FORMAT} {entry_id} {entry_hash} {fingerprint}".encode()


def newest_entry(session: Session) -> tuple[int, str] | None:
    """The id and hash of the newest entry, None when the log is empty."""
    session.flush()
    row = session.execute(select(AuditRow.id, AuditRow.hash).order_by(AuditRow.id.desc()).limit(1)).first()
    return None if row is None else (int(row[0]), str(row[1]))


def entry_mark(session: Session, entry_id: int | None = None) -> EntryMark | None:
    """The entry with this id (default: the newest), None when there is none."""
    statement = select(
        AuditRow.id, AuditRow.hash, AuditRow.action, AuditRow.entity, AuditRow.entity_id, AuditRow.actor, AuditRow.at
    )
    statement = (
        statement.order_by(AuditRow.id.desc()).limit(1)
        if entry_id is None
        else statement.where(AuditRow.id == entry_id)
    )
    row = session.execute(statement).first()
    if row is None:
        return None
    entry, digest, action, entity, target, actor, at = row
    when = at.strftime("%Y-%m-%d %H:%M") if isinstance(at, datetime) else str(at)[:16]
    return EntryMark(
        entry_id=int(entry),
        entry_hash=str(digest),
        action=action,
        entity=entity,
        entity_id=target,
        actor=actor,
        at=when,
    )


def entry_hash_of(session: Session, entry_id: int) -> str | None:
    """The stored hash of the entry with this id; None when there is no such entry."""
    found = session.execute(text("SELECT hash FROM audit_log WHERE id = :id"), {"id": entry_id}).first()
    return None if found is None else str(found[0])


def last_entry_id(session: Session) -> int:
    """The id of the newest entry (0 for an empty log)."""
    return int(session.execute(text("SELECT max(id) FROM audit_log")).scalar() or 0)


def log_identity(session: Session) -> str | None:
    """What names this log wherever its file is copied: the hash of its first entry, which every copy
    shares and no one changes without rebuilding the whole chain. None for an empty log, and on a
    server, whose database is not copied as a file (and whose first entry a matter's wall may hide)."""
    if session.get_bind().dialect.name != "sqlite":
        return None
    first = session.execute(text("SELECT hash FROM audit_log ORDER BY id LIMIT 1")).first()
    return None if first is None or not first[0] else f"log:{first[0]}"


def sign_head(session: Session, signer: Signer) -> AuditHead | None:
    """Sign the log's newest entry (and so every entry before it) with the signer's key."""
    newest = newest_entry(session)
    if newest is None:
        return None
    entry_id, entry_hash = newest
    signature = base64.b64encode(signer.sign(head_message(entry_id, entry_hash, signer.fingerprint))).decode()
    at = utcnow()
    session.add(
        AuditHeadRow(
            entry_id=entry_id, entry_hash=entry_hash, fingerprint=signer.fingerprint, signed_at=at, signature=signature
        )
    )
    session.flush()
    return AuditHead(entry_id=entry_id, entry_hash=entry_hash, fingerprint=signer.fingerprint, signed_at=at)


def _head_problems(session: Session, hashes: dict[int, str | None], last: int) -> list[AuditProblem]:
    """Each signed head against the key that signed it and the entry it names."""
    from storage.reviewer_keys import registered_keys, signature_valid

    keys = {key.fingerprint: key for key in registered_keys(session)}
    problems = []
    columns = "entry_id, entry_hash, fingerprint, CAST(signed_at AS TEXT), signature"
    heads = session.execute(text(f"SELECT {columns} FROM audit_heads ORDER BY id")).all()
    for entry_id, entry_hash, fingerprint, signed_at, signature in heads:
        key = keys.get(fingerprint)
        when = str(signed_at)[:16]
        if key is None:
            problems.append(
                AuditProblem(
                    entry_id=entry_id,
                    problem=f"its signed head names key {str(fingerprint)[:16]}, which is not registered",
                )
            )
            continue
        who = f"{key.reviewer} signed its hash at {when}"
        if not key.matches_fingerprint or not signature_valid(
            key.public_key, head_message(entry_id, entry_hash, fingerprint), signature
        ):
            if _on_server(session):  # a head is written only with its login's own key (0020), never changed
                problem = (
                    f"the head {key.reviewer} signed at {when} does not verify with their key: written so with "
                    f"{key.reviewer}'s key, which only their login (or the owner's role) may write a head with"
                )
                problems.append(AuditProblem(entry_id=entry_id, problem=problem, login=key.reviewer))
                continue
            problem = f"the head {key.reviewer} signed at {when} does not verify with their key (forged or edited)"
        elif entry_id not in hashes and entry_id > last:
            problem = f"it is gone, though {who}: the log was cut short after entry {last}"
        elif entry_id not in hashes:
            problem = f"it is gone, though {who} (it was removed)"
        elif hashes[entry_id] != entry_hash:
            problem = f"it is not the entry whose hash {key.reviewer} signed at {when} (the chain was rewritten)"
        else:
            continue
        problems.append(AuditProblem(entry_id=entry_id, problem=problem))
    return problems


def exported_entry_problems(session: Session) -> list[str]:
    """For a matter copied out: each entry carried whose content no longer gives the hash it had in the
    firm's log (edited since, or never what was there). Empty for a project that is no copy. Rows are
    read as text, as verify_audit reads them: an entry edited into something unreadable is its finding."""
    if session.scalar(select(AuditRow.id).where(AuditRow.action == EXPORTED).limit(1)) is None:
        return []
    rows = session.execute(
        text(
            "SELECT id, CAST(at AS TEXT), actor, action, entity, entity_id, CAST(payload AS TEXT) "
            "FROM audit_log ORDER BY id"
        )
    ).all()
    opening = next(i for i, row in enumerate(rows) if row[3] == EXPORTED)
    try:
        mapped = json.loads(rows[opening][6] or "{}").get("entries") or []
    except (ValueError, AttributeError):
        return [f"entry {rows[opening][0]}, the export's record of the firm's log, is no longer readable"]
    carried = rows[opening + 1 : opening + 1 + len(mapped)]
    if len(carried) != len(mapped):
        return [f"the export names {len(mapped)} entries of the firm's log; the copy holds {len(carried)}"]
    problems = []
    for (row_id, at, actor, action, entity, entity_id, payload_text), (entry_id, prev_hash, digest, imported) in zip(
        carried, mapped, strict=True
    ):
        try:
            payload = dict(json.loads(payload_text or "{}"))
            stamp = _time(at)
        except (TypeError, ValueError):
            problems.append(f"entry {row_id} is no longer readable, so not entry {entry_id} of the firm's log")
            continue
        if imported:
            payload.pop("imported", None)
        if audit_hash(prev_hash or "", stamp, actor, action, entity, entity_id, payload) != digest:
            problems.append(f"entry {row_id} is not entry {entry_id} of the firm's log as it was exported")
    return problems


def _project_problems(session: Session) -> list[AuditProblem]:
    """What the log vouches for elsewhere in the project: guideline texts and reviewers' keys; and, in a
    matter copied out of a firm's project, that the entries it carried are those of the firm's log."""
    from storage.guidelines import guideline_problems
    from storage.reviewer_keys import key_problems

    found = guideline_problems(session) + key_problems(session) + exported_entry_problems(session)
    return [AuditProblem(entry_id=None, problem=problem) for problem in found]
