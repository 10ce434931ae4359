"""The plots of the figures: tags per rater, score histograms, precision and recall by slice, the
judge against a human, the triage curve. The HTML/PDF report and the dashboard both show them."""

from __future__ import annotations

import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from app.figures import analytics as stats
from app.figures.rater_names import rater_name
from app.figures.tag_colours import STRONG
from app.figures.triage import triage as lemaj_triage
from app.project import Project
from storage import analytics
from storage.adjudication import CONSENSUS

Redact = Callable[[Any], Any]


def report_figures(project: Project, redact: Redact | None = None) -> list[tuple[str, Any]]:
    """The report's and the dashboard's plots, each drawn on its own Figure (never pyplot's global
    state); `redact` (an export's `Redaction`) hides personal data in their labels."""
    from matplotlib.figure import Figure

    redact = redact or (lambda rows: rows)
    with project.sessions() as session:
        points = redact(analytics.labelled_points(session))
    answer_scores = redact(stats.scores(project))
    figures: list[tuple[str, Any]] = []

    tags = [t.value for t in stats.TAG_ORDER]
    per_rater: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for p in points:
        per_rater[p["rater"]][p["tag"]] += 1
    raters = sorted(per_rater)
    # Wider with more raters; names wrapped (and tilted past six) so that no two labels overlap.
    fig = Figure(figsize=(max(7, 1.1 * len(raters)), 3.2), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(len(tags), 1)
    for i, tag in enumerate(tags):
        heights = [per_rater[r][tag] for r in raters]
        ax.bar([r + i * width for r in range(len(raters))], heights, width, label=tag, color=STRONG[tag])
    tilted = len(raters) > 6
    ax.set_xticks(
        [r + 0.4 - width / 2 for r in range(len(raters))],
        [axis_label(r) for r in raters],
        fontsize=7,
        rotation=30 if tilted else 0,
        ha="right" if tilted else "center",
    )
    ax.set_ylabel("data points")
    _legend(ax)
    figures.append(("Tags per rater", fig))

    fig = Figure(figsize=(7, 3), layout="constrained")
    axes = fig.subplots(1, 2)
    for ax, key in zip(axes, ("correctness", "f1"), strict=True):
        for rater in raters:
            values = [s[key] for s in answer_scores if s["rater"] == rater and s[key] is not None]
            ax.hist(values, bins=[0, 0.125, 0.375, 0.625, 0.875, 1.0001], alpha=0.5, label=rater_name(rater))
        ax.set_title("Correctness" if key == "correctness" else "Relevance (F1)", fontsize=9)
    _legend(axes[0])
    figures.append(("Score histograms", fig))

    by_source = redact(stats.scores(project, by="source"))
    fig = Figure(figsize=(5, 4))
    ax = fig.subplots()
    for row in by_source:
        if row["precision"] is not None and row["recall"] is not None:
            ax.scatter(row["recall"], row["precision"])
            label = f"{row['source']} · {rater_name(row['rater'])[:24]}"
            ax.annotate(label, (row["recall"], row["precision"]), fontsize=6)
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    ax.set_xlim(0, 1.05)
    ax.set_ylim(0, 1.05)
    ax.set_title("Precision–recall by source (DeCE figs. 4–5)", fontsize=9)
    fig.tight_layout()
    figures.append(("Precision and recall by slice", fig))

    with project.sessions() as session:
        kinds = analytics.rater_kinds(session)
    judges = [r for r in raters if kinds.get(r) == "judge"]
    # the adjudicated consensus is the human reference where there is one
    humans = sorted((r for r in raters if kinds.get(r) == "human"), key=lambda r: r != CONSENSUS)
    if judges and humans:
        aligned = stats.alignment(project, judges[0], humans[0])
        if aligned.get("confusion_matrix"):
            fig = Figure(figsize=(4.5, 4))
            ax = fig.subplots()
            matrix = aligned["confusion_matrix"]
            ax.imshow(matrix, cmap="Blues")
            ax.set_xticks(range(4), tags, fontsize=7)
            ax.set_yticks(range(4), tags, fontsize=7)
            ax.set_xlabel(f"judge: {rater_name(judges[0])}", fontsize=7)
            ax.set_ylabel(f"human: {rater_name(humans[0])}", fontsize=7)
            for i, row in enumerate(matrix):
                for j, value in enumerate(row):
                    ax.text(j, i, str(value), ha="center", va="center", fontsize=8)
            fig.tight_layout()
            figures.append(("Judge versus human", fig))

    sweep = [s for s in lemaj_triage(project)["sweep"] if s["min_correctness"] == 1.0]
    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    ax.plot([s["min_relevance"] for s in sweep], [s["cleared_share"] or 0 for s in sweep], marker="o", label="cleared")
    ax.plot([s["min_relevance"] for s in sweep], [s["miss_rate"] or 0 for s in sweep], marker="x", label="miss rate")
    ax.plot(
        [s["min_relevance"] for s in sweep],
        [s["miss_rate_upper_95"] for s in sweep],
        linestyle="--",
        label="miss rate, 95 % upper bound",
    )
    ax.set_xlabel("minimum relevance (correctness = 1)")
    _legend(ax)
    ax.set_title("Triage curve", fontsize=9)
    fig.tight_layout()
    figures.append(("Triage", fig))
    return figures


def axis_label(rater: str, width: int = 16) -> str:
    """A rater's readable name over short lines, for an axis."""
    return textwrap.fill(rater_name(rater), width, break_long_words=False, break_on_hyphens=False)


def _legend(ax: Any) -> None:
    if ax.get_legend_handles_labels()[0]:  # an empty project has nothing to name
        ax.legend(fontsize=7)
