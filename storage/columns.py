"""A project's labels as numpy columns, read in two aggregate queries: what every figure of the
dashboard is computed from, a million data points in about a second.

Read as rows, two million labels cost seconds: the database hands each row over as Python objects.
Asked for one `group_concat` per column (`string_agg` on PostgreSQL) it hands over a few long
strings, which numpy parses at C speed. The concatenations of one query see the rows in the same
order, so the columns line up; the data points are read grouped by answer, along the index on
(answer_id, point_key), so SQLite streams them without sorting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import String, cast, func, select
from sqlalchemy.orm import Session

from models.vocabulary import Tag
from storage.db import StorageError
from storage.schema import DataPointRow, LabelRow

TAGS = (Tag.CORRECT, Tag.INCORRECT, Tag.IRRELEVANT, Tag.MISSING)  # a label's tag is its index here
_KEY_SEPARATOR = "\x1f"  # never in an identity key (models/identity.py), unlike a comma in principle


@dataclass(frozen=True)
class Labels:
    """One entry per label. `answers` lists the answer ids in order (an answer is its index there);
    `item` says which labels are on the same data point (its identity, storage/points.py): labels
    with equal `item` are, and items sort as (answer id, identity key) do."""

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
    the rater who recorded that data point."""
    postgres = session.get_bind().dialect.name == "postgresql"

    def concat(column: Any, separator: str = ",") -> Any:
        if postgres:
            return func.string_agg(cast(column, String), separator)
        return func.group_concat(column, separator)

    statement = select(concat(LabelRow.data_point_id), concat(LabelRow.rater_id), concat(LabelRow.tag))
    if rater_ids is not None:
        statement = statement.where(LabelRow.rater_id.in_(rater_ids))
    connection = session.connection()
    point_ids, raters, tags = connection.execute(statement).one()

    columns = [DataPointRow.answer_id, func.count(), concat(DataPointRow.id)]
    if items:
        columns.append(concat(func.coalesce(DataPointRow.point_key, ""), _KEY_SEPARATOR))
    if creators:
        columns.append(concat(DataPointRow.rater_id))
    groups = sorted(  # Python's order on every store, whatever its collation
        connection.execute(select(*columns).group_by(DataPointRow.answer_id)).all(), key=lambda group: group[0]
    )
    answers = [group[0] for group in groups]
    point_answer = np.repeat(np.arange(len(groups)), [group[1] for group in groups])
    ids = _ints(",".join(group[2] for group in groups))

    point = _ints(point_ids)
    where = _positions(ids, point)
    found = {
        "answers": answers,
        "answer": point_answer[where],
        "rater": _ints(raters),
        "tag": _tags(tags or ""),
        "point": point,
    }
    if items:
        # An empty project has no keys at all, not one empty key ("".split gives [""]).
        joined = _KEY_SEPARATOR.join(group[3] for group in groups)
        keys = np.array(joined.split(_KEY_SEPARATOR) if groups else [], dtype=object)
        unkeyed = np.flatnonzero(keys == "")
        keys[unkeyed] = ["id:" + str(i) for i in ids[unkeyed].tolist()]  # as storage/analytics.item_labels
        import pandas as pd

        key_code, uniques = pd.factorize(keys, sort=True)
        found["item"] = (point_answer.astype(np.int64) * max(len(uniques), 1) + key_code)[where]
    if creators:
        point_creator = _ints(",".join(group[-1] for group in groups))
        found |= {"creator": point_creator[where], "point_answer": point_answer, "point_creator": point_creator}
    return Labels(**found)


def _ints(text: str | None) -> np.ndarray:
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)


def _positions(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of `wanted` is in `ids` (every one is there: a label's data point exists)."""
    if not len(wanted):
        return np.zeros(0, dtype=np.int64)
    if ids.max() < 4 * len(ids) + 1024:  # ids are dense: a lookup table beats a sort
        table = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
        table[ids] = np.arange(len(ids))
        found: np.ndarray = table[wanted]
    else:
        order = np.argsort(ids, kind="stable")
        found = order[np.minimum(np.searchsorted(ids, wanted, sorter=order), len(ids) - 1)]
        found[ids[found] != wanted] = -1
    if (found < 0).any():
        raise StorageError("a label refers to a data point that is not in the project")
    return found


# A tag is told by its length and first letter, so parsing stays in numpy. The CHECK constraint on
# labels.tag keeps any other word out of the database.
_SIGNATURES = np.full(16 * 256, -1, dtype=np.int8)
for _code, _tag in enumerate(TAGS):
    assert _SIGNATURES[len(_tag.value) * 256 + ord(_tag.value[0])] < 0, "two tags share a length and a first letter"
    _SIGNATURES[len(_tag.value) * 256 + ord(_tag.value[0])] = _code


def _tags(text: str) -> np.ndarray:
    if not text:
        return np.zeros(0, dtype=np.int8)
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    cuts = np.flatnonzero(data == ord(","))
    starts = np.concatenate(([0], cuts + 1))
    lengths = np.diff(np.concatenate((starts, [len(data) + 1]))) - 1
    codes: np.ndarray = _SIGNATURES[np.minimum(lengths, 15) * 256 + data[starts]]
    if (codes < 0).any():
        raise StorageError("a label carries a tag that is not a LeMAJ tag")
    return codes
