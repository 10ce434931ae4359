"""A project's labels as numpy columns, read in a few aggregate queries: what every figure of the
dashboard is computed from, a million data points in well under a second.

Read as rows, two million labels cost seconds: the database hands each row over as Python objects.
Asked for one `group_concat` per column (`string_agg` on PostgreSQL) it hands over a few long
strings, which numpy parses at C speed. A label travels as its data point's id, in one string per
rater and tag on SQLite (read along the index on (rater_id, tag, data_point_id)), packed with its
tag's index on PostgreSQL. The data points' answers come as a count per answer and the ids in answer
order. The concatenations of one query see the rows in the same order, so its columns line up.

A project's columns are kept while it is unchanged (`_Watch`), so the dashboard's figures,
computed one after another, read them once.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from sqlalchemy import Connection, Engine, Select, String, case, cast, event, func, literal_column, select
from sqlalchemy.orm import Session

from models.vocabulary import Tag
from storage.db import StorageError
from storage.schema import DataPointRow, LabelRow

T = TypeVar("T")
_KEY_SEPARATOR = "\x1f"  # never in an identity key (models/identity.py), unlike a comma in principle
TAGS = (Tag.CORRECT, Tag.INCORRECT, Tag.IRRELEVANT, Tag.MISSING)  # a label's tag is its index here


@dataclass(frozen=True)
class Labels:
    """One entry per label, grouped by rater. `answers` lists the answer ids with data points, in
    order (an answer is its index there); `item` says which labels are on the same data point (its
    identity, storage/points.py): labels with equal `item` are. Items are numbered 0, 1, 2… in the
    order of (answer id, identity key)."""

    answers: list[str]
    answer: np.ndarray  # index into answers
    rater: np.ndarray  # the rater who gave the label
    tag: np.ndarray  # index into TAGS
    point: np.ndarray  # the data point's id
    item: np.ndarray | None = None  # with items=True
    creator: np.ndarray | None = None  # with creators=True: the rater who recorded the data point
    # Per data point, labelled or not (with creators=True): its answer and the rater who recorded it.
    point_answer: np.ndarray | None = None
    point_creator: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.tag)


def labels(
    session: Session, rater_ids: list[int] | None = None, *, items: bool = False, creators: bool = False
) -> Labels:
    """Every label (of the raters given), with its answer, and if asked its data point's identity and
    the rater who recorded that data point. Read once per committed state of the project
    (`_Watch`): the dashboard's figures share one read."""
    connection = session.connection()
    watch = _watch(connection)  # asked once: on PostgreSQL each ask is a round trip

    def part(name: str, read: Callable[[Connection], T]) -> T:
        return _kept(watch, connection, name, read)

    if watch is None:  # the database picks the raters' labels
        rater, point, tag = _label_columns(connection, rater_ids)
    else:  # every rater's labels are kept: the figures ask for different raters
        rater, point, tag = part("labels", lambda c: _label_columns(c, None))
        if rater_ids is not None:
            keep = np.isin(rater, rater_ids)
            rater, point, tag = rater[keep], point[keep], tag[keep]
    answers, point_answer, ids = part("points", _points_by_answer)
    where = _positions(ids, point)
    found: dict[str, Any] = {"answers": answers, "rater": rater, "tag": tag, "point": point}
    found["answer"] = point_answer[where]
    if items:
        found["item"] = part("items", lambda c: _point_items(c, ids, point_answer))[where]
    if creators:
        point_creator = part("creators", lambda c: _point_creators(c, ids))
        found |= {"creator": point_creator[where], "point_answer": point_answer, "point_creator": point_creator}
    return Labels(**found)


def kept(session: Session, name: str, read: Callable[[Connection], T]) -> T:
    """What `read` gives, read once per committed state of the project (`_Watch`), where it can be
    kept: the figures computed one after another share one read. What is kept cannot be changed."""
    connection = session.connection()
    return _kept(_watch(connection), connection, name, read)


def _kept(watch: _Watch | None, connection: Connection, name: str, read: Callable[[Connection], T]) -> T:
    found = None if watch is None else watch.part(name, read)
    return read(connection) if found is None else found


def _point_items(connection: Connection, ids: np.ndarray, point_answer: np.ndarray) -> np.ndarray:
    """Per data point, in the order of `ids`, its item: the number of its (answer, identity key) in
    their order, a point with no key being an item of its own."""
    if connection.dialect.name == "postgresql":
        return _point_items_by_key(connection, ids, point_answer)
    # SQLite reads `ids` along the index on (answer_id, point_key): here the length of each run of
    # equal keys along it, negative for a run of unkeyed points; no key travels, none is compared.
    n = case((DataPointRow.point_key.is_(None), -func.count()), else_=func.count())
    key = (DataPointRow.answer_id, DataPointRow.point_key)
    runs = _ints(_in_order(connection, select(n.label("value"), *key).group_by(*key), key))
    singles = runs < 0
    sizes = np.repeat(np.where(singles, 1, runs), np.where(singles, -runs, 1))  # per item
    if sizes.sum() != len(ids):
        raise StorageError("data points changed while the labels were read: read them again")
    return np.repeat(np.arange(len(sizes)), sizes)


