"""The numbers a team takes away, in the window: scores by slice and rater, agreement, estimates with
95 % intervals (prediction-powered, beside judge-only and human-only), the judge's calibration, and
the report's plots (matplotlib on explicit Figures in Qt canvases)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import analytics, calibration, estimates
from app.errors import AssayError
from app.exports import report_figures
from app.project import Project
from app.scores import shown

SLICES = ["rater", "source", "document", "generator", "question"]
ESTIMATE_GROUPS = ["generator", "source", "all"]
METRIC_NAMES = {
    "correctness": "Correctness",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "any_incorrect": "Share with an incorrect point",
}


class Dashboard(QWidget):
    """Scores, agreement and plots for the whole project; refreshed on demand."""

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.project = project
        self.slice = QComboBox()
        self.slice.addItems(SLICES)
        self.rater = QComboBox()
        self.figure_choice = QComboBox()
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        self.slice.currentTextChanged.connect(self._fill_scores)
        self.rater.currentTextChanged.connect(self._fill_scores)
        self.figure_choice.currentIndexChanged.connect(self._show_figure)
        self.table = QTableWidget()
        self.estimate_by = QComboBox()
        self.estimate_by.addItems(ESTIMATE_GROUPS)
        self.estimate_by.currentTextChanged.connect(self._fill_estimates)
        self.estimates = QTableWidget()
        self.calibration = QLabel(wordWrap=True)
        self.agreement = QLabel(wordWrap=True)
        self.canvas_holder = QVBoxLayout()
        controls = QHBoxLayout()
        for label, widget in (("Scores by", self.slice), ("rater", self.rater), ("plot", self.figure_choice)):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        controls.addStretch()
        controls.addWidget(refresh)
        layout = QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.table, 2)
        estimate_controls = QHBoxLayout()
        estimate_controls.addWidget(
            QLabel("<b>Estimates</b> (95 % intervals; human figures from randomly drawn reviews only) by")
        )
        estimate_controls.addWidget(self.estimate_by)
        estimate_controls.addStretch()
        layout.addLayout(estimate_controls)
        layout.addWidget(self.estimates, 2)
        layout.addWidget(self.agreement)
        layout.addWidget(self.calibration)
        layout.addLayout(self.canvas_holder, 3)
        self.figures: list = []

    def refresh(self) -> None:
        names = sorted({row["rater"] for row in analytics.scores(self.project, "rater")})
        self.rater.blockSignals(True)
        self.rater.clear()
        self.rater.addItems(["all raters", *names])
        self.rater.blockSignals(False)
        self._fill_scores()
        try:
            stats = analytics.agreement(self.project)
            self.agreement.setText(
                f"<b>Agreement</b> on {stats['n_items']} data points between {', '.join(stats['raters'])}: "
                f"{shown(stats['percent_agreement'])} observed · Cohen's κ {shown(stats['cohen_kappa'])} · "
                f"Fleiss' κ {shown(stats['fleiss_kappa'])} · Krippendorff's α {shown(stats['krippendorff_alpha'])}"
                f" · Gwet's AC1 {shown(stats['gwet_ac1'])}"
            )
        except AssayError as exc:
            self.agreement.setText(f"Agreement: {exc}.")
        self._fill_estimates()
        report = calibration.reliability(self.project)
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
            reliability = [("Reliability diagram (calibration)", calibration.reliability_figure(report))]
        else:
            self.calibration.setText("<b>Calibration</b>: no reviewed data point carries a judge confidence yet.")
            reliability = []
        self.figures = reliability + report_figures(self.project)
        self.figure_choice.blockSignals(True)
        self.figure_choice.clear()
        self.figure_choice.addItems([title for title, _ in self.figures])
        self.figure_choice.blockSignals(False)
        self._show_figure(0)

    def _fill_scores(self, *_: object) -> None:
        by = self.slice.currentText()
        rater = self.rater.currentText()
        rows = analytics.scores(self.project, by, None if rater in ("", "all raters") else [rater])
        columns = ([] if by == "rater" else [by]) + ["rater", "answers", "correctness", "precision", "recall", "f1"]
        self.table.clear()
        self.table.setColumnCount(len(columns))
        self.table.setHorizontalHeaderLabels(columns)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, column in enumerate(columns):
                value = row.get(column)
                text = shown(value) if column in ("correctness", "precision", "recall", "f1") else str(value)
                self.table.setItem(r, c, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    def _fill_estimates(self, *_: object) -> None:
        result = estimates.estimate(self.project, self.estimate_by.currentText())
        columns = ["group", "figure", "reviewed", "PPI estimate [95 % CI]", "judge only", "human only"]
        rows = [(g, metric, f) for g in result["groups"] for metric, f in g["metrics"].items()]
        self.estimates.clear()
        self.estimates.setColumnCount(len(columns))
        self.estimates.setHorizontalHeaderLabels(columns)
        self.estimates.setRowCount(len(rows))
        for r, (group, metric, figures) in enumerate(rows):
            cells = [
                group["group"],
                METRIC_NAMES[metric],
                f"{figures['reviewed']} of {figures['judged']}",
                _interval(figures["ppi"]),
                _interval(figures["judge_only"]),
                _interval(figures["human_only"]),
            ]
            for c, text in enumerate(cells):
                self.estimates.setItem(r, c, QTableWidgetItem(text))
        self.estimates.resizeColumnsToContents()

    def _show_figure(self, index: int) -> None:
        from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg

        while self.canvas_holder.count():
            widget = self.canvas_holder.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        if 0 <= index < len(self.figures):
            canvas = FigureCanvasQTAgg(self.figures[index][1])
            canvas.setMinimumHeight(320)
            self.canvas_holder.addWidget(canvas)
            canvas.show()


def _interval(figures: dict | None) -> str:
    if not figures:
        return "—"
    low, high = figures["ci"]
    return f"{figures['estimate']:.2f} [{low:.2f}, {high:.2f}]"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"
