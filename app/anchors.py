"""The anchor: this computer's witness, outside the project, of the newest entry of each audit log
it writes or verifies, so that `assay audit verify` can tell an entry cut off the end of the log.

Signed heads (storage/audit.py) vouch for the log up to the newest head; the entries after it (a
guideline change after the last sign-off), and a log cut short together with its heads, need a
witness the project's rows cannot change. After every commit that appends to a log, the newest
entry (its id and hash, and what it records) is written to a small file in the user's key folder,
`anchors/<log>/<place>.json`: per log, named by its identity (the hash of its first entry, which
every copy of the file shares; on a server, the database's address), and per place (the file's
path, or the server's address). One file per place: two processes working on two copies of a
project never overwrite each other's anchor. `anchor_problems` then checks that:

- the log at this place still holds the entry anchored here, with the same hash (entries cut off
  the end, removed, or the chain rewritten, in place);
- a copy never written here holds the entries anchored for its log at its other places, unless it
  is exactly as one of those files still is (a copy cut short, or an older copy, is named);
- no other log was anchored here (the whole log rebuilt from its first entry, in place).

Legitimate copies and moves: a moved or copied file holds what was anchored where it came from; once
written to, a copy has its own anchor and goes its own way (copies of one project worked on apart
are not compared with each other, wherever they were written; one copied back over the file here is
that file now, once this computer has anchored its entries elsewhere). `restore` moves the anchors
of the file it replaces to where that file is kept aside, and records the restore in the restored
log, whose entry becomes the anchor here. A project made new at the place of an old one forgets the
old one's anchor there (`opened`). A verify that finds nothing wrong moves the anchor to the newest entry it saw, which
covers entries written on another computer.

An anchor never moves past an anchored entry that is gone: a log cut and then written to stays
reported until a backup is restored. The cost is one small file written per audited commit, and
nothing on a commit that appends no entry. A reviewer's routine edits (a tag, a comment: one entry
per key press) are anchored at most every HOLD_SECONDS, the newest held back written by the next
anchor, or when the project closes or the process ends. On the hot path, one tag override, writing
the anchor every time added 0.7 ms to a 15 ms median (9 ms to 35 ms on a busy disk); held back, it
adds nothing measurable (bench/anchors.py).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import threading
import time
from contextlib import closing, suppress
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from storage.audit import EntryMark, entry_hash_of, entry_mark, last_entry_id, log_identity
from storage.audit_chain import APPENDED
from storage.db import engine_url

FORMAT = "assay-anchor/1"
LEGACY = "anchors.json"  # before: one file, the newest signed head of each project by its address
_PLAN = "assay.anchor_plan"  # session.info: the anchor to write once the transaction has committed
KINDS = {
    "guidelines.set": "a guideline change",
    "review.signed": "a sign-off",
    "review.reopened": "a reopening of a signed review",
    "adjudication.decided": "an adjudication",
    "adjudication.consensus": "an adjudication's consensus",
    "key.registered": "a key's registration",
    "key.retired": "a key's retirement",
    "project.restored": "a restore from a backup",
    "": "a head signed here",  # an anchor kept before every entry was anchored
}
ROUTINE = "review."  # a reviewer's edits, many a minute: anchored at most every HOLD_SECONDS
NOT_ROUTINE = frozenset({"review.signed", "review.reopened", "review.submitted"})
HOLD_SECONDS = 3.0
KIND_PREFIXES = {
    "matter.": "a change to a matter",
    "wall.": "a change to an ethical wall",
    "review.": "a review's change",
}


@dataclass(frozen=True, kw_only=True)
class Anchor:
    """The newest entry of a log this computer saw at a place."""

    identity: str
    place: str
    mark: EntryMark


@dataclass(frozen=True, kw_only=True)
class LogState:
    """Where a log is and what it ends with, as `audit verify` read it."""

    identity: str
    place: str
    newest: EntryMark | None


# ---------------------------------------------------------------- names and files


def place_of(url: str) -> str:
    """A project's place as anchors name it: its address as its engine has it (a file's path as given,
    never parsed as a URL: storage/db.py), without a password."""
    return make_url(engine_url(url)).render_as_string(hide_password=True)


def _place(session: Session) -> str:
    return session.get_bind().engine.url.render_as_string(hide_password=True)


def _identity(session: Session, place: str) -> str:
    return log_identity(session) or f"db:{place}"


def _root() -> Path:
    from app.keys import key_folder  # keys imports cryptography: not at start-up

    return key_folder() / "anchors"


def _name(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _path(identity: str, place: str) -> Path:
    return _root() / _name(identity) / f"{_name(place)}.json"


def _read(path: Path) -> Anchor | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        mark = EntryMark(**{k: data[k] for k in EntryMark.__dataclass_fields__})
        return Anchor(identity=str(data["identity"]), place=str(data["place"]), mark=mark)
    except (OSError, ValueError, TypeError, KeyError):
        return None  # gone, or not one of ours: no witness


def _write(path: Path, data: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
        temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
        temporary.replace(path)  # whole or not at all
    except OSError:
        pass  # the log in the project still stands; the anchor is a second witness


def _anchors_of(identity: str) -> list[Anchor]:
    folder = _root() / _name(identity)
    found = [_read(p) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    return [a for a in found if a is not None and a.identity == identity]


def _anchors_with_paths(identity: str) -> list[tuple[Path, Anchor]]:
    folder = _root() / _name(identity)
    found = [(p, _read(p)) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []
    return [(p, a) for p, a in found if a is not None and a.identity == identity]


def _anchors_at(place: str) -> list[tuple[Path, Anchor]]:
    root = _root()
    found = [(p, _read(p)) for p in sorted(root.glob(f"*/{_name(place)}.json"))] if root.is_dir() else []
    return [(p, a) for p, a in found if a is not None and a.place == place]


def _record(anchor: Anchor, replace: bool = False) -> None:
    """Keep the anchor, unless one as new or newer is kept for its log and place (another process);
    `replace`: whatever is kept (a verify saw this entry as the newest and found nothing wrong)."""
    path = _path(anchor.identity, anchor.place)
    known = _read(path)
    if known is not None and known.mark == anchor.mark:
        _newest[(anchor.identity, anchor.place)] = known.mark
        return
    if not replace and known is not None and known.mark.entry_id >= anchor.mark.entry_id:
        _newest[(anchor.identity, anchor.place)] = known.mark
        return
    _newest[(anchor.identity, anchor.place)] = anchor.mark
    recorded = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    _write(
        path,
        {"format": FORMAT, "identity": anchor.identity, "place": anchor.place, **asdict(anchor.mark)}
        | {"recorded_at": recorded},
    )
    _forget_legacy(anchor.place)


# The anchors kept before: the newest signed head of each project, keyed by its address.


def _legacy_file() -> Path:
    from app.keys import key_folder

    return key_folder() / LEGACY


def _legacy() -> dict[str, Any]:
    try:
        data = json.loads(_legacy_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _legacy_at(session: Session, place: str) -> Anchor | None:
    url = session.get_bind().engine.url
    keys = {place, url.render_as_string(hide_password=False)}
    for key, head in _legacy().items():
        if key in keys and isinstance(head, dict):
            try:
                entry_id, entry_hash = int(head["entry_id"]), str(head["entry_hash"])
            except (KeyError, TypeError, ValueError):
                continue
            when = str(head.get("signed_at", ""))[:16].replace("T", " ")
            mark = EntryMark(
                entry_id=entry_id, entry_hash=entry_hash, action="", entity="", entity_id="", actor="", at=when
            )
            return Anchor(identity="", place=place, mark=mark)
    return None


def _forget_legacy(place: str, to: str | None = None) -> None:
    heads = _legacy()
    keys = [k for k in heads if k == place or (k.startswith("postgresql") and place_of(k) == place)]
    if not keys:
        return
    for key in keys:
        head = heads.pop(key)
        if to is not None:
            heads[to] = head
    _write(_legacy_file(), heads)


# ---------------------------------------------------------------- after each commit


def watch() -> None:
    """Anchor the newest entry after every commit, by any session, that appended to an audit log."""
    if not event.contains(Session, "before_commit", _before_commit):
        event.listen(Session, "before_commit", _before_commit)
        event.listen(Session, "after_commit", _after_commit)
        event.listen(Session, "after_rollback", _after_rollback)
        atexit.register(flush)


def opened(url: str, created: bool) -> None:
    """A project was opened (made new when `created`): its audited commits are anchored from now on,
    and a new project forgets what was anchored at its place before (another project's log)."""
    watch()
    if created:
        where = place_of(url)
        _forget_cached(where)
        for path, _ in _anchors_at(where):
            path.unlink(missing_ok=True)
        _forget_legacy(where)


def _before_commit(session: Session) -> None:
    appended = session.info.pop(APPENDED, None)
    if appended is None:
        return  # nothing audited: no file touched
    with suppress(SQLAlchemyError, OSError):  # the commit goes on; the next commit or verify anchors its entries
        session.info[_PLAN] = _plan(session, appended)


_identities: dict[str, str] = {}  # each place's log identity, as this process read it (restore forgets it)
_newest: dict[tuple[str, str], EntryMark] = {}  # the anchor of each log and place, as this process knows it


def _plan(session: Session, mark: EntryMark) -> Anchor | None:
    """What to anchor once committed: the entry appended; nothing when the entry anchored here
    before is gone, so that the cut stays reported. One lookup by id once the place is known."""
    where = _place(session)
    identity = _identities.get(where) or _identities.setdefault(where, _identity(session, where))
    before = _newest.get((identity, where))
    if before is None:
        found = _read(_path(identity, where)) or _legacy_at(session, where)
        before = None if found is None else found.mark
    gone = before is not None and before.entry_id < mark.entry_id and not _holds(session, before)
    return None if gone else Anchor(identity=identity, place=where, mark=mark)


def _holds(session: Session, mark: EntryMark) -> bool:
    return entry_hash_of(session, mark.entry_id) == mark.entry_hash


_held: dict[tuple[str, str], Anchor] = {}  # routine entries' anchors not yet written, by log and place
_written: dict[tuple[str, str], float] = {}  # when this process last wrote each one
_lock = threading.Lock()  # workers commit too


def _after_commit(session: Session) -> None:
    plan = session.info.pop(_PLAN, None)
    if plan is None:
        return
    key, now = (plan.identity, plan.place), time.monotonic()
    routine = plan.mark.action.startswith(ROUTINE) and plan.mark.action not in NOT_ROUTINE
    with _lock:
        if routine and now - _written.get(key, -HOLD_SECONDS) < HOLD_SECONDS:
            _held[key] = plan
            return
        _held.pop(key, None)
        _written[key] = now
    _record(plan)


def flush() -> None:
    """Write the anchors held back (a reviewer's routine edits in quick succession)."""
    with _lock:
        held = list(_held.values())
        _held.clear()
    for anchor in held:
        _record(anchor)


def _forget_cached(place: str) -> None:
    with _lock:
        _identities.pop(place, None)
        for key in [k for k in _newest if k[1] == place]:
            del _newest[key]
        for key in [k for k in _held if k[1] == place]:
            del _held[key]


def _after_rollback(session: Session) -> None:
    session.info.pop(APPENDED, None)
    session.info.pop(_PLAN, None)


# ---------------------------------------------------------------- verifying


def log_state(session: Session) -> LogState:
    """The log's identity, place and newest entry, as read in this session."""
    where = _place(session)
    return LogState(identity=_identity(session, where), place=where, newest=entry_mark(session))


def note_verified(state: LogState) -> None:
    """A verify found nothing wrong: the newest entry it saw becomes the anchor here (even an older
    one than was anchored: a copy put in this file's place, found to be one, is this file now)."""
    if state.newest is not None:
        _record(Anchor(identity=state.identity, place=state.place, mark=state.newest), replace=True)


def anchor_problems(session: Session) -> list[str]:
    """What this computer's anchors say is missing from the log, one sentence each."""
    flush()
    where = _place(session)
    identity = _identity(session, where)
    last = last_entry_id(session)
    own = [a for a in (_read(_path(identity, where)), _legacy_at(session, where)) if a is not None]
    problems = [p for a in own if (p := _own_problem(session, a, last)) and not _copied_here(session, a, where)]
    if not own:
        problems += _copy_problems(session, identity, where, last)
    for _, other in _anchors_at(where):
        if other.identity == identity:
            continue
        what = describe(other.mark)
        problems.append(
            f"the log is empty, but this computer recorded {what} in it: every entry was deleted"
            if last == 0
            else f"this computer recorded {what} in another log at this place: this log was rebuilt from "
            "its first entry, or another project file was put in its place"
        )
    return problems


def _own_problem(session: Session, anchor: Anchor, last: int) -> str | None:
    found = entry_hash_of(session, anchor.mark.entry_id)
    what = describe(anchor.mark)
    if found is None and last < anchor.mark.entry_id:
        return (
            f"the log was cut short after entry {last}: {what}, which this computer recorded, is missing "
            "(or an older copy of the project was put in its place)"
        )
    if found is None:
        return f"{what}, which this computer recorded, was removed from the log"
    if found != anchor.mark.entry_hash:
        return f"{what} is not the entry this computer recorded: the log was rewritten from there"
    return None


def _copied_here(session: Session, anchor: Anchor, where: str) -> bool:
    """Whether the file at `where`, whose log no longer holds the entry anchored here (`anchor`), is a
    copy of another file of its log that this computer wrote or verified since: its log holds the
    entry anchored at that other place, anchored after this place's own. A copy worked on elsewhere,
    checked here, then copied back over this file is that (its entries past the copy's making were
    written elsewhere, so this place's anchored entry is not in it); a log cut or rewritten in place
    is not, unless this computer had anchored the rewritten entries at another place."""
    own = _path(anchor.identity, where)
    try:
        since = own.stat().st_mtime_ns
    except OSError:
        return False  # a legacy anchor, or none kept: nothing newer to compare with
    for path, other in _anchors_with_paths(anchor.identity):
        if other.place == where or entry_hash_of(session, other.mark.entry_id) != other.mark.entry_hash:
            continue
        with suppress(OSError):
            if path.stat().st_mtime_ns > since and _still_there(other.place):
                return True
    return False


def _copy_problems(session: Session, identity: str, where: str, last: int) -> list[str]:
    """A copy never written here, against what was anchored for its log at its other places. A copy
    whose log went its own way (worked on elsewhere: its newest entry is not in that other file's log)
    is not compared with that file; one that is that file's log cut short, or an older copy, is named."""
    others = [a for a in _anchors_of(identity) if a.place != where]
    newest = entry_hash_of(session, last) if last else None
    for other in others:
        if (other.mark.entry_id, other.mark.entry_hash) == (last, newest) and _still_there(other.place):
            return []  # a copy of that file as it is: nothing of its was cut
    problems = []
    for other in others:
        found = entry_hash_of(session, other.mark.entry_id)
        if found == other.mark.entry_hash:
            continue
        if newest is not None and _went_its_own_way(other.place, last, newest):
            continue  # worked on apart from that file: copies of one project are not compared
        what, there = describe(other.mark), _shown(other.place)
        if found is None and last < other.mark.entry_id:
            problems.append(
                f"this copy's log ends at entry {last}, but {what} was in the project at {there} when this "
                "computer recorded it: entries were cut off this copy, or it is an older copy"
            )
        else:
            problems.append(
                f"{what}, which this computer recorded in the project at {there}, is not in this copy as it "
                "was: this copy's log was rewritten from there"
            )
    return problems


def _went_its_own_way(place: str, last: int, newest: str) -> bool:
    """Whether the file at `place` (still there, readable) does not hold this copy's newest entry (`last`,
    with hash `newest`): the copy was written apart from it. False when that cannot be told."""
    import sqlite3

    path = _sqlite_file(place)
    if path is None or not path.is_file():
        return False
    try:
        with closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, timeout=1)) as db:
            row = db.execute("SELECT hash FROM audit_log WHERE id = ?", (last,)).fetchone()
    except (sqlite3.Error, OSError, ValueError):
        return False  # encrypted, damaged or busy: compared as before
    return row is None or row[0] != newest