def _point_items_by_key(connection: Connection, ids: np.ndarray, point_answer: np.ndarray) -> np.ndarray:
    """`_point_items` on PostgreSQL, whose index scans visit the table at random: the keys, by a
    plain scan of the table, numbered here."""
    import pandas as pd

    read = connection.execute(
        select(
            _concat(connection, DataPointRow.id),
            _concat(connection, func.coalesce(DataPointRow.point_key, ""), _KEY_SEPARATOR),
        )
    ).one()
    scanned = _ints(read[0])
    if len(scanned) != len(ids):
        raise StorageError("data points changed while the labels were read: read them again")
    # An empty project has no keys at all, not one empty key ("".split gives [""]).
    keys = np.array(read[1].split(_KEY_SEPARATOR) if read[1] is not None else [], dtype=object)
    keys = keys[_positions(scanned, ids)]
    key, known = pd.factorize(keys, sort=True)
    unkeyed = keys == ""
    key[unkeyed] = len(known) + np.flatnonzero(unkeyed)  # each its own, after the keys
    return np.unique(point_answer * (len(known) + len(ids)) + key, return_inverse=True)[1]


def _point_creators(connection: Connection, ids: np.ndarray) -> np.ndarray:
    """Per data point, in the order of `ids`, the rater who recorded it (in no index), by a plain
    scan of the table: SQLite's is in id order, so only the raters travel; PostgreSQL's is in no
    order (an aggregate's ORDER BY sorted them: 0.7 s at 2 M), so the ids travel beside them."""
    if connection.dialect.name == "postgresql":
        read = connection.execute(
            select(_concat(connection, DataPointRow.id), _concat(connection, DataPointRow.rater_id))
        )
        joined_ids, joined_raters = read.one()
        scanned, raters = _ints(joined_ids), _ints(joined_raters)
    else:  # NOT INDEXED: the table itself, whose rows are in rowid (id) order, never an index's order
        scan = "SELECT group_concat(rater_id) FROM data_points NOT INDEXED"
        raters = _ints(connection.exec_driver_sql(scan).scalar())
        scanned = _sorted(ids)
    if len(raters) != len(ids):
        raise StorageError("data points changed while the labels were read: read them again")
    creators: np.ndarray = raters[_positions(scanned, ids)]
    return creators


