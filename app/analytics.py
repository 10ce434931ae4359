"""What a review tells a legal AI team: scores, inter-annotator agreement, how far the judge can be
trusted, and which answers can skip a human (LeMAJ 3.2, 4.2–4.3, 5; DeCE 3; two-dimensional 5)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from app.errors import AssayError
from app.project import Project
from models.vocabulary import Tag
from storage import analytics

TAG_ORDER = [Tag.CORRECT, Tag.INCORRECT, Tag.IRRELEVANT, Tag.MISSING]


def bucket(score: float | None) -> float | None:
    """Round down to the nearest quarter (LeMAJ 4.2.2): 0.8 -> 0.75."""
    return None if score is None else math.floor(score * 4 + 1e-9) / 4


def holistic(rating: int | None) -> float | None:
    """LeMAJ Table 8: 1..5 -> 0, .25, .5, .75, 1."""
    return None if rating is None else (rating - 1) / 4


# ---------------------------------------------------------------- scores


def scores(project: Project, by: str = "answer", raters: list[str] | None = None) -> list[dict[str, Any]]:
    if by not in analytics.SLICES:
        raise AssayError(f"scores by {by!r}: choose one of {', '.join(analytics.SLICES)}")
    with project.sessions() as session:
        ids = analytics.rater_ids(session, raters)
        if raters and len(ids) != len(raters):
            raise AssayError(f"no rater named {', '.join(sorted(set(raters) - set(ids)))}")
        rows = analytics.scores(session, by, list(ids.values()) if raters else None)
    out = []
    for row in rows:
        item = asdict(row)
        key = item.pop("key")
        answers = item.pop("answers")
        out.append({"answer_id": key, **item} if by == "answer" else {by: key, "answers": answers, **item})
    return out


# ---------------------------------------------------------------- agreement


def gwet_ac1(table: np.ndarray) -> float | None:
    """Gwet's AC1 for any number of raters, missing ratings allowed (Gwet 2014, Handbook of
    Inter-Rater Reliability, ch. 2): `table[i, k]` counts raters who put subject i in category k.
    irrCAC implements it too, but pins scipy 1.12 and pandas < 3, so it cannot be installed here."""
    q = table.shape[1]
    raters = table.sum(axis=1)
    if q < 2 or not (raters >= 2).any():
        return None
    rated = raters >= 2
    pa = float(np.mean((table[rated] * (table[rated] - 1)).sum(axis=1) / (raters[rated] * (raters[rated] - 1))))
    pi = (table[raters >= 1] / raters[raters >= 1, None]).mean(axis=0)
    pe = float((pi * (1 - pi)).sum() / (q - 1))
    return None if pe == 1 else (pa - pe) / (1 - pe)


def agreement_of(matrix: list[list[Any]], categories: Sequence[Any], *, ordinal: bool = False) -> dict[str, Any]:
    """Agreement over items (rows) rated by raters (columns, None = not rated)."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import fleiss_kappa

    index = {c: i for i, c in enumerate(categories)}
    shared = [row for row in matrix if sum(v is not None for v in row) >= 2]
    n_raters = len(matrix[0]) if matrix else 0
    result: dict[str, Any] = {
        "n_items": len(shared),
        "percent_agreement": None,
        "cohen_kappa": None,
        "fleiss_kappa": None,
        "krippendorff_alpha": None,
        "gwet_ac1": None,
    }
    if not shared:
        return result
    table = np.array([[sum(1 for v in row if v == c) for c in categories] for row in shared], dtype=float)
    per_item = table.sum(axis=1)
    observed = (table * (table - 1)).sum(axis=1) / (per_item * (per_item - 1))
    result["percent_agreement"] = float(observed.mean())
    if n_raters == 2:
        a, b = [row[0] for row in shared], [row[1] for row in shared]
        if len(set(a) | set(b)) > 1:
            result["cohen_kappa"] = float(
                cohen_kappa_score(a, b, labels=list(categories), weights="linear" if ordinal else None)
            )
    complete = table[per_item == n_raters]
    if len(complete) and (complete.sum(axis=0) > 0).sum() > 1:
        result["fleiss_kappa"] = float(fleiss_kappa(complete, method="fleiss"))
    data = np.array([[np.nan if v is None else index[v] for v in row] for row in shared], dtype=float).T
    if len(np.unique(data[~np.isnan(data)])) > 1:
        result["krippendorff_alpha"] = float(
            krippendorff.alpha(
                reliability_data=data,
                level_of_measurement="ordinal" if ordinal else "nominal",
                value_domain=list(range(len(categories))),
            )
        )
    result["gwet_ac1"] = gwet_ac1(table)
    return result


def _pick_raters(session, names: list[str] | None) -> dict[str, int]:
    ids = analytics.rater_ids(session, names)
    if names and len(ids) != len(names):
        raise AssayError(f"no rater named {', '.join(sorted(set(names) - set(ids)))}")
    if len(ids) < 2:
        raise AssayError("agreement needs at least two raters with labels")
    return ids


