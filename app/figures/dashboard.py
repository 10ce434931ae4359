"""Everything the dashboard shows, computed in one go away from the window: scores for every slice
and rater choice, agreement, estimates for every grouping, the judge's calibration, and the plots
rendered to PNG, so the window only fills tables and shows pictures.

In a child process, not a thread: pandas, scikit-learn and matplotlib hold Python's global lock for
long stretches (a second and more at 200,000 points, measured), which a thread of the window's own
process turns into a frozen window. Qt-free, as app/ is: progress goes through a plain callback and
a cancel event (STYLE.md § 3).
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.errors import AssayError
from app.figures import analytics, calibration, columnar, estimates
from app.figures.triage import triage as triage_of
from app.project import Project

SLICES = ("rater", "source", "document", "generator", "question")
ESTIMATE_GROUPS = ("generator", "source", "all")
ALL_RATERS = columnar.ALL_RATERS


class Cancelled(Exception):
    """The dashboard was closed or refreshed again before these figures were done."""


@dataclass
class DashboardFigures:
    raters: list[str] = field(default_factory=list)
    scores: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (slice, rater choice)
    agreement: dict[str, Any] | None = None
    agreement_error: str | None = None
    estimates: dict[str, dict[str, Any]] = field(default_factory=dict)
    comparisons: list[dict[str, Any]] = field(default_factory=list)  # pairs of generators
    generators: list[dict[str, Any]] = field(default_factory=list)  # each pair of generators question by question
    triage: dict[str, Any] = field(default_factory=dict)  # under the window's thresholds
    calibration: dict[str, Any] = field(default_factory=dict)
    plots: list[tuple[str, bytes]] = field(default_factory=list)  # title, PNG


Progress = Callable[[int, str], None]  # percent done, what is being computed


def compute(
    project: Project,
    on_progress: Progress,
    cancel: threading.Event | None = None,
    triage_rule: tuple[float, float] = (1.0, 0.8),
) -> DashboardFigures:
    """Every figure of the dashboard; raises Cancelled when `cancel` is set between two of them."""
    from app.figures.plots import report_figures

    cancel = cancel or threading.Event()
    out = DashboardFigures()
    steps: list[tuple[str, Callable[[], None]]] = []

    def scores() -> None:
        with project.sessions() as session:
            table = columnar.scores_by_slice(session, SLICES)
        out.raters = sorted({row["rater"] for row in table["rater"][ALL_RATERS]})
        out.scores = {(by, choice): rows for by, per_rater in table.items() for choice, rows in per_rater.items()}

    def agreement() -> None:
        try:
            out.agreement = analytics.agreement(project)
        except AssayError as exc:
            out.agreement_error = str(exc)

    def estimate(group: str) -> Callable[[], None]:
        return lambda: out.estimates.__setitem__(group, estimates.estimate(project, group))

    def comparisons() -> None:
        from app.figures.comparison import comparison, generator_pairs

        out.comparisons = estimates.comparisons(project)
        out.generators = [comparison(project, a, b) for a, b in generator_pairs(project)]

    def triage() -> None:
        out.triage = triage_of(project, *triage_rule)

    def reliability() -> None:
        out.calibration = calibration.reliability(project)

    def plots() -> None:
        figures = []
        if out.calibration.get("overall", {}).get("points"):
            figures.append(("Reliability diagram (calibration)", calibration.reliability_figure(out.calibration)))
        figures += report_figures(project)
        out.plots = [(title, _png(figure)) for title, figure in figures]

    steps = [
        ("scores", scores),
        ("agreement", agreement),
        *((f"estimates by {group}", estimate(group)) for group in ESTIMATE_GROUPS),
        ("paired comparison", comparisons),
        ("triage", triage),
        ("calibration", reliability),
        ("plots", plots),
    ]
    for done, (name, step) in enumerate(steps):
        if cancel.is_set():
            raise Cancelled
        on_progress(round(100 * done / len(steps)), name)
        step()
    on_progress(100, "done")
    return out


def compute_elsewhere(
    project: Project,
    on_progress: Progress,
    cancel: threading.Event | None = None,
    triage_rule: tuple[float, float] = (1.0, 0.8),
) -> DashboardFigures:
    """`compute` in a child process of its own (a fresh interpreter: never a fork of a Qt process)."""
    import multiprocessing

    cancel = cancel or threading.Event()
    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(
        target=_compute_and_send, args=(project.url, project.passphrase, triage_rule, send), daemon=True
    )
    child.start()
    send.close()  # the child holds the only writing end: its exit ends the pipe
    try:
        while not cancel.is_set():
            if not receive.poll(0.05):
                continue
            try:
                kind, *payload = receive.recv()
            except EOFError:
                raise RuntimeError("the dashboard's computation stopped before it was done") from None
            if kind == "progress":
                on_progress(*payload)
            elif kind == "done":
                return payload[0]
            elif kind == "expected":
                raise AssayError(payload[0])
            else:
                raise RuntimeError(f"the dashboard's computation failed: {payload[0]}")
        raise Cancelled
    finally:
        if child.is_alive():
            child.terminate()
        child.join(10)
        receive.close()


def _compute_and_send(url: str, passphrase: str | None, triage_rule: tuple[float, float], send: Any) -> None:
    project = Project.open(url, passphrase)
    try:
        progress = lambda percent, step: send.send(("progress", percent, step))  # noqa: E731
        send.send(("done", compute(project, progress, triage_rule=triage_rule)))
    except AssayError as exc:
        send.send(("expected", str(exc)))
    except Exception as exc:
        send.send(("bug", f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        project.close()
        send.close()


def _png(figure: Any) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()