class _Watch:
    """What was read of one project at its latest committed state, on a connection of our own that
    never writes. A version of that state is asked there, in the same transaction as each part is
    read (no older snapshot of a session's can linger), so a part kept under a version is exactly
    what a read would give then. SQLite's data_version changes whenever any connection of any process
    commits. On PostgreSQL the version is the transaction's snapshot, read in REPEATABLE READ: two
    equal snapshots see the same transactions committed, and a snapshot changes whenever a
    transaction that writes starts or ends, in any database of the server (more often than needed,
    never less, and nothing written for it)."""

    def __init__(self, engine: Engine) -> None:
        if engine.dialect.name == "postgresql":
            reader: Engine = engine.execution_options(isolation_level="REPEATABLE READ")
            self._ask = "SELECT CAST(pg_current_snapshot() AS text)"
        else:
            reader, self._ask = engine, "PRAGMA data_version"
        self._connection: Connection | None = reader.connect()
        self._connection.detach()  # out of the pool: SQLite counts its version per connection
        self._lock = threading.Lock()
        self._version: Any = None
        self._parts: dict[str, Any] = {}
        event.listen(engine, "engine_disposed", self._close)

    def part(self, name: str, read: Callable[[Connection], Any]) -> Any:
        """The part, read now if it is not kept for the current state; None once closed."""
        with self._lock:
            if self._connection is None:
                return None
            try:
                version = self._connection.exec_driver_sql(self._ask).scalar()
                if version != self._version:
                    self._version, self._parts = version, {}
                if name not in self._parts:
                    self._parts[name] = _read_only(read(self._connection))
                return self._parts[name]
            finally:
                self._connection.rollback()  # no read left open: the next one sees the latest commit

    def _close(self, engine: Engine) -> None:
        """With the engine's pool: the last connection to close folds the write-ahead log back in."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
            self._connection, self._parts = None, {}
        with _watches_lock:  # an engine used again after dispose() gets a new watch
            if _watches.get(engine) is self:
                del _watches[engine]


def _read_only(part: Any) -> Any:
    """A part kept for later calls (an array or a tuple): its arrays cannot be changed by the figures
    that use them."""
    for value in part if isinstance(part, tuple) else (part,):
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return part


_watches: weakref.WeakKeyDictionary[Engine, _Watch] = weakref.WeakKeyDictionary()
_watches_lock = threading.Lock()


def _watch(connection: Connection) -> _Watch | None:
    """The project's watch; None in memory, and where the session has written and not committed
    (what it reads is its own)."""
    if connection.dialect.name == "postgresql":
        if connection.exec_driver_sql("SELECT pg_current_xact_id_if_assigned()").scalar() is not None:
            return None
    else:
        dbapi = connection.connection.dbapi_connection
        if connection.engine.url.database in (None, "", ":memory:") or dbapi is None or dbapi.in_transaction:
            return None
    with _watches_lock:
        if connection.engine not in _watches:
            _watches[connection.engine] = _Watch(connection.engine)
        return _watches[connection.engine]


def _concat(connection: Connection, column: Any, separator: str = ",") -> Any:
    """One string of a column's values, in the order the rows come. The separator is written into
    the SQL: as a bound parameter it costs SQLite a fifth more time."""
    between: Any = literal_column(f"'{separator}'")  # a comma or _KEY_SEPARATOR: no quote to escape
    if connection.dialect.name == "postgresql":
        return func.string_agg(cast(column, String), between)
    return func.group_concat(column, between)


def _label_columns(connection: Connection, rater_ids: list[int] | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rater, data point id and tag index of every label, a rater's in data point order. On SQLite one
    string of data point ids per rater and tag, read along the index on (rater_id, tag, data_point_id)
    (migration 0024): nothing is computed per label, half the time of packing each label's tag into its
    number. A word that is no tag is caught by name (the CHECK constraint on labels.tag keeps such words out)."""
    if connection.dialect.name == "postgresql":
        return _packed_label_columns(connection, rater_ids)
    statement = (
        select(LabelRow.rater_id, LabelRow.tag, _concat(connection, LabelRow.data_point_id))
        .group_by(LabelRow.rater_id, LabelRow.tag)
        .order_by(LabelRow.rater_id, LabelRow.tag)
    )
    if rater_ids is not None:
        statement = statement.where(LabelRow.rater_id.in_(rater_ids))
    index = {t.value: n for n, t in enumerate(TAGS)}
    per_rater: dict[int, list[tuple[int, np.ndarray]]] = {}
    for rater_id, tag, joined in connection.execute(statement).all():
        if tag not in index:
            raise StorageError("a label carries a tag that is not a LeMAJ tag")
        per_rater.setdefault(rater_id, []).append((index[tag], _ints(joined)))
    raters, points, tags = [], [], []
    for rater_id, groups in per_rater.items():
        mine = np.concatenate([p for _, p in groups])
        order = np.argsort(mine, kind="stable")  # the tags' sorted runs merged: a rater's in data point order
        points.append(mine[order])
        tags.append(np.repeat(np.array([t for t, _ in groups], dtype=np.int8), [len(p) for _, p in groups])[order])
        raters.append(np.full(len(mine), rater_id, dtype=np.int64))
    if not raters:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int8)
    return np.concatenate(raters), np.concatenate(points), np.concatenate(tags)