def agreement(project: Project, raters: list[str] | None = None, level: str = "data-point") -> dict[str, Any]:
    """Agreement between raters, human or judge, on data-point tags or answer-level scores."""
    with project.sessions() as session:
        ids = _pick_raters(session, raters)
        meta = {a.id: a for a in project.answers()}
        if level == "data-point":
            labels = analytics.item_labels(session, list(ids.values()))
        elif level == "answer":
            rows = analytics.scores(session, "answer", list(ids.values()))
            reviews = analytics.reviews(session)
        else:
            raise AssayError("agreement level is data-point or answer")
    names = {v: k for k, v in ids.items()}
    order = list(ids)
    if level == "data-point":
        items: dict[tuple[str, int], list[Any]] = defaultdict(lambda: [None] * len(order))
        for answer_id, item, rater_id, tag in labels:
            items[(answer_id, item)][order.index(names[rater_id])] = tag
        tags = [t.value for t in TAG_ORDER]
        result = {"raters": order, "level": level, **agreement_of(list(items.values()), tags)}
        by_source: dict[str, list[list[Any]]] = defaultdict(list)
        for (answer_id, _), row in items.items():
            by_source[meta[answer_id].source or "unknown"].append(row)
        result["by_source"] = {s: _short(agreement_of(rows_, tags)) for s, rows_ in sorted(by_source.items())}
        return result

    buckets = [0.0, 0.25, 0.5, 0.75, 1.0]
    per: dict[str, dict[str, dict[str, Any]]] = {
        "correctness": defaultdict(lambda: [None] * len(order)),
        "relevance": defaultdict(lambda: [None] * len(order)),
    }
    for row in rows:
        column = order.index(row.rater)
        per["correctness"][row.key][column] = bucket(row.correctness)
        per["relevance"][row.key][column] = bucket(row.f1)
    manual: dict[str, dict[str, list[Any]]] = {
        "correctness": defaultdict(lambda: [None] * len(order)),
        "relevance": defaultdict(lambda: [None] * len(order)),
    }
    for review in reviews:
        if review.reviewer in order:
            column = order.index(review.reviewer)
            manual["correctness"][review.answer_id][column] = holistic(review.holistic_correctness)
            manual["relevance"][review.answer_id][column] = holistic(review.holistic_relevance)
    result = {"raters": order, "level": level, **agreement_of(list(per["correctness"].values()), buckets, ordinal=True)}
    result["relevance"] = agreement_of(list(per["relevance"].values()), buckets, ordinal=True)
    result["manual"] = {k: _short(agreement_of(list(v.values()), buckets, ordinal=True)) for k, v in manual.items()}
    return result


def _short(stats: dict[str, Any]) -> dict[str, Any]:
    return {"n_items": stats["n_items"], "percent_agreement": stats["percent_agreement"], "gwet_ac1": stats["gwet_ac1"]}


# ---------------------------------------------------------------- judge versus human


