"""The numbers a team takes away, in the window: scores by slice and rater, agreement, estimates with
95 % intervals (prediction-powered, beside judge-only and human-only), the judge's calibration, and
the report's plots. A child process computes them all (app/figures/dashboard.py) and draws the plots to pictures,
so at a million data points the window keeps answering while a progress bar fills."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, QRunnable, QSize, Qt, QThreadPool, Signal
from PySide6.QtGui import QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.figures import dashboard as figures_of
from app.figures.rater_names import rater_name
from app.figures.scores import shown
from app.workspace import Workspace
from ui.generator_comparison import GeneratorComparison

SLICES = list(figures_of.SLICES)
ESTIMATE_GROUPS = list(figures_of.ESTIMATE_GROUPS)
METRIC_NAMES = {
    "correctness": "Correctness",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "any_incorrect": "Share with an incorrect point",
}


WAITING = "<b>Computing the figures…</b> Scores, agreement, estimates and plots appear here in a few seconds."
# What each statistic says about the review, in a sentence a reviewer acts on.
MEANING = (
    "<small><b>What these figures say.</b> "
    "<b>Gwet's AC1</b> and <b>Krippendorff's α</b>: how far the raters agree beyond what chance alone would give "
    "(1 is perfect, 0 is chance); below 0.6 the tags depend on who reviews, so sharpen the guidelines before "
    "comparing people. "
    "<b>PPI</b> (prediction-powered inference): a figure for the whole set from the judge's tags on every answer, "
    "corrected by people's reviews of answers drawn at random; its 95 % interval is where the true figure lies "
    "19 times in 20. "
    "<b>ECE</b> (expected calibration error): how far the judge's confidence is from how often reviewers kept its "
    "tag; at 5 %, a tag given with 90 % confidence is kept about 85 to 95 % of the time.</small>"
)


class Picture(QLabel):
    """A plot drawn to a picture, scaled to the room it has (never cut at the top or bottom)."""

    def __init__(self, picture: QPixmap) -> None:
        super().__init__(alignment=Qt.AlignmentFlag.AlignCenter)
        self.picture = picture
        self.setMinimumSize(240, 300)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.picture.size()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.picture.isNull():
            return
        fitted = self.picture.size().scaled(self.size(), Qt.AspectRatioMode.KeepAspectRatio)
        if fitted.width() >= self.picture.width():  # never blown up past its drawn size
            fitted = self.picture.size()
        smooth = Qt.TransformationMode.SmoothTransformation
        self.setPixmap(self.picture.scaled(fitted, Qt.AspectRatioMode.KeepAspectRatio, smooth))


class _Signals(QObject):
    progressed = Signal(int, str)
    finished = Signal(object)
    failed = Signal(str)


class DashboardWorker(QRunnable):
    """Waits on a pool thread for the process computing every figure; the window only shows the result."""

    def __init__(self, workspace: Workspace, triage_rule: tuple[float, float]) -> None:
        super().__init__()
        self.workspace = workspace
        self.triage_rule = triage_rule
        self.cancel = threading.Event()
        self.signals = _Signals()

    def run(self) -> None:
        try:
            result = self.workspace.dashboard_figures(self.signals.progressed.emit, self.cancel, self.triage_rule)
        except figures_of.Cancelled:
            return
        except AssayError as exc:
            self.signals.failed.emit(f"The dashboard could not be computed: {exc}.")
            return
        except Exception as exc:  # a bug: said in the dashboard, and raised for the log
            self.signals.failed.emit(f"The dashboard could not be computed: {exc}")
            raise
        self.signals.finished.emit(result)


class Dashboard(QWidget):
    """Scores, agreement and plots for the whole project, computed off the window's thread when the
    tab is opened or Refresh is pressed; a progress bar says how far along that is."""

    refreshed = Signal()  # the figures on screen are the ones just computed

    def __init__(
        self, workspace: Workspace, triage_rule: Callable[[], tuple[float, float]] = lambda: (1.0, 0.8)
    ) -> None:
        super().__init__()
        self.workspace = workspace
        self.triage_rule = triage_rule  # the window's thresholds, read at each refresh
        self.triage = QLabel(wordWrap=True)
        self.figures: figures_of.DashboardFigures | None = None
        self.worker: DashboardWorker | None = None
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.slice = QComboBox()
        self.slice.addItems(SLICES)
        self.rater = QComboBox()
        self.figure_choice = QComboBox()
        self.figure_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.clicked.connect(self.refresh)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setFormat("computing %p %")
        self.progress.hide()
        self.slice.currentTextChanged.connect(self._fill_scores)
        self.rater.currentTextChanged.connect(self._fill_scores)
        self.figure_choice.currentIndexChanged.connect(self._show_figure)
        self.table = QTableWidget()
        self.estimate_by = QComboBox()
        self.estimate_by.addItems(ESTIMATE_GROUPS)
        self.estimate_by.currentTextChanged.connect(self._fill_estimates)
        self.estimates = QTableWidget()
        self.comparison = QLabel(wordWrap=True)
        self.generators = GeneratorComparison()  # generators question by question, with the regressions
        self.calibration = QLabel(wordWrap=True)
        self.agreement = QLabel(wordWrap=True)
        self.canvas_holder = QVBoxLayout()
        self.waiting = QLabel(WAITING, alignment=Qt.AlignmentFlag.AlignCenter, wordWrap=True)
        self.meaning = QLabel(MEANING, wordWrap=True)  # what each statistic says about the review
        self.meaning.setTextFormat(Qt.TextFormat.RichText)
        self.meaning.setStyleSheet("color: #444;")
        controls = QHBoxLayout()
        for label, widget in (("Scores by", self.slice), ("rater", self.rater), ("plot", self.figure_choice)):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addStretch()
        controls.addWidget(self.progress)
        controls.addWidget(self.refresh_button)
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.waiting, 1)
        # Hidden until the first figures are on it (never an empty page that says done); it scrolls
        # rather than make the window taller than a laptop's screen.
        self.content = QScrollArea(widgetResizable=True, frameShape=QFrame.Shape.NoFrame)
        self.content.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the text wraps instead
        layout.addWidget(self.content, 20)
        inner = QWidget()
        self.content.setWidget(inner)
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table.setMinimumHeight(140)
        self.estimates.setMinimumHeight(140)
        layout.addWidget(self.table, 2)
        estimate_controls = QHBoxLayout()
        estimate_controls.addWidget(
            QLabel("<b>Estimates</b> (95 % intervals; human figures from randomly drawn reviews only) by")
        )
        estimate_controls.addWidget(self.estimate_by)
        estimate_controls.addStretch()
        layout.addLayout(estimate_controls)
        layout.addWidget(self.estimates, 2)
        layout.addWidget(self.comparison)
        layout.addWidget(self.generators)
        layout.addWidget(self.triage)
        layout.addWidget(self.agreement)
        layout.addWidget(self.calibration)
        layout.addWidget(self.meaning)
        layout.addLayout(self.canvas_holder, 3)
        self.content.hide()

    def refresh(self) -> None:
        """Compute every figure again in the background; figures already shown stay until then."""
        self.stop()
        worker = DashboardWorker(self.workspace, self.triage_rule())
        worker.signals.progressed.connect(self._on_worker_progressed)
        worker.signals.finished.connect(self._on_worker_finished)
        worker.signals.failed.connect(self._on_worker_failed)
        self.worker = worker
        self.progress.setValue(0)
        self.progress.setFormat("starting · %p %")
        self.progress.show()
        if self.figures is None:
            self.waiting.setText(WAITING)
        self.pool.start(worker)

    def stop(self) -> None:
        """Cancel a computation in flight (its figures are dropped): on refresh and on close."""
        if self.worker is not None:
            self.worker.cancel.set()
            for signal in (self.worker.signals.progressed, self.worker.signals.finished, self.worker.signals.failed):
                signal.disconnect()
            self.worker = None
        self.progress.hide()

    def wait(self, ms: int = 60_000) -> None:
        self.pool.waitForDone(ms)

    def _on_worker_progressed(self, percent: int, step: str) -> None:
        # The figures still have to come across and be laid out: 100 % is said once they are on screen.
        if step == "done":
            step, percent = "showing the figures", 99
        self.progress.setValue(min(percent, 99))
        self.progress.setFormat(f"{step} · %p %")
        if self.figures is None:
            self.waiting.setText(f"{WAITING}<br><small>{html.escape(step)}…</small>")

    def _on_worker_failed(self, sentence: str) -> None:
        self.worker = None
        self.progress.hide()
        self.agreement.setText(sentence)
        self.waiting.setText(html.escape(sentence))

    def _on_worker_finished(self, figures: figures_of.DashboardFigures) -> None:
        self.worker = None
        self.figures = figures
        self.rater.blockSignals(True)
        chosen = self.rater.currentData()
        self.rater.clear()
        for rater in (figures_of.ALL_RATERS, *figures.raters):  # shown by readable name, full name in the tooltip
            self.rater.addItem(rater_name(rater), rater)
            self.rater.setItemData(self.rater.count() - 1, rater, Qt.ItemDataRole.ToolTipRole)
        if chosen in figures.raters:
            self.rater.setCurrentIndex(self.rater.findData(chosen))
        self.rater.blockSignals(False)
        self._fill_scores()
        stats = figures.agreement
        if stats is None:
            self.agreement.setText(f"Agreement: {figures.agreement_error}.")
        else:
            self.agreement.setText(agreement_text(stats))
            self.agreement.setToolTip("Raters: " + ", ".join(stats["raters"]))
        self._fill_estimates()
        self.triage.setText(triage_text(figures.triage))
        self.generators.show_pairs(figures.generators)
        report = figures.calibration
        overall = report["overall"]
        if overall["points"]:
            per_tag = " · ".join(
                f"{tag} {_pct(t['ece_raw'])} → {_pct(t['ece_calibrated'])} ({t['points']})"
                for tag, t in report["tags"].items()
            )
            self.calibration.setText(
                f"<b>Calibration</b> of the judge's confidence on {overall['points']} reviewed data points: "
                f"expected calibration error {_pct(overall['ece_raw'])} as given, "
                f"{_pct(overall['ece_calibrated'])} calibrated (isotonic, cross-fitted). Per tag: {per_tag}. "
                "Triage and the queue's certainty use the calibrated value."
            )
        else:
            self.calibration.setText("<b>Calibration</b>: no reviewed data point carries a judge confidence yet.")
        self.figure_choice.blockSignals(True)
        self.figure_choice.clear()
        self.figure_choice.addItems([title for title, _ in figures.plots])
        self.figure_choice.blockSignals(False)
        self._show_figure(0)
        self.waiting.hide()
        self.content.show()
        self.progress.hide()
        self.refreshed.emit()

    def _fill_scores(self, *_: object) -> None:
        if self.figures is None:
            return
        by = self.slice.currentText()
        rows = self.figures.scores.get((by, self.rater.currentData() or figures_of.ALL_RATERS), [])
        columns = ([] if by == "rater" else [by]) + ["rater", "answers", "correctness", "precision", "recall", "f1"]
        self.table.setUpdatesEnabled(False)
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels(columns)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, column in enumerate(columns):
                value = row.get(column)
                text = shown(value) if column in ("correctness", "precision", "recall", "f1") else str(value)
                if column == "rater":
                    text = rater_name(str(value))
                elif column == by:
                    text = group_name(by, text)
                item = QTableWidgetItem(text)
                if text != str(value):
                    item.setToolTip(str(value))  # the full name, one hover away
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.setUpdatesEnabled(True)

    def _fill_estimates(self, *_: object) -> None:
        if self.figures is None:
            return
        result = self.figures.estimates[self.estimate_by.currentText()]
        columns = ["group", "figure", "reviewed", "PPI estimate [95 % CI]", "judge only", "human only"]
        rows = [(g, metric, f) for g in result["groups"] for metric, f in g["metrics"].items()]
        self.estimates.clear()
        self.estimates.setColumnCount(len(columns))
        self.estimates.setHorizontalHeaderLabels(columns)
        self.estimates.setRowCount(len(rows))
        for r, (group, metric, figures) in enumerate(rows):
            cells = [
                group_name(self.estimate_by.currentText(), str(group["group"])),
                METRIC_NAMES[metric],
                f"{figures['reviewed']} of {figures['judged']}",
                _interval(figures["ppi"]),
                _interval(figures["judge_only"]),
                _interval(figures["human_only"]),
            ]
            for c, text in enumerate(cells):
                self.estimates.setItem(r, c, QTableWidgetItem(text))
        self.estimates.resizeColumnsToContents()
        self.comparison.setText(comparison_text(self.figures.comparisons))

    def _show_figure(self, index: int) -> None:
        while self.canvas_holder.count():
            widget = self.canvas_holder.takeAt(0).widget()
            if widget is not None:
                widget.hide()  # deleted only at the next event loop turn: until then it would paint at (0, 0)
                widget.deleteLater()
        if self.figures is not None and 0 <= index < len(self.figures.plots):
            picture = QPixmap()
            picture.loadFromData(self.figures.plots[index][1], "PNG")  # drawn by the worker, not here
            self.canvas_holder.addWidget(Picture(picture))


def group_name(by: str, group: str) -> str:
    """A slice's name as a reader takes it: "unknown" is an answer with no generator (or source) recorded."""
    return f"no {by} recorded" if group == "unknown" else group


