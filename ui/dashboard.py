"""The numbers a team takes away, in the window: scores by slice and rater, agreement, and the
report's plots (matplotlib on explicit Figures in Qt canvases)."""

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

from app import analytics
from app.errors import AssayError
from app.exports import report_figures
from app.project import Project
from app.scores import shown

SLICES = ["rater", "source", "document", "generator", "question"]


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
        layout.addWidget(self.agreement)
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
        self.figures = report_figures(self.project)
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
