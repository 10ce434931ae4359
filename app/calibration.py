"""Judge confidences turned into the probability that a reviewer agrees (isotonic regression, per tag),
with the expected calibration error before and after and a reliability diagram.

A judge's "0.9" means little until reviews say how often a lawyer kept such a tag. The fit uses the
latest judge run of each answer against the tags submitted by reviewers on the same data points.
Calibration makes triage clear more answers at the same risk; it does not make a bound valid, so
triage fits it on reviews it does not test on (app/triage.py).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.project import Project
from storage import analytics, statistics

BINS = 10
MIN_PAIRS = 5  # fewer reviewed points of a tag: its confidences are left as the judge gave them


@dataclass
class Calibration:
    """Per-tag isotonic maps from the judge's confidence to P(reviewer agrees)."""

    maps: dict[str, Any] = field(default_factory=dict)
    pairs: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # tag: (confidence, agreed)

    def __call__(self, tag: str, confidence: float | None) -> float | None:
        if confidence is None:
            return None
        fitted = self.maps.get(tag)
        return float(confidence) if fitted is None else float(fitted.predict([confidence])[0])


def reviewed_pairs(project: Project, exclude: Collection[str] = ()) -> tuple[dict[str, tuple], list[dict]]:
    """(confidence, agreed) per tag from the latest judge's points a reviewer also tagged, and the
    latest judge's labels (for applying the map)."""
    with project.sessions() as session:
        judges = analytics.latest_judge_per_answer(session)
        labels = statistics.point_labels(session)
    judge_labels = [r for r in labels if r["kind"] == "judge" and judges.get(r["answer_id"]) == r["rater_id"]]
    human: dict[tuple[str, int], list[str]] = {}
    for r in labels:
        if r["kind"] == "human" and r["submitted"] and r["answer_id"] not in exclude:
            human.setdefault((r["answer_id"], r["item"]), []).append(r["tag"])
    pairs: dict[str, list[tuple[float, float]]] = {}
    for r in judge_labels:
        tags = human.get((r["answer_id"], r["item"]))
        if tags and r["confidence"] is not None:
            pairs.setdefault(r["tag"], []).extend((r["confidence"], float(t == r["tag"])) for t in tags)
    arrays = {tag: tuple(np.array(v, dtype=float).T) for tag, v in pairs.items()}
    return arrays, judge_labels


def _isotonic(confidence: np.ndarray, agreed: np.ndarray):
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(confidence, agreed)


def fit(pairs: dict[str, tuple[np.ndarray, np.ndarray]]) -> Calibration:
    calibration = Calibration(pairs=pairs)
    for tag, (confidence, agreed) in pairs.items():
        if len(agreed) >= MIN_PAIRS and len(np.unique(agreed)) > 1:
            calibration.maps[tag] = _isotonic(confidence, agreed)
    return calibration


def calibrate(project: Project, exclude: Collection[str] = ()) -> tuple[Calibration, dict[str, float | None]]:
    """The fitted maps (on reviews of answers not in `exclude`) and each judged answer's certainty:
    the lowest calibrated confidence among the latest judge's tags (None when it gave none)."""
    pairs, judge_labels = reviewed_pairs(project, exclude)
    calibration = fit(pairs)
    certainty: dict[str, float | None] = {}
    for r in judge_labels:
        value = calibration(r["tag"], r["confidence"])
        if value is not None:
            old = certainty.get(r["answer_id"])
            certainty[r["answer_id"]] = value if old is None else min(old, value)
    return calibration, certainty


def review_certainty(project: Project) -> dict[str, float | None]:
    """How sure the judges are of each answer, for a queue that puts the least certain first: the
    calibrated certainty, lowered to the share of judge runs (jury members, a verifier) that agree
    with the majority tag of a point wherever they differ."""
    certainty = calibrate(project)[1]
    with project.sessions() as session:
        labels = statistics.point_labels(session)
    votes: dict[tuple[str, int], list[str]] = {}
    for r in labels:
        if r["kind"] == "judge":
            votes.setdefault((r["answer_id"], r["item"]), []).append(r["tag"])
    for (answer, _), tags in votes.items():
        if len(set(tags)) > 1:
            share = max(tags.count(t) for t in set(tags)) / len(tags)
            old = certainty.get(answer)
            certainty[answer] = share if old is None else min(old, share)
    return certainty


