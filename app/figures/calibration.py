"""Judge confidences turned into the probability that a reviewer agrees (isotonic regression, per tag),
with the expected calibration error before and after and a reliability diagram.

A judge's "0.9" means little until reviews say how often a lawyer kept such a tag. The fit uses the
project's default rater (app/raters.py) against the tags submitted by reviewers on the same data points.
Calibration makes triage clear more answers at the same risk; it does not make a bound valid, so
triage fits it on reviews it does not test on (app/figures/triage.py).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.project import Project
from app.raters import judge_per_answer
from storage import adjudication, statistics

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


def _frame(project: Project, **which: bool):
    import pandas as pd

    with project.sessions() as session:
        judges = judge_per_answer(session)
        frame = pd.DataFrame(statistics.point_labels(session, **which))
        settled = adjudication.consensus_answers(session)
        consensus = adjudication.consensus_id(session)
    if settled:  # an adjudicated answer's reviewers are read as their consensus
        frame = frame[~frame["answer_id"].isin(settled) | (frame["kind"] != "human") | (frame["rater_id"] == consensus)]
    latest = frame["answer_id"].map(judges)
    return frame, (frame["kind"] == "judge") & (frame["rater_id"] == latest)


def reviewed_pairs(project: Project, exclude: Collection[str] = ()) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(confidence, agreed) per tag: the default rater's tags on points a reviewer also tagged in a
    submitted review, leaving out the answers in `exclude`."""
    frame, latest = _frame(project, reviewed_only=True)
    judge = frame[latest & frame["confidence"].notna()]
    human = frame[(frame["kind"] == "human") & frame["submitted"].astype(bool) & ~frame["answer_id"].isin(exclude)]
    both = judge.merge(human[["answer_id", "item", "tag"]], on=["answer_id", "item"], suffixes=("", "_human"))
    agreed = (both["tag"] == both["tag_human"]).astype(float)
    return {
        str(tag): (both.loc[rows, "confidence"].to_numpy(float), agreed[rows].to_numpy(float))
        for tag, rows in both.groupby("tag").groups.items()
    }


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
    the lowest calibrated confidence among the default rater's tags (absent when it gave none)."""
    calibration = fit(reviewed_pairs(project, exclude))
    frame, latest = _frame(project, judges_only=True)
    judge = frame[latest & frame["confidence"].notna()]
    calibrated = judge["confidence"].astype(float).copy()
    for tag, fitted in calibration.maps.items():
        rows = judge["tag"] == tag
        if rows.any():
            calibrated[rows] = fitted.predict(judge.loc[rows, "confidence"].to_numpy(float))
    certainty = calibrated.groupby(judge["answer_id"]).min()
    return calibration, {str(a): float(v) for a, v in certainty.items()}


def review_certainty(project: Project) -> dict[str, float | None]:
    """How sure the judges are of each answer, for a queue that puts the least certain first: the
    calibrated certainty, lowered to the share of judge runs (jury members, a verifier) that agree
    with the majority tag of a point wherever they differ."""
    certainty: dict[str, float | None] = dict(calibrate(project)[1])
    frame, _ = _frame(project, judges_only=True)
    if frame.empty:
        return certainty
    votes = frame.groupby(["answer_id", "item", "tag"]).size()
    per_point = votes.groupby(level=["answer_id", "item"])
    split = per_point.size() > 1  # more than one tag given to the point
    if split.any():
        share = (per_point.max() / per_point.sum())[split].groupby(level="answer_id").min()
        for answer, value in share.items():
            old = certainty.get(answer)
            certainty[answer] = float(value) if old is None else min(old, float(value))
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
    pairs = reviewed_pairs(project)
    out: dict[str, Any] = {"bins": BINS, "tags": {}}
    everything: tuple[list[float], list[float], list[float]] = ([], [], [])
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