def _packed_label_columns(
    connection: Connection, rater_ids: list[int] | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_label_columns` on PostgreSQL: per rater, one count and one string of data point id × 4 + tag
    index. A word that is no tag has no index, so it goes missing from the string and the count catches it."""
    # Constants written into the SQL, as in `_concat`.
    code = case(
        {literal_column(f"'{t.value}'"): literal_column(str(n)) for n, t in enumerate(TAGS)}, value=LabelRow.tag
    )
    point_and_tag = LabelRow.data_point_id * literal_column(str(len(TAGS))) + code
    statement = (
        select(LabelRow.rater_id, func.count(), _concat(connection, point_and_tag))
        .group_by(LabelRow.rater_id)
        .order_by(LabelRow.rater_id)
    )
    if rater_ids is not None:
        statement = statement.where(LabelRow.rater_id.in_(rater_ids))
    per_rater = connection.execute(statement).all()
    packed = [_ints(text) for _, _, text in per_rater]
    if any(len(codes) != count for codes, (_, count, _) in zip(packed, per_rater, strict=True)):
        raise StorageError("a label carries a tag that is not a LeMAJ tag")
    rater = np.repeat(np.array([r for r, _, _ in per_rater], dtype=np.int64), [n for _, n, _ in per_rater])
    point, tag = np.divmod(np.concatenate(packed) if packed else np.zeros(0, dtype=np.int64), len(TAGS))
    return rater, point, tag.astype(np.int8)


def _points_by_answer(connection: Connection) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The answers with data points, in Python's order; each data point's answer (an index into
    them) and id, in answer order: on SQLite each answer's ids along the index on (answer_id,
    point_key) (what `_point_items` counts along), all of it in one scan and three strings; on
    PostgreSQL each answer's ids in one query (an aggregate's ORDER BY sorts there: at 2 M ids it took
    seconds)."""
    per_answer = select(DataPointRow.answer_id, func.count()).group_by(DataPointRow.answer_id)
    if connection.dialect.name == "postgresql":
        found = sorted(  # in Python's order: no collation asked of the server
            _rows(connection, per_answer.add_columns(_concat(connection, DataPointRow.id))), key=lambda row: row[0]
        )
        answers, counts = [row[0] for row in found], [row[1] for row in found]
        ids = _ints(",".join(joined for *_, joined in found))
    else:
        answers, counts, ids = _points_along_key(connection)
    point_answer = np.repeat(np.arange(len(answers)), counts)
    if len(point_answer) != len(ids):
        raise StorageError("data points changed while the labels were read: read them again")
    return answers, point_answer, ids


def _points_along_key(connection: Connection) -> tuple[list[str], Any, np.ndarray]:
    """`_points_by_answer` on SQLite: the answers, their counts and ids in one scan of the index on
    (answer_id, point_key), as three strings (a row per answer cost a third more, a second scan for the
    ids as much again). An answer id with the separator in it would split wrong: then rows, as before."""
    answers_joined, counts_joined, ids_joined, found = connection.exec_driver_sql(
        f"SELECT group_concat(answer_id, '{_KEY_SEPARATOR}'), group_concat(n), group_concat(ids), count(*) "
        "FROM (SELECT answer_id, count(*) AS n, group_concat(id) AS ids "
        "FROM data_points INDEXED BY ix_data_points_answer_key GROUP BY answer_id ORDER BY answer_id)"
    ).one()
    answers = answers_joined.split(_KEY_SEPARATOR) if answers_joined is not None else []
    if len(answers) != found:
        per_answer = select(DataPointRow.answer_id).group_by(DataPointRow.answer_id).order_by(DataPointRow.answer_id)
        answers = [row[0] for row in _rows(connection, per_answer)]
    return answers, _ints(counts_joined), _ints(ids_joined)


def _in_order(connection: Connection, rows: Select[*tuple[Any, ...]], order: tuple[Any, ...]) -> str | None:
    """On SQLite, one string of the `value` column of `rows`, in the order of its columns `order`: it
    concatenates in its subquery's order (its group_concat takes no ORDER BY before 3.44)."""
    ordered = rows.order_by(*order).subquery()
    return connection.execute(select(_concat(connection, ordered.c.value))).scalar()


def _rows(connection: Connection, statement: Select[*tuple[Any, ...]]) -> list[Any]:
    """A statement's rows as the driver's own tuples: SQLAlchemy's rows cost a third more time at
    100,000 rows. The statement carries no parameters."""
    cursor = connection.connection.cursor()
    try:
        cursor.execute(str(statement.compile(dialect=connection.dialect)))
        return list(cursor.fetchall())
    finally:
        cursor.close()


def _ints(text: str | None) -> np.ndarray:
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)


def _sorted(ids: np.ndarray) -> np.ndarray:
    """Distinct ids in increasing order; dense ones by marking them, faster than a sort."""
    if not len(ids) or ids.max() >= 4 * len(ids) + 1024:
        return np.sort(ids)
    present = np.zeros(int(ids.max()) + 1, dtype=bool)
    present[ids] = True
    return np.flatnonzero(present)


def _positions(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of `wanted` is in `ids` (every one is there: a label's data point exists)."""
    if not len(wanted):
        return np.zeros(0, dtype=np.int64)
    if not len(ids):
        raise StorageError("a label refers to a data point that is not in the project")
    if ids.max() < 4 * len(ids) + 1024:  # ids are dense: a lookup table beats a sort
        table = np.full(max(int(ids.max()), int(wanted.max())) + 1, -1, dtype=np.int64)
        table[ids] = np.arange(len(ids))
        found: np.ndarray = table[wanted]
    else:
        order = np.argsort(ids, kind="stable")
        found = order[np.minimum(np.searchsorted(ids, wanted, sorter=order), len(ids) - 1)]
        found[ids[found] != wanted] = -1
    if (found < 0).any():
        raise StorageError("a label refers to a data point that is not in the project")
    return found