def alignment(project: Project, judge: str, human: str) -> dict[str, Any]:
    """The judge's tags against a human's: a confusion matrix per tag with per-class precision, recall
    and F1 (human = truth), LeMAJ Alignment where segmentations differ, and answer-score correlation."""
    from rapidfuzz import fuzz
    from scipy.optimize import linear_sum_assignment
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

    judged = {a.id: project.data_points(a.id) for a in project.answers()}
    pairs: list[tuple[str, str]] = []
    disagreements = []
    for answer_id, by_rater in judged.items():
        j_points, h_points = by_rater.get(judge), by_rater.get(human)
        if not j_points or not h_points:
            continue
        j_tagged = [p for p in j_points if p.tag is not None]
        h_tagged = [p for p in h_points if p.tag is not None]
        matched: list[tuple[Any, Any]] = []
        rest_h = list(h_tagged)
        sources = {p.source_id: p for p in rest_h if p.source_id is not None}
        rest_j = []
        for jp in j_tagged:
            if jp.id in sources:  # the reviewer's copy of this very point
                matched.append((jp, sources[jp.id]))
                rest_h.remove(sources[jp.id])
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
    labels = [t.value for t in TAG_ORDER]
    result: dict[str, Any] = {"judge": judge, "human": human, "n_pairs": len(pairs), "labels": labels}
    if pairs:
        predicted, truth = [p[0] for p in pairs], [p[1] for p in pairs]
        result["confusion_matrix"] = confusion_matrix(truth, predicted, labels=labels).tolist()  # rows: human
        p, r, f, support = precision_recall_fscore_support(truth, predicted, labels=labels, zero_division=0)
        result["per_tag"] = {
            label: {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": int(support[i])}
            for i, label in enumerate(labels)
        }
        result["accuracy"] = sum(a == b for a, b in pairs) / len(pairs)
    result["disagreements"] = sorted(disagreements, key=lambda d: -(d["judge_confidence"] or 0))

    by_answer = {(s["answer_id"], s["rater"]): s for s in scores(project, "answer", [judge, human])}
    for metric, key in (("correctness", "correctness"), ("relevance", "f1")):
        both = [
            (by_answer[(a, judge)][key], by_answer[(a, human)][key])
            for a in {a for a, _ in by_answer}
            if (a, judge) in by_answer
            and (a, human) in by_answer
            and by_answer[(a, judge)][key] is not None
            and by_answer[(a, human)][key] is not None
        ]
        stats: dict[str, Any] = {"n_answers": len(both)}
        if len(both) >= 3 and len({x for x, _ in both}) > 1 and len({y for _, y in both}) > 1:
            xs, ys = zip(*both, strict=True)
            pr, sr = pearsonr(xs, ys), spearmanr(xs, ys)
            stats |= {
                "pearson": float(pr.statistic),
                "pearson_p": float(pr.pvalue),
                "spearman": float(sr.statistic),
                "spearman_p": float(sr.pvalue),
            }
        if both:
            stats["bucketed_accuracy"] = sum(bucket(x) == bucket(y) for x, y in both) / len(both)
        result[metric] = stats
    return result


# ---------------------------------------------------------------- triage


def triage(
    project: Project,
    min_correctness: float = 1.0,
    min_relevance: float = 0.8,
    *,
    min_confidence: float | None = None,
    target_miss_rate: float | None = None,
    minutes_per_answer: float | None = None,
) -> dict[str, Any]:
    """LeMAJ's rule: cleared when the judge's correctness and relevance (F1) reach the thresholds (and,
    if asked, every judge tag is confident enough); measured against submitted human reviews."""
    with project.sessions() as session:
        judges = analytics.latest_judge_per_answer(session)
        kinds = analytics.rater_kinds(session)
        rows = analytics.scores(session, "answer")
        confidence = analytics.judge_confidence(session)
        ids = analytics.rater_ids(session, None)
        reviews = [r for r in analytics.reviews(session) if r.status == "submitted"]
    judge_names = {v: k for k, v in ids.items()}
    judge_scores = {r.key: r for r in rows if judges.get(r.key) is not None and r.rater == judge_names[judges[r.key]]}
    human = defaultdict(list)
    for r in rows:
        if kinds.get(r.rater) == "human":
            human[r.key].append(r)
    reviewed = {r.answer_id for r in reviews if r.answer_id in human}
    seconds = defaultdict(list)
    for r in reviews:
        seconds[r.answer_id].append(r.active_seconds)

    def clears(answer_id: str, min_c: float, min_r: float) -> bool:
        s = judge_scores.get(answer_id)
        if s is None or s.correctness is None or s.f1 is None or s.correctness < min_c or s.f1 < min_r:
            return False
        floor = confidence.get((answer_id, judges[answer_id]))
        return min_confidence is None or (floor is not None and floor >= min_confidence)

    def measure(min_c: float, min_r: float) -> dict[str, Any]:
        cleared = [a for a in judge_scores if clears(a, min_c, min_r)]
        checked = [a for a in cleared if a in reviewed]
        missed = [a for a in checked if any(h.incorrect or h.missing for h in human[a])]
        figures: dict[str, Any] = {
            "min_correctness": min_c,
            "min_relevance": min_r,
            "cleared_count": len(cleared),
            "cleared_share": len(cleared) / len(judge_scores) if judge_scores else None,
            "reviewed_cleared": len(checked),
            "miss_rate": len(missed) / len(checked) if checked else None,
        }
        if checked:
            figures["human_correctness"] = _mean([h.correctness for a in checked for h in human[a]])
            figures["human_relevance"] = _mean([h.f1 for a in checked for h in human[a]])
        if minutes_per_answer is not None:
            figures["review_hours_saved"] = len(cleared) * minutes_per_answer / 60
        elif any(seconds[a] for a in checked):
            per_answer = _mean([s for a in reviewed for s in seconds[a]]) or 0.0
            figures["review_hours_saved"] = len(cleared) * per_answer / 3600
        return figures

    cleared = sorted(a for a in judge_scores if clears(a, min_correctness, min_relevance))
    result: dict[str, Any] = {
        "rule": {"min_correctness": min_correctness, "min_relevance": min_relevance, "min_confidence": min_confidence},
        "cleared": cleared,
        "flagged": sorted(a for a in (a.id for a in project.answers()) if a not in set(cleared)),
        "judged": len(judge_scores),
        **{k: v for k, v in measure(min_correctness, min_relevance).items() if not k.startswith("min_")},
    }
    sweep = [measure(c, r / 20) for c in (1.0, 0.75, 0.5) for r in range(20, 9, -1)]
    result["sweep"] = sweep
    if target_miss_rate is not None:
        safe = [s for s in sweep if s["miss_rate"] is not None and s["miss_rate"] <= target_miss_rate]
        result["recommended"] = max(safe, key=lambda s: s["cleared_count"]) if safe else None
    return result


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
