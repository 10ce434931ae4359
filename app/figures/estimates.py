"""Project figures with 95 % intervals from many judge tags and few human reviews: prediction-powered
inference (PPI++), beside the naive judge-only and human-only figures.

The human sample must be drawn at random (`assay sample`): only reviews of sampled answers are used.
The judge may be biased; the reviews correct the bias and the judge's many tags narrow the interval.
Intervals are asymptotic (CLT), not exact; with few reviews per group read them as approximate.

Why not `ppi-python` itself: its `ppi_mean_ci` is about twenty lines of NumPy, which
app/figures/guarantees.py reproduces (the same intervals to 3e-16 over 600 random projects, beside
ppi-python 0.2.3: bench/ppi_equivalence.py). Installed beside this app, ppi-python adds numba and
llvmlite (203 MB), gdown, beautifulsoup4, soupsieve, filelock and PySocks: 206 MB in all for a
desktop bundle, and a JIT compiler the app would never use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.errors import AssayError
from app.figures.guarantees import classical_mean, difference_of_means, paired_difference, ppi_mean
from app.project import Project
from app.raters import judge_per_answer
from storage import adjudication, analytics, statistics

METRICS = ("correctness", "precision", "recall", "f1", "any_incorrect")
GROUPS = ("generator", "source", "document", "all")


PerAnswer = dict[str, dict[str, float | None]]  # answer id -> metric -> value (None: undefined)


def _values(row: Any) -> dict[str, float | None]:
    values = {m: getattr(row, m) for m in METRICS[:4]}
    values["any_incorrect"] = float(row.incorrect > 0)
    return values


def answer_values(project: Project) -> tuple[PerAnswer, PerAnswer, set[str], list[dict[str, Any]]]:
    """Per answer: the default rater's metric values, the mean of its random-sample reviewers' values,
    the sampled answers, and each answer's slices."""
    with project.sessions() as session:
        judges = judge_per_answer(session)
        kinds = analytics.rater_kinds(session)
        names = {v: k for k, v in analytics.rater_ids(session, None).items()}
        rows = analytics.scores(session, "answer")
        human_reviews = [
            r for r in analytics.reviews(session) if r.status == "submitted" and kinds.get(r.reviewer) == "human"
        ]
        settled = adjudication.consensus_answers(session)  # adjudicated: its consensus is the review
        chosen = adjudication.prefer_consensus(human_reviews, lambda r: r.answer_id, lambda r: r.reviewer, settled)
        submitted = {(r.answer_id, r.reviewer) for r in chosen}
        sampled = set(statistics.sampled_answers(session))
        slices = statistics.answer_slices(session)
    judge = {r.key: _values(r) for r in rows if r.key in judges and names[judges[r.key]] == r.rater}
    human_rows: dict[str, list[dict[str, float | None]]] = {}
    for r in rows:
        if (r.key, r.rater) in submitted and r.key in sampled:
            human_rows.setdefault(r.key, []).append(_values(r))
    human = {a: {m: _mean([v[m] for v in vs]) for m in METRICS} for a, vs in human_rows.items()}
    return judge, human, sampled, slices


def _three(y: list[float], yhat: list[float], rest: list[float], alpha: float) -> dict[str, Any]:
    """PPI, judge-only and human-only figures for one metric of one group."""
    out: dict[str, Any] = {"reviewed": len(y), "judged": len(yhat) + len(rest)}
    everything = yhat + rest
    out["judge_only"] = _clipped(classical_mean(everything, alpha)) if everything else None
    out["human_only"] = _clipped(classical_mean(y, alpha)) if len(y) >= 2 else None
    if len(y) >= 2 and rest:
        out["ppi"] = _clipped(ppi_mean(y, yhat, rest, alpha))
    else:
        out["ppi"] = out["human_only"]
    return out


def _clipped(figures: dict[str, Any]) -> dict[str, Any]:
    """Scores and shares lie in [0, 1]: a normal interval reaching past that says no more than the edge."""
    low, high = figures["ci"]
    return {**figures, "ci": [max(low, 0.0), min(high, 1.0)]}


