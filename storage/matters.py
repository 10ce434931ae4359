"""Matters, their people and ethical walls; which rows belong to a matter; copying one matter out.

Every row of matter data carries its matter's id (`matter_id`, NULL: unassigned). A document's is
given when it is imported; every other row's is its parent's, set by the database itself (triggers of
migration 0019), so no writer can file a row under another matter. On PostgreSQL, row-level security
shows each login the unassigned rows and those of the matters it is a member of; the audit log's
entries carry their subject's matter there. SQLite's audit log refuses updates, so there an entry's
matter is derived from its subject when it is read (`audit_entry_ids`).

A wall names a client as a person typed it; it is matched after `client_key` folds the spellings of one
company together ("ACME", "Acme Inc.", a Greek-alpha "Αcme").

A matter copied out (`copy_matter`) carries its audit entries on a chain of its own, rebuilt: the
firm's chain runs through other matters' entries, which stay behind. Each entry keeps its time, actor,
action, subject and payload; a sign-off's entry is marked `imported` (its record names the firm's log,
not this one, as a reviewer's bundle's does). The chain ends with a `matter.exported` entry naming the
firm's head at the time and, for each entry carried, its id, link and hash there: with it anyone can
recompute each entry's hash in the firm's log (`exported_entry_problems`), and `audit verify` on the
copy checks its own chain, keys, guidelines and sign-offs as on any project.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Table, delete, event, func, or_, select, text, update
from sqlalchemy.orm import Session, sessionmaker

from models.names import fold
from storage.audit import EXPORTED, GENESIS, append_audit, audit_hash
from storage.audit import exported_entry_problems as exported_entry_problems
from storage.schema import (
    AnswerRow,
    AuditRow,
    Base,
    DocumentRow,
    LabelRow,
    MatterMemberRow,
    MatterRow,
    MatterWallRow,
    RaterRow,
    ReviewRow,
    SignOffRow,
    utcnow,
)
from storage.signoffs import SIGNED

# Each table holding matter data, and where its matter comes from: (column, parent table, parent key).
MATTER_PARENTS: dict[str, tuple[str, str, str]] = {
    "passages": ("document_id", "documents", "id"),
    "questions": ("document_id", "documents", "id"),
    "answers": ("question_id", "questions", "id"),
    "data_points": ("answer_id", "answers", "id"),
    "labels": ("data_point_id", "data_points", "id"),
    "citations": ("data_point_id", "data_points", "id"),
    "reviews": ("answer_id", "answers", "id"),
    "judge_outcomes": ("answer_id", "answers", "id"),
    "rubric_results": ("answer_id", "answers", "id"),
    "review_samples": ("answer_id", "answers", "id"),
    "adjudications": ("answer_id", "answers", "id"),
    "signoffs": ("answer_id", "answers", "id"),
    "pairwise_preferences": ("answer_a_id", "answers", "id"),
}
# Every table whose rows are walled by matter on PostgreSQL.
WALLED_TABLES = ("documents", *MATTER_PARENTS, "audit_log")
MATTER_TABLES = ("matters", "matter_members", "matter_walls")
# Tables that hold no matter's data, and why: a table in none of these lists fails the test that
# every table is classified (tests/test_matters.py), so a new table cannot slip past the walls.
NO_MATTER_DATA = {
    "raters": "names of reviewers and judge runs: people and tools, not a client's documents",
    "settings": "project settings: thresholds, review mode, hosts allowed",
    "guideline_versions": "the review guidelines: the firm's rules, not a client's documents",
    "reviewer_keys": "reviewers' public keys",
    "audit_heads": "signed hashes of the audit chain: no content",
}
# Settings that hold a matter's data (answer ids, a client's name), by key or beginning of a key: on a
# server a walled login does not read them (migration 0020), and a matter copied out carries only its
# own part of them.
MATTER_SETTINGS = ("assignments", "project.matter_name")
MATTER_SETTING_PREFIXES = ("model_check.",)


def is_matter_setting(key: str) -> bool:
    return key in MATTER_SETTINGS or key.startswith(MATTER_SETTING_PREFIXES)


# ---------------------------------------------------------------- clients' names, as walls match them

# Words that say what kind of company, not which: dropped from the end of a client's name.
_COMPANY_WORDS = frozenset(
    {
        *("inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "llc", "llp", "lp"),
        *("plc", "gmbh", "mbh", "ag", "kg", "ug", "sa", "sas", "sarl", "srl", "spa", "bv", "nv", "pty", "pte"),
        *("oy", "ab", "as", "asa", "kk"),
    }
)


def client_key(client: str) -> str:
    """What a client's name comes to once spellings of one company are folded together: what
    models.names `fold`s (compatibility forms, case, accents, small capitals, look-alike Greek and
    Cyrillic letters, trademark signs, invisible characters), punctuation and spaces, a leading "the"
    and trailing company words (Inc, Ltd, LLC, GmbH, S.A., Corp…)."""
    folded = re.sub(r"(?<=\w)\.(?=\w)", "", fold(client).replace("&", " and "))  # S.A., L.L.C.: one word each
    words = re.findall(r"[^\W_]+", folded)
    while len(words) > 1 and words[-1] in _COMPANY_WORDS:
        words.pop()
    if len(words) > 1 and words[0] == "the":
        words.pop(0)
    return "".join(words) or client.strip().casefold()


def same_client(a: str, b: str) -> bool:
    """Whether two names of clients name one company, as a wall reads them."""
    return client_key(a) == client_key(b)


@dataclass(frozen=True, kw_only=True)
class Matter:
    id: int
    client: str
    number: str
    name: str
    archived_at: datetime | None
    members: tuple[str, ...]

    @property
    def label(self) -> str:
        """How a person names it: client, number and name."""
        return f"{self.client} {self.number} ({self.name})"

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "client": self.client,
            "number": self.number,
            "name": self.name,
            "archived": self.archived_at is not None,
            "archived_at": None if self.archived_at is None else self.archived_at.isoformat(),
            "members": list(self.members),
        }


@dataclass(frozen=True, kw_only=True)
class Wall:
    person: str
    client: str
    reason: str | None


def _matter(row: MatterRow, members: Iterable[str]) -> Matter:
    return Matter(
        id=row.id,
        client=row.client,
        number=row.number,
        name=row.name,
        archived_at=row.archived_at,
        members=tuple(sorted(members)),
    )


def matters(session: Session) -> list[Matter]:
    """The matters this session may see (on a server: those its login is on, or all for the owner)."""
    people: dict[int, list[str]] = {}
    for matter_id, person in session.execute(select(MatterMemberRow.matter_id, MatterMemberRow.person)):
        people.setdefault(matter_id, []).append(person)
    rows = session.scalars(select(MatterRow).order_by(MatterRow.client, MatterRow.number))
    return [_matter(row, people.get(row.id, ())) for row in rows]


def matters_matching(session: Session, reference: str) -> list[Matter]:
    """The matters a person may mean by `reference`: its number, `CLIENT/NUMBER`, or its exact name."""
    wanted = reference.strip()
    found = [m for m in matters(session) if wanted in (m.number, f"{m.client}/{m.number}")]
    return found or [m for m in matters(session) if m.name == wanted]


def create_matter(session: Session, client: str, number: str, name: str, actor: str) -> Matter:
    row = MatterRow(client=client, number=number, name=name)
    session.add(row)
    session.flush()
    append_audit(session, actor, "matter.created", "matter", str(row.id), {"client": client, "number": number})
    return _matter(row, ())


def add_member(session: Session, matter: Matter, person: str, actor: str) -> None:
    session.add(MatterMemberRow(matter_id=matter.id, person=person, added_by=actor))
    session.flush()
    append_audit(session, actor, "matter.member_added", "matter", str(matter.id), {"person": person})


def remove_member(session: Session, matter: Matter, person: str, actor: str) -> None:
    session.execute(
        delete(MatterMemberRow).where(MatterMemberRow.matter_id == matter.id, MatterMemberRow.person == person)
    )
    append_audit(session, actor, "matter.member_removed", "matter", str(matter.id), {"person": person})


def walls(session: Session, person: str | None = None) -> list[Wall]:
    statement = select(MatterWallRow).order_by(MatterWallRow.person, MatterWallRow.client)
    if person is not None:
        statement = statement.where(MatterWallRow.person == person)
    return [Wall(person=row.person, client=row.client, reason=row.reason) for row in session.scalars(statement)]


def add_wall(session: Session, person: str, client: str, reason: str | None, actor: str) -> None:
    session.add(MatterWallRow(person=person, client=client, reason=reason, added_by=actor))
    session.flush()
    append_audit(session, actor, "wall.added", "wall", person, {"person": person, "client": client, "reason": reason})


def remove_wall(session: Session, person: str, client: str, actor: str) -> None:
    session.execute(delete(MatterWallRow).where(MatterWallRow.person == person, MatterWallRow.client == client))
    append_audit(session, actor, "wall.removed", "wall", person, {"person": person, "client": client})


def archive_matter(session: Session, matter: Matter, actor: str) -> None:
    session.execute(update(MatterRow).where(MatterRow.id == matter.id).values(archived_at=utcnow()))
    append_audit(session, actor, "matter.archived", "matter", str(matter.id), {})


def delete_matter(session: Session, matter: Matter, actor: str) -> None:
    """Delete an unreviewed matter and its documents (their answers and judge tags go with them)."""
    append_audit(
        session, actor, "matter.deleted", "matter", str(matter.id), matter.as_dict() | holdings(session, matter)
    )
    session.execute(delete(DocumentRow).where(DocumentRow.matter_id == matter.id))
    session.execute(delete(MatterRow).where(MatterRow.id == matter.id))


def holdings(session: Session, matter: Matter) -> dict[str, int]:
    """What a matter holds: documents, answers, reviews begun or submitted, reviewers' tags, sign-offs."""
    human = select(RaterRow.id).where(RaterRow.kind == "human").scalar_subquery()

    def count(table: Any, *where: Any) -> int:
        return session.scalar(select(func.count()).select_from(table).where(table.matter_id == matter.id, *where)) or 0

    return {
        "documents": count(DocumentRow),
        "answers": count(AnswerRow),
        "reviews": count(ReviewRow, ReviewRow.status != "unreviewed"),
        "reviewer_tags": count(LabelRow, LabelRow.rater_id.in_(human)),
        "signoffs": count(SignOffRow),
    }