def ece(confidence: np.ndarray, agreed: np.ndarray, bins: int = BINS) -> float | None:
    """Expected calibration error: the share-weighted gap between confidence and agreement per bin."""
    if not len(confidence):
        return None
    which = np.minimum((np.asarray(confidence) * bins).astype(int), bins - 1)
    gaps = [
        abs(agreed[which == b].mean() - confidence[which == b].mean()) * (which == b).mean()
        for b in range(bins)
        if (which == b).any()
    ]
    return float(sum(gaps))


def cross_fitted(confidence: np.ndarray, agreed: np.ndarray, folds: int = 5, seed: int = 0) -> np.ndarray:
    """Each point's calibrated confidence from a map fitted without it: an honest ECE after calibration."""
    out = confidence.astype(float).copy()
    order = np.random.default_rng(seed).permutation(len(confidence)) % folds
    for fold in range(folds):
        train = order != fold
        if train.sum() >= MIN_PAIRS and len(np.unique(agreed[train])) > 1:
            out[~train] = _isotonic(confidence[train], agreed[train]).predict(confidence[~train])
    return out


def reliability(project: Project) -> dict[str, Any]:
    """Per tag and overall: reviewed points, ECE of the raw and (cross-fitted) calibrated confidence,
    and the reliability curve (per confidence bin: mean confidence, agreement, points)."""
    pairs, _ = reviewed_pairs(project)
    out: dict[str, Any] = {"bins": BINS, "tags": {}}
    everything = ([], [], [])
    for tag, (confidence, agreed) in sorted(pairs.items()):
        calibrated = cross_fitted(confidence, agreed)
        out["tags"][tag] = {
            "points": len(agreed),
            "agreement": float(agreed.mean()),
            "ece_raw": ece(confidence, agreed),
            "ece_calibrated": ece(calibrated, agreed),
            "curve": _curve(confidence, agreed),
            "calibrated_curve": _curve(calibrated, agreed),
        }
        for bucket, values in zip(everything, (confidence, calibrated, agreed), strict=True):
            bucket.extend(values)
    raw, calibrated, agreed = (np.array(v, dtype=float) for v in everything)
    out["overall"] = {
        "points": len(agreed),
        "ece_raw": ece(raw, agreed),
        "ece_calibrated": ece(calibrated, agreed),
        "curve": _curve(raw, agreed),
        "calibrated_curve": _curve(calibrated, agreed),
    }
    return out


def _curve(confidence: np.ndarray, agreed: np.ndarray) -> list[dict[str, float]]:
    which = np.minimum((confidence * BINS).astype(int), BINS - 1)
    return [
        {
            "confidence": float(confidence[which == b].mean()),
            "agreement": float(agreed[which == b].mean()),
            "points": int((which == b).sum()),
        }
        for b in range(BINS)
        if (which == b).any()
    ]


def reliability_figure(report: dict[str, Any]):
    """The reliability diagram: agreement against confidence, raw and calibrated, on its own Figure."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.6, 4))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="#999", linestyle="--", linewidth=1, label="perfectly calibrated")
    overall = report["overall"]
    for key, label, marker in (
        ("curve", f"judge's confidence (ECE {_pct(overall['ece_raw'])})", "o"),
        ("calibrated_curve", f"calibrated, cross-fitted (ECE {_pct(overall['ece_calibrated'])})", "s"),
    ):
        curve = overall[key]
        if curve:
            x, y = [c["confidence"] for c in curve], [c["agreement"] for c in curve]
            (line,) = ax.plot(x, y, linewidth=1, label=label)
            # A bin of three points says little: marker area follows how many points it holds.
            sizes = [12 + 120 * c["points"] / overall["points"] for c in curve]
            ax.scatter(x, y, s=sizes, marker=marker, color=line.get_color(), zorder=3)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("confidence")
    ax.set_ylabel("share of tags the reviewer kept")
    ax.text(0.02, 0.95, "marker area: data points in the bin", transform=ax.transAxes, fontsize=7, color="#555")
    ax.set_title(f"Reliability of the judge's tags ({overall['points']} reviewed data points)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"