def kappa_reason(stats: dict) -> str:
    """Why Cohen's κ has no value, in words."""
    raters = len(stats["raters"])
    if raters != 2:
        return f"κ is for two raters (here {raters})"
    if not stats["n_items"]:
        return "κ not defined: no data point tagged by both"
    return "κ not defined: only one tag used"


def agreement_text(stats: dict) -> str:
    """The agreement line: who, on how many points, each figure, and a reason for each missing one."""
    names = ", ".join(html.escape(rater_name(r)) for r in stats["raters"])
    kappa = f"κ {shown(stats['cohen_kappa'])}" if stats["cohen_kappa"] is not None else kappa_reason(stats)
    text = (
        f"<b>Agreement</b> on {stats['n_items']} data points between {names}: "
        f"{shown(stats['percent_agreement'])} observed · Cohen's {kappa} · "
        f"Fleiss' κ {shown(stats['fleiss_kappa'])} · Krippendorff's α {shown(stats['krippendorff_alpha'])}"
        f" · Gwet's AC1 {shown(stats['gwet_ac1'])}"
    )
    for jury, jurors in (stats.get("left_out") or {}).items():
        text += (
            f"<br>{html.escape(rater_name(jury))} is left out: its tags are made from its jurors' "
            f"({html.escape(', '.join(rater_name(j) for j in jurors))}), so it would agree with them by construction."
        )
    return text