def _still_there(place: str) -> bool:
    path = _sqlite_file(place)
    return path is None or path.is_file()  # a moved file's old place vouches for nothing now


def _sqlite_file(place: str) -> Path | None:
    if not place.startswith("sqlite:///"):
        return None
    return Path(make_url(place).database or "")  # a place is a rendered URL: `%` and `?` written escaped


def _shown(place: str) -> str:
    return str(_sqlite_file(place) or place)


def describe(mark: EntryMark) -> str:
    """An entry as a sentence names it: its number, its kind, whose and when."""
    kind = KINDS.get(mark.action) or next(
        (words for prefix, words in KIND_PREFIXES.items() if mark.action.startswith(prefix)), f"a {mark.action!r} entry"
    )
    if not mark.action:
        return f"entry {mark.entry_id} ({kind}, {mark.at} UTC)"
    what = f"{mark.action} {mark.entity} {mark.entity_id}"
    return f"entry {mark.entry_id} ({kind}: {what}, by {mark.actor}, {mark.at} UTC)"


# ---------------------------------------------------------------- restoring


def move_place(url: str, to: str | None) -> EntryMark | None:
    """The file at `url` is being replaced: its anchors go to `to`, where it is kept aside (or are
    forgotten). Returns the newest entry anchored there: what the replacement takes back."""
    flush()
    where = place_of(url)
    _forget_cached(where)
    newest: EntryMark | None = None
    for path, anchor in _anchors_at(where):
        if newest is None or anchor.mark.entry_id > newest.entry_id:
            newest = anchor.mark
        if to is not None:
            _record(Anchor(identity=anchor.identity, place=place_of(to), mark=anchor.mark))
        path.unlink(missing_ok=True)
    _forget_legacy(where, None if to is None else place_of(to))
    return newest