def document_matters(session: Session, names: Iterable[str]) -> dict[str, int | None]:
    """The matter of each of these documents already in the project (absent: not in it)."""
    rows = session.execute(select(DocumentRow.name, DocumentRow.matter_id).where(DocumentRow.name.in_(list(names))))
    return {name: matter_id for name, matter_id in rows}


def documents_by_matter(session: Session) -> dict[int | None, list[str]]:
    """The names of the documents of each matter this session may see (None: the unassigned ones)."""
    found: dict[int | None, list[str]] = {}
    for name, matter_id in session.execute(select(DocumentRow.name, DocumentRow.matter_id).order_by(DocumentRow.name)):
        found.setdefault(matter_id, []).append(name)
    return found


def answer_matters(session: Session, answer_ids: Iterable[str]) -> dict[str, int | None]:
    """The matter of each of these answers already in the project (absent: not in it)."""
    ids = list(answer_ids)
    found: dict[str, int | None] = {}
    for start in range(0, len(ids), 500):
        rows = session.execute(
            select(AnswerRow.id, AnswerRow.matter_id).where(AnswerRow.id.in_(ids[start : start + 500]))
        )
        found.update({answer_id: matter_id for answer_id, matter_id in rows})
    return found


def filing_sessions(sessions: sessionmaker[Session], matter_id: int) -> sessionmaker[Session]:
    """Sessions like `sessions` that file every new document under the matter (its rows follow it)."""
    filing = sessionmaker(sessions.kw["bind"], expire_on_commit=False)

    def file_documents(session: Session, _context: Any, _instances: Any) -> None:
        for row in session.new:
            if isinstance(row, DocumentRow) and row.matter_id is None:
                row.matter_id = matter_id

    event.listen(filing, "before_flush", file_documents)
    return filing