def estimate(project: Project, by: str = "generator", alpha: float = 0.05) -> dict[str, Any]:
    """Per group: each metric's PPI estimate and interval beside judge-only and human-only ones. The
    group's top-level `ppi`, `judge_only` and `human_only` are for Correctness, LeMAJ's headline."""
    if by not in GROUPS:
        raise AssayError(f"estimate by {by!r}: choose one of {', '.join(GROUPS)}")
    judge, human, sampled, slices = answer_values(project)
    groups: dict[str, list[str]] = {}
    for s in slices:
        groups.setdefault("all" if by == "all" else s[by], []).append(s["answer_id"])
    out: list[dict[str, Any]] = []
    for name, members in sorted(groups.items()):
        metrics = {}
        for metric in METRICS:
            judged, reviewed = _defined(judge, metric), _defined(human, metric)
            labelled = [a for a in members if a in reviewed and a in judged]
            chosen = set(labelled)
            rest = [judged[a] for a in members if a in judged and a not in chosen]
            metrics[metric] = _three([reviewed[a] for a in labelled], [judged[a] for a in labelled], rest, alpha)
        headline = metrics["correctness"]
        out.append(
            {
                "group": name,
                by: name,
                "answers": len(members),
                "sampled": sum(a in sampled for a in members),
                "reviewed": headline["reviewed"],
                "ppi": headline["ppi"],
                "judge_only": headline["judge_only"],
                "human_only": headline["human_only"],
                "metrics": metrics,
            }
        )
    return {"by": by, "confidence": 1 - alpha, "groups": out, "reviews_basis": "reviews of randomly drawn answers only"}


def compare(project: Project, a: str, b: str, alpha: float = 0.05) -> dict[str, Any]:
    """Generator a minus generator b on the questions both answered, per metric.

    The judge's part is paired: its A-minus-B difference over every shared question, so question
    difficulty cancels. Each generator's randomly reviewed answers correct that judge's bias (plain
    PPI, rectifier Y - Yhat); see guarantees.paired_difference for the variance."""
    judge, human, _, slices = answer_values(project)
    return _compare(judge, human, _by_question(slices), a, b, alpha)


def comparisons(project: Project, alpha: float = 0.05, most: int = 6) -> list[dict[str, Any]]:
    """The paired comparison of every two generators that answered some question in common (the
    `most` generators with the most answers), for the dashboard and the report."""
    judge, human, _, slices = answer_values(project)
    by_question = _by_question(slices)
    answers: dict[str, int] = {}
    for s in slices:
        answers[s["generator"]] = answers.get(s["generator"], 0) + 1
    names = sorted(sorted(answers, key=lambda g: -answers[g])[:most])
    shared = [
        (a, b)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if any(a in q and b in q for q in by_question.values())
    ]
    return [_compare(judge, human, by_question, a, b, alpha) for a, b in shared]


def _by_question(slices: list[dict[str, Any]]) -> dict[Any, dict[str, str]]:
    by_question: dict[Any, dict[str, str]] = {}
    for s in slices:
        by_question.setdefault(s["question"], {})[s["generator"]] = s["answer_id"]
    return by_question


def _compare(
    judge: PerAnswer, human: PerAnswer, by_question: dict[Any, dict[str, str]], a: str, b: str, alpha: float
) -> dict[str, Any]:
    pairs = [(q[a], q[b]) for q in by_question.values() if a in q and b in q]
    if not pairs:
        raise AssayError(f"no question was answered by both {a!r} and {b!r}")
    metrics = {}
    for metric in METRICS:
        judged, reviewed = _defined(judge, metric), _defined(human, metric)
        both = [(x, y) for x, y in pairs if x in judged and y in judged]
        diffs = np.array([judged[x] - judged[y] for x, y in both])
        figures: dict[str, Any] = {"questions": len(both)}
        figures["judge_only"] = classical_mean(diffs, alpha) if len(diffs) else None
        human_a, human_b = (
            [reviewed[x] for x in side if x in reviewed] for side in ([x for x, _ in both], [y for _, y in both])
        )
        enough = min(len(human_a), len(human_b)) >= 2
        figures["human_only"] = difference_of_means(human_a, human_b, alpha) if enough else None
        # Per side: (human minus judge, the judge's A-minus-B difference) on its reviewed answers.
        sides = [
            np.array(
                [
                    (reviewed[mine] - judged[mine], judged[x] - judged[y])
                    for x, y in both
                    for mine in ((x,) if side == 0 else (y,))
                    if mine in reviewed
                ]
            ).reshape(-1, 2)
            for side in (0, 1)
        ]
        if min(len(sides[0]), len(sides[1])) >= 2:
            (ra, da), (rb, db) = sides[0].T, sides[1].T
            figures["ppi"] = paired_difference(diffs, ra, da, rb, db, alpha)
        else:
            figures["ppi"] = None
        figures["reviewed"] = [len(sides[0]), len(sides[1])]
        metrics[metric] = figures
    return {"a": a, "b": b, "difference": f"{a} minus {b}", "questions": len(pairs), "metrics": metrics}


def _defined(values: PerAnswer, metric: str) -> dict[str, float]:
    """Each answer's value of the metric, where it is defined."""
    return {answer: v for answer, figures in values.items() if (v := figures.get(metric)) is not None}


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None