def triage_text(result: dict) -> str:
    """The triage rule's cleared share and its miss rate with the 95 % bounds a firm can sign."""
    rule = result["rule"]
    head = (
        f"<b>Triage</b> (correctness ≥ {rule['min_correctness']:.2f}, relevance ≥ {rule['min_relevance']:.2f}): "
        f"clears {result['cleared_count']} of {result['judged']} judged answers"
    )
    if not result["reviewed_cleared"]:
        return f"{head}; no randomly reviewed answer among them yet, so no bound on what it lets through."
    return (
        f"{head}; {result['missed']} misses in {result['reviewed_cleared']} randomly reviewed cleared answers: "
        f"miss rate at most {_pct(result['miss_rate_upper_95'])} (95 %, over answers), "
        f"{_pct(result['miss_rate_upper_95_by_document'])} with the contract as unit. "
        f"{html.escape(result['reviews_basis'])}."
    )


def comparison_text(pairs: list[dict]) -> str:
    """Each pair of generators on the questions both answered: the difference with its interval."""
    if not pairs:
        return "<b>Paired comparison</b>: needs two generators that answered the same questions."
    lines = []
    for pair in pairs:
        parts = []
        for metric in ("correctness", "any_incorrect"):
            figures = pair["metrics"][metric]
            reviewed = " and ".join(map(str, figures["reviewed"]))
            parts.append(
                f"{METRIC_NAMES[metric]} {_interval(figures['ppi'], signed=True)} "
                f"(judge only {_interval(figures['judge_only'], signed=True)}, "
                f"human only {_interval(figures['human_only'], signed=True)}; {reviewed} random reviews)"
            )
        heading = f"<b>{html.escape(pair['difference'])}</b> on {pair['questions']} shared questions: "
        lines.append(heading + " · ".join(parts))
    return "<b>Paired comparison</b> (difference, 95 % interval; PPI unless said)<br>" + "<br>".join(lines)


def _interval(figures: dict | None, signed: bool = False) -> str:
    if not figures:
        return "—"
    low, high = figures["ci"]
    form = "+.2f" if signed else ".2f"
    return f"{figures['estimate']:{form}} [{low:{form}}, {high:{form}}]"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"