def assign_document(session: Session, document_id: int, matter: Matter, actor: str) -> int:
    """File an unassigned document, and everything about it, under a matter; the rows moved.
    Its audit entries written so far stay unassigned: the log is never rewritten."""
    session.execute(update(DocumentRow).where(DocumentRow.id == document_id).values(matter_id=matter.id))
    moved = 1
    tables = Base.metadata.tables
    for table_name, (column, parent, key) in MATTER_PARENTS.items():  # parents before children
        table, parent_table = tables[table_name], tables[parent]
        of_document = select(parent_table.c[key]).where(parent_table.c.matter_id == matter.id)
        if parent == "documents":
            of_document = of_document.where(parent_table.c.id == document_id)
        result = session.execute(
            update(table)
            .where(table.c[column].in_(of_document), or_(table.c.matter_id.is_(None), table.c.matter_id != matter.id))
            .values(matter_id=matter.id)
        )
        moved += getattr(result, "rowcount", 0) or 0
    append_audit(session, actor, "matter.document_assigned", "matter", str(matter.id), {"document": document_id})
    return moved


def login(session: Session) -> str | None:
    """The database login of this session on a server (what the walls are keyed on); None on SQLite."""
    if session.get_bind().dialect.name != "postgresql":
        return None
    name: str | None = session.scalar(text("SELECT session_user"))
    return name


