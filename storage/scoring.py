"""LeMAJ scores of every answer and rater, and their means over a slice, computed with numpy on the
label columns (storage/columns.py): the same figures as the SQL of storage/analytics.py, which a
million data points kept busy for seconds.

A score whose denominator is 0 is undefined (NaN here, None in rows), never 0, and a slice's mean
leaves out the answers whose score is undefined, as SQL's AVG does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from sqlalchemy import Connection, select
from sqlalchemy.orm import Session

from storage import columns
from storage.schema import AnswerRow, DocumentRow, QuestionRow, RaterRow
from storage.slices import slice_column


@dataclass(frozen=True)
class ScoreTable:
    """One entry per (answer, rater) pair with at least one label, ordered by answer id, then rater name."""

    answer_ids: list[str]
    raters: list[str]
    counts: np.ndarray  # (pairs, 4): correct, incorrect, irrelevant, missing
    correctness: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    answer: np.ndarray  # index into `answers`, per pair
    answers: list[str]  # every answer with a label

    def __len__(self) -> int:
        return len(self.answer_ids)

    def only(self, rater: str) -> ScoreTable:
        """The pairs of one rater (a rater's scores do not depend on the others' tags)."""
        keep = np.array([r == rater for r in self.raters], dtype=bool)
        return ScoreTable(
            answer_ids=[a for a, k in zip(self.answer_ids, keep.tolist(), strict=True) if k],
            raters=[rater] * int(keep.sum()),
            counts=self.counts[keep],
            correctness=self.correctness[keep],
            precision=self.precision[keep],
            recall=self.recall[keep],
            f1=self.f1[keep],
            answer=self.answer[keep],
            answers=self.answers,
        )

    def answers_where(self, rater: str, where: np.ndarray) -> set[str]:
        """The answers where `rater`'s pair meets `where` (a mask over the pairs)."""
        pairs = np.flatnonzero(where & (np.array(self.raters, dtype=object) == rater))
        return {self.answers[a] for a in self.answer[pairs].tolist()}

    def rows(self) -> list[tuple[Any, ...]]:
        """(answer id, rater, correct, incorrect, irrelevant, missing, correctness, precision, recall,
        f1) per pair, None for an undefined score."""
        return list(zip(*self.columns(), strict=True))

    def columns(self) -> list[list[Any]]:
        """The fields of `rows`, one plain Python list each, built column by column (fast)."""
        counts = [self.counts[:, k].tolist() for k in range(4)]
        figures = [_nullable(v) for v in (self.correctness, self.precision, self.recall, self.f1)]
        return [self.answer_ids, self.raters, *counts, *figures]


def rater_names(session: Session) -> dict[int, str]:
    return dict(session.execute(select(RaterRow.id, RaterRow.name)).all())


def score_table(session: Session, rater_ids: list[int] | None = None) -> ScoreTable:
    return scores_of(columns.labels(session, rater_ids), rater_names(session))


def scores_of(labels: columns.Labels, names: dict[int, str]) -> ScoreTable:
    """Tag counts per (answer, rater) by one bincount, and the four LeMAJ scores from them."""
    by_name = sorted(np.flatnonzero(np.bincount(labels.rater)).tolist(), key=lambda r: names[r])
    slot_of = np.zeros(max(by_name, default=0) + 1, dtype=np.int64)
    slot_of[by_name] = np.arange(len(by_name))
    pair = labels.answer.astype(np.int64) * len(by_name) + slot_of[labels.rater]  # by answer, then rater name
    size, space = len(columns.TAGS), len(labels.answers) * len(by_name)
    if space <= 4 * len(labels) + 4096:  # a bincount over every (answer, rater): no sort of the labels
        counts = np.bincount(pair * size + labels.tag, minlength=space * size).reshape(-1, size)
        pairs = np.flatnonzero(counts.any(axis=1))
        counts = counts[pairs]
    else:  # few labels for many answers and raters: only the pairs that occur
        pairs, inverse = np.unique(pair, return_inverse=True)
        counts = np.bincount(inverse * size + labels.tag, minlength=len(pairs) * size).reshape(-1, size)
    c, i, irr, m = (counts[:, k].astype(float) for k in range(4))
    with np.errstate(divide="ignore", invalid="ignore"):
        correctness = np.where(c + i > 0, c / (c + i), np.nan)
        precision = np.where(c + irr > 0, c / (c + irr), np.nan)
        recall = np.where(c + m > 0, c / (c + m), np.nan)
        total = precision + recall
        f1 = np.where(total != 0, 2 * precision * recall / total, np.nan)  # NaN stays NaN
    answer = pairs // max(len(by_name), 1)
    rater = np.array(by_name, dtype=np.int64)[pairs % max(len(by_name), 1)]
    return ScoreTable(
        answer_ids=[labels.answers[a] for a in answer.tolist()],
        raters=[names[r] for r in rater.tolist()],
        counts=counts,
        correctness=correctness,
        precision=precision,
        recall=recall,
        f1=f1,
        answer=answer,
        answers=labels.answers,
    )


def slice_means(table: ScoreTable, keys: Mapping[str, str]) -> list[tuple[Any, ...]]:
    """Per (slice value, rater), in that order: pairs, summed counts and mean scores over the
    answers where each score is defined (None when it is defined for none)."""
    key_of_answer = [keys[a] for a in table.answers]
    values = sorted(set(key_of_answer))
    value_index = {v: n for n, v in enumerate(values)}
    raters = sorted(set(table.raters))
    rater_index = {r: n for n, r in enumerate(raters)}
    answer_value = np.array([value_index[v] for v in key_of_answer], dtype=np.int64)
    pair_rater = np.array([rater_index[r] for r in table.raters], dtype=np.int64)
    group = answer_value[table.answer] * len(raters) + pair_rater if len(table) else np.zeros(0, np.int64)
    size = len(values) * len(raters)
    n = np.bincount(group, minlength=size)
    sums = [np.bincount(group, weights=table.counts[:, k], minlength=size) for k in range(4)]
    means = []
    for figure in (table.correctness, table.precision, table.recall, table.f1):
        defined = ~np.isnan(figure)
        total = np.bincount(group[defined], weights=figure[defined], minlength=size)
        count = np.bincount(group[defined], minlength=size)
        means.append([None if k == 0 else t / k for t, k in zip(total.tolist(), count.tolist(), strict=True)])
    return [
        (
            values[g // len(raters)],
            raters[g % len(raters)],
            int(n[g]),
            *(int(s[g]) for s in sums),
            *(m[g] for m in means),
        )
        for g in np.flatnonzero(n).tolist()
    ]


def answer_keys(session: Session, by: str) -> Mapping[str, str]:
    """Each answer's value of a slice (its document, source, generator…), read once per committed
    state (storage/columns.py): the dashboard's scores and agreement are sliced alike."""

    def read(connection: Connection) -> Mapping[str, str]:
        rows = connection.execute(
            select(AnswerRow.id, slice_column(by))
            .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
            .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
        )
        return MappingProxyType({answer: str(key) for answer, key in rows.all()})  # kept: nobody may change it

    return columns.kept(session, f"answer keys by {by}", read)


def _nullable(values: np.ndarray) -> list[float | None]:
    out: list[float | None] = values.tolist()
    if np.isnan(values).any():
        out = [None if v != v else v for v in out]
    return out
