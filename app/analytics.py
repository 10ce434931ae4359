"""What a review tells a legal AI team: scores, inter-annotator agreement, how far the judge can be
trusted, and which answers can skip a human (LeMAJ 3.2, 4.2–4.3, 5; DeCE 3; two-dimensional 5)."""

from __future__ import annotations

import math
from collections.abc import Sequence
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
        item = dict(vars(row))  # not dataclasses.asdict: its deep copy dominates at 10^5 rows
        key = item.pop("key")
        answers = item.pop("answers")
        if by == "answer":
            out.append({"answer_id": key, **item})
        elif by == "rater":
            out.append({"answers": answers, **item})
        else:
            out.append({by: key, "answers": answers, **item})
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


def agreement_of(matrix: Any, categories: Sequence[Any], *, ordinal: bool = False) -> dict[str, Any]:
    """Agreement over items (rows) rated by raters (columns; None or NaN = not rated). `matrix` holds
    category values (a list of lists) or, faster, category indexes (a float array with NaN)."""
    import krippendorff
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import fleiss_kappa

    codes = _codes(matrix, categories)
    rated = (~np.isnan(codes)).sum(axis=1)
    shared = codes[rated >= 2]
    result: dict[str, Any] = dict.fromkeys(
        ("percent_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "gwet_ac1")
    )
    result = {"n_items": len(shared), **result}
    if not len(shared):
        return result
    table = np.stack([(shared == k).sum(axis=1) for k in range(len(categories))], axis=1).astype(float)
    per_item = table.sum(axis=1)
    result["percent_agreement"] = float(((table * (table - 1)).sum(axis=1) / (per_item * (per_item - 1))).mean())
    if codes.shape[1] == 2 and len(np.unique(shared)) > 1:
        result["cohen_kappa"] = float(
            cohen_kappa_score(
                shared[:, 0], shared[:, 1], labels=list(range(len(categories))), weights="linear" if ordinal else None
            )
        )
    complete = table[per_item == codes.shape[1]]
    if len(complete) and (complete.sum(axis=0) > 0).sum() > 1:
        result["fleiss_kappa"] = float(fleiss_kappa(complete, method="fleiss"))
    if len(np.unique(shared[~np.isnan(shared)])) > 1:
        result["krippendorff_alpha"] = float(
            krippendorff.alpha(
                reliability_data=shared.T,
                level_of_measurement="ordinal" if ordinal else "nominal",
                value_domain=list(range(len(categories))),
            )
        )
    result["gwet_ac1"] = gwet_ac1(table)
    return result


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
    if len(ids) < 2:
        raise AssayError("agreement needs at least two raters with labels")
    return ids


def agreement(project: Project, raters: list[str] | None = None, level: str = "data-point") -> dict[str, Any]:
    """Agreement between raters, human or judge, on data-point tags or answer-level scores."""
    import pandas as pd

    if level not in ("data-point", "answer"):
        raise AssayError("agreement level is data-point or answer")
    with project.sessions() as session:
        ids = _pick_raters(session, raters)
        sources = analytics.answer_sources(session)
        if level == "data-point":
            labels = analytics.item_labels(session, list(ids.values()))
        else:
            rows = analytics.scores(session, "answer", list(ids.values()))
            reviews = analytics.reviews(session)
    order = list(ids)
    if level == "data-point":
        tags = [t.value for t in TAG_ORDER]
        frame = pd.DataFrame(labels)
        frame["code"] = frame["tag"].map({t: i for i, t in enumerate(tags)}).astype(float)
        wide = frame.pivot_table(index=["answer", "item"], columns="rater_id", values="code", aggfunc="first")
        wide = wide.reindex(columns=[ids[name] for name in order])
        result = {"raters": order, "level": level, **agreement_of(wide.to_numpy(), tags)}
        slices = wide.index.get_level_values("answer").map(lambda a: sources.get(a) or "unknown")
        result["by_source"] = {
            str(source): _short(agreement_of(wide[slices == source].to_numpy(), tags)) for source in sorted(set(slices))
        }
        return result

    buckets = [0.0, 0.25, 0.5, 0.75, 1.0]

    def matrix(values: dict[tuple[str, str], float | None]) -> list[list[Any]]:
        answers = sorted({a for a, _ in values})
        return [[values.get((a, r)) for r in order] for a in answers]

    correctness = {(row.key, row.rater): bucket(row.correctness) for row in rows}
    relevance = {(row.key, row.rater): bucket(row.f1) for row in rows}
    manual_c = {(r.answer_id, r.reviewer): holistic(r.holistic_correctness) for r in reviews if r.reviewer in order}
    manual_r = {(r.answer_id, r.reviewer): holistic(r.holistic_relevance) for r in reviews if r.reviewer in order}
    result = {"raters": order, "level": level, **agreement_of(matrix(correctness), buckets, ordinal=True)}
    result["relevance"] = agreement_of(matrix(relevance), buckets, ordinal=True)
    result["manual"] = {
        "correctness": _short(agreement_of(matrix(manual_c), buckets, ordinal=True)),
        "relevance": _short(agreement_of(matrix(manual_r), buckets, ordinal=True)),
    }
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


def triage(project: Project, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """LeMAJ triage with a guaranteed miss rate: see app/triage.py."""
    from app.triage import triage as run

    return run(project, *args, **kwargs)


ScoreColumns = (
    "key",
    "rater",
    "answers",
    "correct",
    "incorrect",
    "irrelevant",
    "missing",
    "correctness",
    "precision",
    "recall",
    "f1",
)


def _float(value: Any) -> float | None:
    return None if value is None or value != value else float(value)


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