def administers(session: Session) -> bool:
    """Whether this session may administer matters: always on SQLite; on a server, the owner's role."""
    if session.get_bind().dialect.name != "postgresql":
        return True
    return bool(session.scalar(text("SELECT assay_administers()")))


# ---------------------------------------------------------------- one matter's rows, copied out


def audit_entry_ids(connection: Connection, matter_id: int) -> list[int]:
    """The audit entries about this matter: its own, and those whose subject (an answer, a pair of
    answers, a document) is in it. Entries about the project as a whole are not a matter's."""
    about = _about_matter(connection, matter_id)
    rows = connection.execute(select(AuditRow.id, AuditRow.entity, AuditRow.entity_id).order_by(AuditRow.id))
    return [entry_id for entry_id, entity, entity_id in rows if about(entity, entity_id)]


def _about_matter(connection: Connection, matter_id: int) -> Any:
    documents = {str(i) for i in connection.scalars(select(DocumentRow.id).where(DocumentRow.matter_id == matter_id))}
    answers = set(connection.scalars(select(AnswerRow.id).where(AnswerRow.matter_id == matter_id)))

    def about(entity: str, entity_id: str) -> bool:
        return (
            (entity == "matter" and entity_id == str(matter_id))
            or (entity == "document" and entity_id in documents)
            or (entity == "answer" and entity_id in answers)
            or (entity == "answer_pair" and entity_id.split("|", 1)[0] in answers)
        )

    return about


def copy_matter(source: Connection, target: Connection, matter_id: int, actor: str) -> dict[str, int]:
    """Copy one matter into an empty project (schema at head): its rows of every table of matter data,
    the matter and its people, and of the rest only what those rows refer to (their raters and
    reviewers' keys), the project's guidelines and its settings but for other matters' part of them.
    Rows of other matters, unassigned rows and entries about the whole project are left behind; the
    matter's audit entries go on a chain of their own, ended by `actor`'s entry of the export
    (`_copy_audit`). Returns the rows copied per table."""
    tables = Base.metadata.tables
    walled = set(WALLED_TABLES)
    unknown = set(tables) - walled - set(MATTER_TABLES) - set(NO_MATTER_DATA)
    if unknown:  # a table this code was never told about: refuse rather than guess
        raise RuntimeError(f"tables not classified for matters: {', '.join(sorted(unknown))}")
    selections: dict[str, Any] = {}
    for name in walled - {"audit_log"}:
        selections[name] = select(tables[name]).where(tables[name].c.matter_id == matter_id)
    selections["matters"] = select(tables["matters"]).where(tables["matters"].c.id == matter_id)
    selections["matter_members"] = select(tables["matter_members"]).where(
        tables["matter_members"].c.matter_id == matter_id
    )
    rows: dict[str, list[dict[str, Any]]] = {}
    rater_ids: set[int] = set()
    for name, statement in selections.items():
        rows[name] = [dict(row._mapping) for row in source.execute(statement)]
        if "rater_id" in tables[name].c:
            rater_ids |= {row["rater_id"] for row in rows[name]}
    rows["raters"] = [
        dict(row._mapping)
        for row in source.execute(select(tables["raters"]).where(tables["raters"].c.id.in_(sorted(rater_ids))))
    ]
    names = [row["name"] for row in rows["raters"]]
    keys = tables["reviewer_keys"]
    rows["reviewer_keys"] = [dict(r._mapping) for r in source.execute(select(keys).where(keys.c.reviewer.in_(names)))]
    rows["guideline_versions"] = [dict(row._mapping) for row in source.execute(select(tables["guideline_versions"]))]
    answers = {row["id"] for row in rows["answers"]}
    rows["settings"] = [
        setting
        for row in source.execute(select(tables["settings"]))
        if (setting := _matter_part(dict(row._mapping), answers)) is not None
    ]
    target.exec_driver_sql("PRAGMA defer_foreign_keys = ON")  # a footnote may refer to a later passage
    copied: dict[str, int] = {}
    for table in Base.metadata.sorted_tables:
        batch = rows.get(table.name)
        if batch:
            _insert(target, table, batch)
        copied[table.name] = len(batch or ())
    fingerprints = {row["fingerprint"] for row in rows["reviewer_keys"]}
    copied["audit_log"] = _copy_audit(source, target, matter_id, fingerprints, actor)
    return copied


