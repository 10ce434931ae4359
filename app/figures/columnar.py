"""Scores, agreement and judge–human alignment on label columns (storage/columns.py): the same figures
as the SQL and row-by-row definitions kept as references in tests/reference_figures.py, at a million data
points in about a second; tests check that both agree. Matching points by their words stays the fallback for
the few answers that need judgement (points matched by their words rather than their identity).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from storage import columns, scoring

FIGURES = ("correct", "incorrect", "irrelevant", "missing", "correctness", "precision", "recall", "f1")
ALL_RATERS = "all raters"


def score_dicts(table: scoring.ScoreTable, by: str, keys: Mapping[str, str] | None) -> list[dict[str, Any]]:
    """Rows as the CLI prints them: per answer and rater, or a slice's means per rater."""
    if by == "answer":  # dict displays: twice as fast as dict(zip(…)) over 200,000 rows
        return [
            {
                "answer_id": a,
                "rater": r,
                "correct": c,
                "incorrect": i,
                "irrelevant": irr,
                "missing": m,
                "correctness": correctness,
                "precision": precision,
                "recall": recall,
                "f1": f1,
            }
            for a, r, c, i, irr, m, correctness, precision, recall, f1 in zip(*table.columns(), strict=True)
        ]
    assert keys is not None
    rows = scoring.slice_means(table, keys)
    if by == "rater":
        return [{"answers": n, "rater": rater, **dict(zip(FIGURES, rest, strict=True))} for _, rater, n, *rest in rows]
    return [
        {by: key, "answers": n, "rater": rater, **dict(zip(FIGURES, rest, strict=True))}
        for key, rater, n, *rest in rows
    ]


def scores_by_slice(session: Any, slices: tuple[str, ...]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The dashboard's scores from one read of the labels: per slice, for all raters and for each one."""
    table = scoring.score_table(session)
    keys = {by: scoring.answer_keys(session, by) for by in slices}
    per_rater = {ALL_RATERS: table} | {name: table.only(name) for name in sorted(set(table.raters))}
    return {by: {choice: score_dicts(part, by, keys[by]) for choice, part in per_rater.items()} for by in slices}


def wide_matrix(labels: columns.Labels, rater_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Items (rows, in (answer id, identity key) order) by raters (columns, in the order given):
    the index of each rater's tag, NaN where the rater did not tag the item; and each item's answer."""
    assert labels.item is not None, "load the labels with items=True"
    keep = np.isin(labels.rater, rater_ids)
    item, rater, tag, answer = labels.item[keep], labels.rater[keep], labels.tag[keep], labels.answer[keep]
    used = np.zeros(int(item.max()) + 1 if len(item) else 0, dtype=bool)  # items are numbered densely: no sort
    used[item] = True
    row = (np.cumsum(used) - 1)[item]
    items = np.flatnonzero(used)
    slot_of = {r: n for n, r in enumerate(rater_ids)}
    slot = np.array([slot_of[r] for r in rater_ids], dtype=np.int64)[
        np.searchsorted(np.array(rater_ids), rater, sorter=np.argsort(rater_ids))
    ]
    wide = np.full((len(items), len(rater_ids)), np.nan)
    wide[row[::-1], slot[::-1]] = tag[::-1]  # the first label wins, as pandas' pivot "first"
    item_answer = np.zeros(len(items), dtype=np.int64)
    item_answer[row] = answer
    return wide, item_answer


def own_points(labels: columns.Labels, rater_id: int) -> np.ndarray:
    """Which labels are a rater's tags on data points that rater recorded (their own view of an answer)."""
    assert labels.creator is not None, "load the labels with creators=True"
    return (labels.rater == rater_id) & (labels.creator == rater_id)


def untagged(labels: columns.Labels, rater_id: int) -> dict[str, int]:
    """Per answer, how many of the data points a rater recorded it left without a tag (the verifier
    where it neither confirms nor refutes), where it left any: the last of storage.reviews.judge_counts'
    counts. A rater tags a point once at most (labels are unique by point and rater)."""
    assert labels.point_answer is not None and labels.point_creator is not None, "load the labels with creators=True"
    size = len(labels.answers)
    recorded = np.bincount(labels.point_answer[labels.point_creator == rater_id], minlength=size)
    tagged = np.bincount(labels.answer[own_points(labels, rater_id)], minlength=size)
    return {labels.answers[a]: int(recorded[a] - tagged[a]) for a in np.flatnonzero(recorded > tagged).tolist()}


def key_matches(labels: columns.Labels, judge_id: int, human_id: int) -> dict[str, Any]:
    """The judge's and the human's tagged points paired by identity, in the answers where both
    recorded points. `pairs` holds (judge label, human label) indexes; `judge_alone` and
    `human_alone` the tagged points with no partner; `untidy` the answers that need the row-by-row
    matching by words (points with no partner on both sides, or one rater's two points on one item)."""
    assert labels.item is not None and labels.point_creator is not None and labels.point_answer is not None
    # Answers are numbered densely: marks per answer, where intersecting two million numbers hashed them.
    size = len(labels.answers)
    recorded = [
        np.bincount(labels.point_answer[labels.point_creator == rater], minlength=size) > 0
        for rater in (judge_id, human_id)
    ]
    in_both_answers = recorded[0] & recorded[1]
    both = np.flatnonzero(in_both_answers)
    in_both = in_both_answers[labels.answer]
    judge = np.flatnonzero(own_points(labels, judge_id) & in_both)
    human = np.flatnonzero(own_points(labels, human_id) & in_both)
    j_order = judge[np.argsort(labels.item[judge], kind="stable")]
    h_order = human[np.argsort(labels.item[human], kind="stable")]
    untidy: set[int] = set()
    for order in (j_order, h_order):  # one rater's two points on one item: neighbours once sorted
        items = labels.item[order]
        untidy |= set(labels.answer[order[np.flatnonzero(items[1:] == items[:-1])]].tolist())
    h_items = labels.item[h_order]
    at = np.minimum(np.searchsorted(h_items, labels.item[j_order]), max(len(h_order) - 1, 0))
    paired = h_items[at] == labels.item[j_order] if len(h_order) else np.zeros(len(j_order), dtype=bool)
    h_paired = np.zeros(len(h_order), dtype=bool)
    h_paired[at[paired]] = True
    judge_alone, human_alone = j_order[~paired], h_order[~h_paired]
    untidy |= set(labels.answer[judge_alone].tolist()) & set(labels.answer[human_alone].tolist())
    return {
        "answers": both,
        "pairs": np.stack([j_order[paired], h_order[at[paired]]], axis=1),
        "judge_alone": judge_alone,
        "human_alone": human_alone,
        "untidy": untidy,
    }


def confusion(truth: np.ndarray, predicted: np.ndarray, size: int) -> np.ndarray:
    """Rows: the truth (the human); columns: the prediction (the judge), as sklearn's confusion_matrix."""
    return np.bincount(truth.astype(np.int64) * size + predicted, minlength=size * size).reshape(size, size)
