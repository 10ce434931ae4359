"""The report's figures, drawn for print: each on its own matplotlib Figure (never pyplot's global
state) at the width of the page's text, so that the PDF shows them at their true size and labels
set at 8 pt stay 8 pt; raters on the vertical axis, where long names have room and never overlap."""

from __future__ import annotations

import base64
import io
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from app.export.report.tables import mean_interval
from app.export.report.words import share
from app.figures.plots import axis_label
from app.figures.rater_names import rater_name
from app.figures.tag_colours import STRONG
from models.vocabulary import Tag

# The text width of the page, in inches: A4 and US Letter, each less 2 × 20 mm of margins.
TEXT_WIDTH = {"a4": (210 - 40) / 25.4, "letter": (215.9 - 40) / 25.4}
FONT = 8


def report_figures(
    per_answer: list[dict[str, Any]],
    points: list[dict[str, Any]],
    triage: dict[str, Any],
    paper: str = "a4",
    redact: Callable[[Any], Any] = lambda text: text,
    cannot_tag: set[str] = frozenset(),  # type: ignore[assignment]
) -> list[tuple[str, Any, str]]:
    """(title, Figure, caption) of each figure; raters by their readable names, redacted; `cannot_tag`, the
    raters that tag correct or incorrect only (no relevance is drawn for them, and the plot says why)."""
    width = TEXT_WIDTH[paper]

    def label(rater: str) -> str:
        return axis_label(redact(rater_name(rater)), 24)

    figures = []
    if per_answer:
        figures.append(("Scores by rater", scores_figure(per_answer, width, label, cannot_tag), _SCORES_CAPTION))
    if points:
        figures.append(("Tags by rater", tags_figure(points, width, label), _TAGS_CAPTION))
    if triage["judged"]:
        figures.append(("What triage would let through", triage_figure(triage, width), _TRIAGE_CAPTION))
    return figures


_SCORES_CAPTION = (
    "Mean correctness and relevance (F1) of each rater's answers, with 95 % intervals (t) over the answers rated. "
    "The answers each rater saw differ: compare raters on the same answers through the agreement section."
)
_TAGS_CAPTION = "How many data points each rater tagged correct, incorrect, irrelevant or missing."
_TRIAGE_CAPTION = (
    "Answers the judge clears (correctness 1 and relevance at least the threshold) and the 95 % upper bound on "
    "the share of them with an error, from answers drawn at random and reviewed."
)


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def scores_figure(
    per_answer: list[dict[str, Any]],
    width: float,
    label: Callable[[str], str],
    cannot_tag: set[str] = frozenset(),  # type: ignore[assignment]
) -> Any:
    by_rater: dict[str, dict[str, list[float]]] = {r["rater"]: {"correctness": [], "f1": []} for r in per_answer}
    for r in per_answer:
        for metric in ("correctness", "f1"):
            if r[metric] is not None:
                by_rater[r["rater"]][metric].append(r[metric])
    raters = sorted(by_rater, key=rater_name)  # every rater of an answer: one with no defined score says so
    fig = _figure(width, 0.9 + 0.38 * len(raters))
    fig.get_layout_engine().set(wspace=0.12)  # room between the panels: one's "1" is not the next one's "0"
    axes = fig.subplots(1, 2, sharey=True)
    for ax, metric, title in zip(axes, ("correctness", "f1"), ("Correctness", "Relevance (F1)"), strict=True):
        for y, rater in enumerate(raters):
            values = by_rater[rater][metric]
            if not values:
                why = "cannot tag irrelevant or missing" if metric == "f1" and rater in cannot_tag else "not defined"
                ax.text(0.02, y, why, va="center", fontsize=FONT - 1, color="#666")
                continue
            mean = sum(values) / len(values)
            low, high = mean_interval(values)
            if low is not None and high is not None:
                ax.errorbar(
                    mean,
                    y,
                    xerr=[[max(0.0, mean - low)], [max(0.0, high - mean)]],
                    fmt="o",
                    color="#1d3557",
                    capsize=3,
                    ms=4,
                )
            else:
                ax.plot(mean, y, "o", color="#1d3557", ms=4)
        ax.set_xlim(-0.03, 1.03)
        ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "0.25", "0.5", "0.75", "1"])
        ax.set_title(title, fontsize=FONT + 1)
        ax.tick_params(labelsize=FONT)
        ax.grid(axis="x", color="#ddd", linewidth=0.6)
    axes[0].set_yticks(range(len(raters)), [label(r) for r in raters])
    axes[0].set_ylim(len(raters) - 0.5, -0.5)
    return fig


def tags_figure(points: list[dict[str, Any]], width: float, label: Callable[[str], str]) -> Any:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for p in points:
        counts[p["rater"]][p["tag"]] += 1
    raters = sorted(counts, key=rater_name)
    fig = _figure(width, 1.1 + 0.38 * len(raters))
    ax = fig.subplots()
    left = [0] * len(raters)
    for tag in (t.value for t in Tag):
        values = [counts[r][tag] for r in raters]
        ax.barh(range(len(raters)), values, left=left, color=STRONG[tag], label=tag, height=0.6)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_yticks(range(len(raters)), [label(r) for r in raters])
    ax.set_ylim(len(raters) - 0.5, -0.5)
    ax.set_xlabel("data points", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.legend(fontsize=FONT, ncols=4, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(raters) < 3 else -0.2))
    return fig


def triage_figure(triage: dict[str, Any], width: float) -> Any:
    sweep = [s for s in triage["sweep"] if s["min_correctness"] == 1.0]
    fig = _figure(width, 2.6)
    ax = fig.subplots()
    thresholds = [s["min_relevance"] for s in sweep]
    ax.plot(thresholds, [s["cleared_share"] or 0 for s in sweep], marker="o", ms=3, label="answers cleared")
    ax.plot(
        thresholds,
        [s["miss_rate_upper_95"] for s in sweep],
        linestyle="--",
        color="#c1121f",
        label="share of cleared answers with an error, 95 % upper bound",
    )
    ax.set_xlabel("relevance the judge must give at least (correctness 1)", fontsize=FONT)
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(lambda v, _pos: share(v))
    ax.tick_params(labelsize=FONT)
    ax.grid(color="#ddd", linewidth=0.6)
    ax.legend(fontsize=FONT, loc="lower left")
    return fig


def data_uri(fig: Any) -> str:
    """The figure as SVG in a data URI: vector, so sharp at any print size; its text drawn as paths,
    so it looks the same on every machine."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg")
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode()