def _matter_part(setting: dict[str, Any], answers: set[str]) -> dict[str, Any] | None:
    """A setting as a matter's copy carries it: whole, cut down to the matter's answers, or not at all."""
    if not is_matter_setting(setting["key"]):
        return setting
    if setting["key"] == "assignments" and isinstance(setting["value"], dict):
        return setting | {"value": {a: names for a, names in setting["value"].items() if a in answers}}
    return None


def _utc_naive(at: Any) -> datetime:
    """An entry's time as the chain hashes it and SQLite stores it: UTC, without a zone."""
    stamp = at if isinstance(at, datetime) else datetime.fromisoformat(str(at))
    return stamp.astimezone(UTC).replace(tzinfo=None) if stamp.tzinfo else stamp


def _copy_audit(source: Connection, target: Connection, matter_id: int, fingerprints: set[str], actor: str) -> int:
    """The matter's audit entries, and those vouching for the keys and guidelines copied with it, on a
    chain of the copy's own, opened by `actor`'s entry of the export, which maps each to the firm's log.
    Opened by it, the chain is the copy's own from its first link: never taken for the firm's log."""
    about = _about_matter(source, matter_id)
    log = Base.metadata.tables["audit_log"]
    carried: list[tuple[Any, dict[str, Any], bool]] = []
    newest: tuple[int, str | None] | None = None
    for row in source.execute(select(log).order_by(log.c.id)):
        entry = row._mapping
        newest = (entry["id"], entry["hash"])
        vouching = entry["action"] == "guidelines.set" or (
            entry["entity"] == "key" and entry["entity_id"] in fingerprints
        )
        if about(entry["entity"], entry["entity_id"]) or vouching:
            payload = dict(entry["payload"] or {})
            imported = entry["action"] == SIGNED and not payload.get("imported")
            if imported:  # its record names the firm's log, as a bundle's sign-off names the reviewer's
                payload["imported"] = True
            carried.append((entry, payload, imported))
    matter = source.execute(select(MatterRow.client, MatterRow.number).where(MatterRow.id == matter_id)).one()
    opening = {
        "matter": f"{matter.client} {matter.number}",
        "source_head": None if newest is None else {"entry": newest[0], "hash": newest[1]},
        # each entry that follows, as it is in the firm's log: [id, link, hash, marked imported here]
        "entries": [[entry["id"], entry["prev_hash"], entry["hash"], imported] for entry, _, imported in carried],
    }
    prev = target.scalar(select(log.c.hash).order_by(log.c.id.desc()).limit(1)) or GENESIS
    export = {"actor": actor, "action": EXPORTED, "entity": "matter", "entity_id": str(matter_id)}
    prev = _append(target, prev, _utc_naive(utcnow()), export, opening)
    for entry, payload, _ in carried:
        prev = _append(target, prev, _utc_naive(entry["at"]), entry, payload)
    return len(carried) + 1


def _append(target: Connection, prev: str, at: datetime, entry: Any, payload: dict[str, Any]) -> str:
    fields = {name: entry[name] for name in ("actor", "action", "entity", "entity_id")}
    digest = audit_hash(prev, at, payload=payload, **fields)
    target.execute(
        Base.metadata.tables["audit_log"]
        .insert()
        .values(at=at, **fields, matter_id=None, payload=payload, prev_hash=prev, hash=digest)
    )
    return digest


def _insert(target: Connection, table: Table, batch: list[dict[str, Any]]) -> None:
    key = [column.name for column in table.primary_key.columns]
    batch.sort(key=lambda row: tuple(row[k] for k in key))
    for start in range(0, len(batch), 5_000):
        target.execute(table.insert(), batch[start : start + 5_000])
