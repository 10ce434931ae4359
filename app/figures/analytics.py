"""What a review tells a legal AI team: scores, inter-annotator agreement, how far the judge can be
trusted, and which answers can skip a human (LeMAJ 3.2, 4.2–4.3, 5; DeCE 3; two-dimensional 5)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.errors import AssayError
from app.figures import columnar
from app.figures.rater_names import jurors_of
from app.project import Project
from models.vocabulary import Tag
from storage import analytics, collector, columns, scoring
from storage.adjudication import CONSENSUS

TAG_ORDER = [Tag.CORRECT, Tag.INCORRECT, Tag.IRRELEVANT, Tag.MISSING]


def bucket(score: float | None) -> float | None:
    """Round down to the nearest quarter (LeMAJ 4.2.2): 0.8 -> 0.75."""
    return None if score is None else math.floor(score * 4 + 1e-9) / 4


def holistic(rating: int | None) -> float | None:
    """LeMAJ Table 8: 1..5 -> 0, .25, .5, .75, 1."""
    return None if rating is None else (rating - 1) / 4


# ---------------------------------------------------------------- scores


@collector.held_off()  # rows and dicts by the hundred thousand (storage/collector.py)
def scores(project: Project, by: str = "answer", raters: list[str] | None = None) -> list[dict[str, Any]]:
    if by not in analytics.SLICES:
        raise AssayError(f"scores by {by!r}: choose one of {', '.join(analytics.SLICES)}")
    with project.sessions() as session:
        ids = analytics.rater_ids(session, raters)
        if raters and len(ids) != len(raters):
            raise AssayError(f"no rater named {', '.join(sorted(set(raters) - set(ids)))}")
        table = scoring.score_table(session, list(ids.values()) if raters else None)
        keys = None if by == "answer" else scoring.answer_keys(session, by)
    return columnar.score_dicts(table, by, keys)


# ---------------------------------------------------------------- agreement


def chance_corrected(table: np.ndarray, weights: np.ndarray | None = None) -> dict[str, float | None]:
    """Percent agreement, Gwet's AC1 and Fleiss' kappa with missing ratings, as Gwet's Handbook of
    Inter-Rater Reliability (2014, ch. 2) computes them: `table[i, k]` counts the raters who put
    unit i in category k (`weights[i]` units alike, one each by default). Observed agreement is over
    the units two or more raters rated; the category shares behind chance agreement are over every
    unit anyone rated (Fleiss' kappa in Gwet's generalisation, so it uses all the data, not only the
    units every rater rated). irrCAC, the reference implementation, pins scipy 1.12 and pandas < 3,
    so it cannot be installed here."""
    q = table.shape[1]
    w = np.ones(len(table)) if weights is None else weights.astype(float)
    raters = table.sum(axis=1)
    rated, shared = (raters >= 1) & (w > 0), (raters >= 2) & (w > 0)
    if q < 2 or not shared.any():
        return {"percent_agreement": None, "gwet_ac1": None, "fleiss_kappa": None}
    pairs = raters[shared] * (raters[shared] - 1)
    pa = float(w[shared] @ ((table[shared] * (table[shared] - 1)).sum(axis=1) / pairs) / w[shared].sum())
    pi = w[rated] @ (table[rated] / raters[rated, None]) / w[rated].sum()
    pe_gwet = float((pi * (1 - pi)).sum() / (q - 1))
    pe_fleiss = float((pi**2).sum())
    return {
        "percent_agreement": pa,
        "gwet_ac1": None if pe_gwet >= 1 else (pa - pe_gwet) / (1 - pe_gwet),
        "fleiss_kappa": None if pe_fleiss >= 1 else (pa - pe_fleiss) / (1 - pe_fleiss),
    }


def gwet_ac1(table: np.ndarray) -> float | None:
    return chance_corrected(table)["gwet_ac1"]


def cohen_kappa(codes: np.ndarray, q: int, *, ordinal: bool = False) -> float | None:
    """Cohen's kappa of two raters (columns) with missing ratings (Gwet 2014, ch. 2): observed
    agreement over the units both rated, chance agreement from each rater's own category shares over
    every unit that rater rated; linear agreement weights when the categories are ordered. With no
    missing rating it is the classical kappa (sklearn's cohen_kappa_score)."""
    a, b = codes[:, 0], codes[:, 1]
    both = ~np.isnan(a) & ~np.isnan(b)
    if not both.any():
        return None
    k = np.arange(q)
    weights = 1 - np.abs(k[:, None] - k[None, :]) / (q - 1) if ordinal and q > 1 else np.eye(q)
    pa = float(weights[a[both].astype(int), b[both].astype(int)].mean())
    share_a = np.bincount(a[~np.isnan(a)].astype(int), minlength=q) / (~np.isnan(a)).sum()
    share_b = np.bincount(b[~np.isnan(b)].astype(int), minlength=q) / (~np.isnan(b)).sum()
    pe = float(share_a @ weights @ share_b)
    return None if pe >= 1 else (pa - pe) / (1 - pe)


def agreement_of(matrix: Any, categories: Sequence[Any], *, ordinal: bool = False) -> dict[str, Any]:
    """Agreement over items (rows) rated by raters (columns; None or NaN = not rated). `matrix` holds
    category values (a list of lists) or, faster, category indexes (a float array with NaN). An item
    rated by two or more raters counts (`n_items`); items rated once still inform chance agreement,
    as in the textbook (Gwet 2014) and irrCAC."""
    codes = _codes(matrix, categories)
    return _agreement(codes, Units.of(category_table(codes, len(categories))), ordinal=ordinal)


def _agreement(codes: np.ndarray, units: Units, *, ordinal: bool = False) -> dict[str, Any]:
    """`agreement_of` the `codes`, whose category table is grouped as `units`."""
    stats = table_agreement(units.table, units.count)
    result = {"n_items": stats["n_items"]}
    result |= dict.fromkeys(("percent_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1"))
    result |= stats
    if not result["n_items"]:
        return result
    if codes.shape[1] == 2:
        result["cohen_kappa"] = cohen_kappa(codes, units.table.shape[1], ordinal=ordinal)
    pairable = units.table[units.table.sum(axis=1) >= 2]
    if (pairable.sum(axis=0) > 0).sum() > 1:
        result["krippendorff_alpha"] = krippendorff_alpha(units.table, ordinal=ordinal, weights=units.count)
    return result


def category_table(codes: np.ndarray, categories: int) -> np.ndarray:
    """`table[i, k]`: how many raters put item i (a row of `codes`) in category k."""
    rows, raters = np.nonzero(~np.isnan(codes))
    flat = rows * categories + codes[rows, raters].astype(np.int64)
    return np.bincount(flat, minlength=len(codes) * categories).reshape(len(codes), categories)


@dataclass(frozen=True)
class Units:
    """Units grouped by their row of a category table: every coefficient sums over units, so each
    distinct row is weighed once by how many units share it (a million units of two raters and four
    tags have at most 15 rows: the sums over units took a second)."""

    table: np.ndarray  # the distinct rows, in increasing order
    count: np.ndarray  # how many units have each
    kind: np.ndarray  # each unit's row

    @staticmethod
    def of(table: np.ndarray) -> Units:
        base, size = int(table.max(initial=0)) + 1, table.shape[1]
        if base**size > 4 * len(table) + 4096:  # more possible rows than units: sorted, not counted
            rows, kind, count = np.unique(table, axis=0, return_inverse=True, return_counts=True)
            return Units(rows, count, kind.reshape(-1))
        # Each row as a number in base `base`, its first column the highest digit: the rows in order.
        code = table.astype(np.int64) @ base ** np.arange(size - 1, -1, -1, dtype=np.int64)
        count = np.bincount(code, minlength=1)
        present = np.flatnonzero(count)
        kind = (np.cumsum(count > 0) - 1)[code]
        return Units(present[:, None] // base ** np.arange(size - 1, -1, -1) % base, count[present], kind)


def table_agreement(table: np.ndarray, weights: np.ndarray | None = None) -> dict[str, Any]:
    """Items rated twice or more, percent agreement, Gwet's AC1 and Fleiss' kappa of a category
    table (`weights[i]` items with row i, one each by default); items nobody rated are left out,
    items rated once inform chance agreement only."""
    rated = table.sum(axis=1)
    w = np.ones(len(table), dtype=np.int64) if weights is None else weights
    result: dict[str, Any] = {"n_items": int(w[rated >= 2].sum())}
    if not result["n_items"]:
        return result | dict.fromkeys(("percent_agreement", "fleiss_kappa", "gwet_ac1"))
    return result | chance_corrected(table[rated >= 1], w[rated >= 1])


def krippendorff_alpha(table: np.ndarray, *, ordinal: bool = False, weights: np.ndarray | None = None) -> float:
    """Krippendorff's alpha from `table[i, k]`, the number of raters who put unit i in category k
    (nominal, or ordinal in the categories' order; `weights[i]` units alike, one each by default),
    as the krippendorff package computes it: its coincidence matrix adds one (V, V) matrix per unit,
    seconds at a million units; here the integer products are added per number of raters m, then
    divided by m - 1 once. Where every unit has two or three raters each term is exact and the
    figure equals the package's to the last bit; otherwise ours rounds less."""
    per_unit = table.sum(axis=1)
    w = np.ones(len(table), dtype=np.int64) if weights is None else weights.astype(np.int64)
    size = table.shape[1]
    o = np.zeros((size, size))
    counts = np.flatnonzero(np.bincount(per_unit, minlength=2))  # how many raters the units have
    for m in counts[counts >= 2].tolist():
        units, alike = table[per_unit == m].astype(np.int64), w[per_unit == m]
        o += ((units * alike[:, None]).T @ units - np.diag(alike @ units)) / (m - 1)
    n = o.sum(axis=0)
    e = (np.outer(n, n) - np.diag(n)) / (n.sum() - 1)
    if ordinal:  # Krippendorff's ordinal metric: the pairable values between two ranks, squared
        d = np.array(
            [[(n[min(c, k) : max(c, k) + 1].sum() - (n[c] + n[k]) / 2) ** 2 for k in range(size)] for c in range(size)]
        )
    else:
        d = 1 - np.eye(size)
    return float(1 - (o * d).sum() / (e * d).sum())


def _codes(matrix: Any, categories: Sequence[Any]) -> np.ndarray:
    if isinstance(matrix, np.ndarray):
        return matrix.astype(float)
    index = {c: i for i, c in enumerate(categories)}
    return np.array([[np.nan if v is None else index[v] for v in row] for row in matrix], dtype=float).reshape(
        len(matrix), -1
    )


def _pick_raters(session, names: list[str] | None) -> dict[str, int]:
    ids = analytics.rater_ids(session, names)
    if names and len(ids) != len(names):
        raise AssayError(f"no rater named {', '.join(sorted(set(names) - set(ids)))}")
    if names is None:  # agreement is of the reviews as made: the adjudicated consensus is none of them
        ids.pop(CONSENSUS, None)
    if len(ids) < 2:
        raise AssayError("agreement needs at least two raters with labels")
    return ids


def independent_raters(names: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The raters without the juries whose jurors are among them (a jury's tag is made of its
    jurors' tags: the two agree by construction), and those juries with their jurors present."""
    present = set(names)
    left_out = {name: jurors for name in names if (jurors := [j for j in jurors_of(name) if j in present])}
    return [name for name in names if name not in left_out], left_out


@collector.held_off()  # rows and dicts by the hundred thousand (storage/collector.py)
def agreement(project: Project, raters: list[str] | None = None, level: str = "data-point") -> dict[str, Any]:
    """Agreement between raters, human or judge, on data-point tags or answer-level scores. Every
    rater by default, less a jury when its jurors are there too (then `left_out`: jury → its jurors)."""
    if level not in ("data-point", "answer"):
        raise AssayError("agreement level is data-point or answer")
    with project.sessions() as session:
        ids = _pick_raters(session, raters)
        left_out: dict[str, list[str]] = {}
        if raters is None:
            kept, left_out = independent_raters(list(ids))
            if len(kept) >= 2:
                ids = {name: ids[name] for name in kept}
            else:
                left_out = {}
        if level == "data-point":
            sources = scoring.answer_keys(session, "source")  # as the scores by source: read once
            labels = columns.labels(session, list(ids.values()), items=True)
        else:
            table = scoring.score_table(session, list(ids.values()))
            reviews = analytics.reviews(session)
    order = list(ids)
    if level == "data-point":
        tags = [t.value for t in TAG_ORDER]
        wide, item_answer = columnar.wide_matrix(labels, [ids[name] for name in order])
        units = Units.of(category_table(wide, len(tags)))  # once: each source's figures weigh its rows
        result = {"raters": order, "level": level, **_agreement(wide, units)}
        result |= {"left_out": left_out} if left_out else {}
        # Each answer's source by number, the names in order (np.unique sorted 100,000 strings: 0.1 s).
        names = sorted({sources[a] for a in labels.answers})
        number = {name: n for n, name in enumerate(names)}
        source_of = np.array([number[sources[a]] for a in labels.answers], dtype=np.int64)
        item_source = source_of[item_answer]  # by number: comparing a million strings took a second
        per_source = np.bincount(item_source * len(units.count) + units.kind, minlength=len(names) * len(units.count))
        rows = per_source.reshape(len(names), len(units.count))
        result["by_source"] = {
            str(names[n]): _short(table_agreement(units.table, rows[n]))
            for n in np.flatnonzero(rows.sum(axis=1)).tolist()
        }
        return result

    # LeMAJ's buckets 0, .25, .5, .75, 1 by their index: a score's is floor(4 × score) (`bucket`), a
    # holistic rating's its rating - 1 (`holistic`).
    buckets = [0.0, 0.25, 0.5, 0.75, 1.0]
    slot = {name: n for n, name in enumerate(order)}

    def matrix(answers: np.ndarray, raters: list[str], codes: np.ndarray) -> np.ndarray:
        """Answers (rows, in id order) by raters (columns, in `order`); NaN where a rater gave none."""
        rows, row = np.unique(answers, return_inverse=True)
        wide = np.full((len(rows), len(order)), np.nan)
        wide[row, [slot[r] for r in raters]] = codes
        return wide

    def bucketed(scores: np.ndarray) -> np.ndarray:
        return np.floor(scores * 4 + 1e-9)  # as `bucket`, NaN (undefined) staying NaN

    result = {"raters": order, "level": level, **({"left_out": left_out} if left_out else {})}
    result |= agreement_of(matrix(table.answer, table.raters, bucketed(table.correctness)), buckets, ordinal=True)
    result["relevance"] = agreement_of(matrix(table.answer, table.raters, bucketed(table.f1)), buckets, ordinal=True)
    mine = [r for r in reviews if r.reviewer in slot]
    answers = np.array([r.answer_id for r in mine], dtype=object)
    reviewers = [r.reviewer for r in mine]
    result["manual"] = {}
    for figure, field in (("correctness", "holistic_correctness"), ("relevance", "holistic_relevance")):
        rating = np.array([np.nan if (v := getattr(r, field)) is None else v - 1 for r in mine], dtype=float)
        result["manual"][figure] = _short(agreement_of(matrix(answers, reviewers, rating), buckets, ordinal=True))
    return result


def _short(stats: dict[str, Any]) -> dict[str, Any]:
    return {"n_items": stats["n_items"], "percent_agreement": stats["percent_agreement"], "gwet_ac1": stats["gwet_ac1"]}


# ---------------------------------------------------------------- judge versus human


@collector.held_off()  # rows and dicts by the hundred thousand (storage/collector.py)
def alignment(project: Project, judge: str, human: str) -> dict[str, Any]:
    """The judge's tags against a human's: a confusion matrix per tag with per-class precision, recall
    and F1 (human = truth), LeMAJ Alignment where segmentations differ, and answer-score correlation.
    Points are paired by identity on label columns; the answers where some point of each rater found
    no partner are matched by words, row by row (`_match_answer`), as the definition in the tests does."""
    size = len(TAG_ORDER)
    with project.sessions() as session:
        ids = analytics.rater_ids(session, [judge, human])
        judge_id, human_id = ids.get(judge, -1), ids.get(human, -2)
        labels = columns.labels(session, list(ids.values()), items=True, creators=True)
        names = scoring.rater_names(session)
    found = columnar.key_matches(labels, judge_id, human_id)
    untidy = found["untidy"]

    def tidy(rows: np.ndarray) -> np.ndarray:
        return rows[~np.isin(labels.answer[rows], list(untidy))] if untidy else rows

    pairs = found["pairs"][~np.isin(labels.answer[found["pairs"][:, 0]], list(untidy))] if untidy else found["pairs"]
    j_alone, h_alone = tidy(found["judge_alone"]), tidy(found["human_alone"])
    irrelevant, missing = TAG_ORDER.index(Tag.IRRELEVANT), TAG_ORDER.index(Tag.MISSING)
    counts = columnar.confusion(labels.tag[pairs[:, 1]], labels.tag[pairs[:, 0]], size)
    counts += columnar.confusion(np.full(len(j_alone), irrelevant), labels.tag[j_alone], size)
    counts += columnar.confusion(labels.tag[h_alone], np.full(len(h_alone), missing), size)
    differ = pairs[labels.tag[pairs[:, 0]] != labels.tag[pairs[:, 1]]]
    j_points = labels.point[differ[:, 0]].tolist()
    with project.sessions() as session:
        details = analytics.pair_details(session, j_points, labels.point[differ[:, 1]].tolist(), judge_id)
    answer = labels.answer[differ[:, 0]]
    ordinal, words, confidence = (list(column) for column in zip(*details, strict=True)) if details else ([], [], [])
    tags = np.array([t.value for t in TAG_ORDER], dtype=object)
    j_tags, h_tags = tags[labels.tag[differ[:, 0]]].tolist(), tags[labels.tag[differ[:, 1]]].tolist()
    by_words: list[dict[str, Any]] = []  # the answers matched by words, after the pairs
    by_words_place: list[tuple[int, int, int]] = []  # (answer, n, 0): the rows' order, as (answer, ordinal, id)
    for n in sorted(untidy):
        by_rater = project.data_points(labels.answers[n])
        matched, disagreements = _match_answer(labels.answers[n], by_rater.get(judge), by_rater.get(human))
        for j, h in matched:
            counts[TAG_ORDER.index(Tag(h)), TAG_ORDER.index(Tag(j))] += 1
        by_words += disagreements
        by_words_place += [(n, k, 0) for k in range(len(disagreements))]
    place = np.concatenate(
        [
            np.stack([answer, np.array(ordinal, dtype=np.int64), labels.point[differ[:, 0]]], axis=1),
            np.array(by_words_place, dtype=np.int64).reshape(-1, 3),
        ]
    )
    # The most confident first, then in the rows' order: one sort of numbers, each dict made in its place.
    sure = np.nan_to_num(np.array(confidence + [d["judge_confidence"] for d in by_words], dtype=np.float64))
    order = np.lexsort((place[:, 2], place[:, 1], place[:, 0], -sure)).tolist()
    paired_count, at = len(words), answer.tolist()
    shown = [
        {
            "answer_id": labels.answers[at[n]],
            "text": words[n],
            "judge": j_tags[n],
            "human": h_tags[n],
            "judge_confidence": confidence[n],
        }
        if n < paired_count
        else by_words[n - paired_count]
        for n in order
    ]
    paired = _paired_scores(scoring.scores_of(labels, names), judge, human)
    return _alignment_result(judge, human, counts, shown, paired)


def _match_answer(answer_id: str, j_points: Any, h_points: Any) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """One answer's (judge tag, human tag) pairs, LeMAJ Alignment, and the pairs that disagree."""
    from rapidfuzz import fuzz
    from scipy.optimize import linear_sum_assignment

    pairs: list[tuple[str, str]] = []
    disagreements: list[dict[str, Any]] = []
    if not j_points or not h_points:
        return pairs, disagreements
    j_tagged = [p for p in j_points if p.tag is not None]
    h_tagged = [p for p in h_points if p.tag is not None]
    matched: list[tuple[Any, Any]] = []
    rest_h = list(h_tagged)
    same = {p.key: p for p in rest_h if p.key is not None}
    rest_j = []
    for jp in j_tagged:
        if jp.key in same and same[jp.key] in rest_h:  # one data point, both raters' tags
            matched.append((jp, same[jp.key]))
            rest_h.remove(same[jp.key])
        else:
            rest_j.append(jp)
    if rest_j and rest_h:  # LeMAJ Alignment: one-to-one by text similarity
        cost = np.array([[-fuzz.ratio(j.text, h.text) for h in rest_h] for j in rest_j])
        for r, c in zip(*linear_sum_assignment(cost), strict=True):
            if -cost[r, c] >= 50:
                matched.append((rest_j[r], rest_h[c]))
        used_j = {id(j) for j, _ in matched}
        used_h = {id(h) for _, h in matched}
        rest_j = [j for j in rest_j if id(j) not in used_j]
        rest_h = [h for h in rest_h if id(h) not in used_h]
    for jp, hp in matched:
        pairs.append((jp.tag.value, hp.tag.value))
        if jp.tag is not hp.tag:
            disagreements.append(
                {
                    "answer_id": answer_id,
                    "text": hp.text,
                    "judge": jp.tag.value,
                    "human": hp.tag.value,
                    "judge_confidence": jp.confidence,
                }
            )
    pairs += [(j.tag.value, Tag.IRRELEVANT.value) for j in rest_j]  # only the judge saw it
    pairs += [(Tag.MISSING.value, h.tag.value) for h in rest_h]  # only the human saw it
    return pairs, disagreements


def per_tag(counts: np.ndarray) -> list[dict[str, Any]]:
    """Precision, recall, F1 and support of each tag from a confusion matrix (rows: the truth), 0
    where undefined: sklearn's precision_recall_fscore_support, by the same divisions."""
    true_positive = np.diag(counts).astype(float)
    predicted, true = counts.sum(axis=0).astype(float), counts.sum(axis=1).astype(float)

    def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
        return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator != 0)

    precision, recall = ratio(true_positive, predicted), ratio(true_positive, true)
    f1 = ratio(2 * true_positive, true + predicted)
    return [
        {"precision": float(p), "recall": float(r), "f1": float(f), "support": int(n)}
        for p, r, f, n in zip(precision, recall, f1, true, strict=True)
    ]


def _paired_scores(table: scoring.ScoreTable, judge: str, human: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per answer figure (correctness, relevance): the judge's and the human's scores of the answers
    where both are defined, in answer order."""
    raters = np.array(table.raters, dtype=object)
    j, h = np.flatnonzero(raters == judge), np.flatnonzero(raters == human)
    _, at_j, at_h = np.intersect1d(table.answer[j], table.answer[h], assume_unique=True, return_indices=True)
    paired = {}
    for metric, values in (("correctness", table.correctness), ("relevance", table.f1)):
        x, y = values[j[at_j]], values[h[at_h]]
        defined = ~np.isnan(x) & ~np.isnan(y)
        paired[metric] = (x[defined], y[defined])
    return paired


def _alignment_result(
    judge: str,
    human: str,
    counts: np.ndarray,
    disagreements: list[dict[str, Any]],
    paired: dict[str, tuple[np.ndarray, np.ndarray]],
) -> dict[str, Any]:
    """The figures of `alignment` from the confusion counts (rows: human, columns: judge), the
    disagreements as shown (the judge's most confident first), and the judge's and the human's answer scores, paired."""
    from scipy.stats import pearsonr, spearmanr

    labels = [t.value for t in TAG_ORDER]
    total = int(counts.sum())
    result: dict[str, Any] = {"judge": judge, "human": human, "n_pairs": total, "labels": labels}
    if total:
        result["confusion_matrix"] = counts.tolist()  # rows: human
        result["per_tag"] = dict(zip(labels, per_tag(counts), strict=True))
        result["accuracy"] = int(np.trace(counts)) / total
    result["disagreements"] = disagreements

    for metric, (xs, ys) in paired.items():
        stats: dict[str, Any] = {"n_answers": len(xs)}
        if len(xs) >= 3 and len(np.unique(xs)) > 1 and len(np.unique(ys)) > 1:
            pr, sr = pearsonr(xs, ys), spearmanr(xs, ys)
            stats |= {
                "pearson": float(pr.statistic),
                "pearson_p": float(pr.pvalue),
                "spearman": float(sr.statistic),
                "spearman_p": float(sr.pvalue),
            }
        if len(xs):  # bucketed as `bucket` does
            stats["bucketed_accuracy"] = int(
                np.count_nonzero(np.floor(xs * 4 + 1e-9) == np.floor(ys * 4 + 1e-9))
            ) / len(xs)
        result[metric] = stats
    return result
