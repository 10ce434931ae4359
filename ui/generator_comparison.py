"""The dashboard's comparison of generators question by question (app/figures/comparison.py): per pair,
B against A as wins, ties and losses with the win rate's 95 % interval, the paired score differences,
and the regressions, most severe first; a double click on one opens it side by side."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.figures.comparison import export_regressions

SCORE_NAMES = {"correctness": "Correctness", "f1": "F1", "recall": "Recall"}
COLUMNS = ("question", "A", "B", "wrong in B", "left out in B", "Δ correctness", "Δ F1")


class GeneratorComparison(QWidget):
    """Each pair of generators compared, and the questions where B got worse."""

    regressionOpened = Signal(str, str, str)  # noqa: N815 - B's answer id, generator A, generator B

    def __init__(self) -> None:
        super().__init__()
        self.summary = QLabel(wordWrap=True)
        self.regressions = QTableWidget(0, len(COLUMNS))
        self.regressions.setHorizontalHeaderLabels(list(COLUMNS))
        self.regressions.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.regressions.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.regressions.verticalHeader().hide()
        header = self.regressions.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)  # ids and figures whole
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.regressions.setMaximumHeight(130)  # a few rows: the dashboard's other tables keep their room
        self.regressions.cellDoubleClicked.connect(self._on_row_double_clicked)
        self.regressions.setToolTip("Double-click a question to see its two answers side by side.")
        self._opens: list[tuple[str, str, str]] = []
        self._pairs: list[dict[str, Any]] = []
        self._pair_of_row: list[int] = []
        self.export_button = QPushButton("Export regressions…")
        self.export_button.setToolTip("The regressions of the selected row's pair (else the first) as CSV or XLSX")
        self.export_button.clicked.connect(self._on_export_clicked)
        heading = QHBoxLayout()
        heading.addWidget(self.summary, 1)
        heading.addWidget(self.export_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(heading)
        layout.addWidget(self.regressions)
        self.regressions.hide()  # until the dashboard's figures are computed
        self.export_button.hide()

    def show_pairs(self, pairs: list[dict[str, Any]]) -> None:
        if not pairs:
            self.summary.setText(
                "<b>Generators question by question</b>: needs two generators that answered the same questions."
            )
            self.regressions.hide()
            self.export_button.hide()
            return
        self.summary.setText("<br>".join(pair_text(p) for p in pairs))
        self._pairs = pairs
        rows = [(p, r) for p in pairs for r in p["regressions"]]
        self._opens = [(r["answer_b"], p["a"], p["b"]) for p, r in rows]
        self._pair_of_row = [n for n, p in enumerate(pairs) for _ in p["regressions"]]
        self.regressions.setRowCount(len(rows))
        for n, (_pair, r) in enumerate(rows):
            values = (
                r["question"],
                r["answer_a"],
                r["answer_b"],
                str(r["wrong_in_b"]),
                str(r["left_out_in_b"]),
                _signed(r["correctness_change"]),
                _signed(r["f1_change"]),
            )
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                if column == 0:
                    item.setToolTip(f"{r['question']}\n{r['document']}\ntags from {r['basis']}")
                self.regressions.setItem(n, column, item)
        self.regressions.setVisible(bool(rows))
        self.export_button.setVisible(bool(rows))

    def export_to(self, path: Path) -> Path:
        """Write the regressions of the selected row's pair (else the first pair's)."""
        row = self.regressions.currentRow()
        pair = self._pairs[self._pair_of_row[row] if 0 <= row < len(self._pair_of_row) else 0]
        return export_regressions(pair, path)

    def _on_export_clicked(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, "Export regressions", "regressions.xlsx", "Excel (*.xlsx);;CSV (*.csv)"
        )
        if not path:
            return
        try:
            written = self.export_to(Path(path))
        except (AssayError, OSError) as exc:
            self.summary.setText(f"{self.summary.text()}<br>Not exported: {html.escape(str(exc))}")
            return
        self.export_button.setToolTip(f"Wrote {written}")

    def _on_row_double_clicked(self, row: int, _column: int) -> None:
        if 0 <= row < len(self._opens):
            self.regressionOpened.emit(*self._opens[row])


def pair_text(p: dict[str, Any]) -> str:
    rate = p["win_rate"]
    if rate["estimate"] is None:
        share = "win rate — (no question decided)"
    else:
        low, high = rate["interval"]
        share = f"win rate {rate['estimate']:.0%} [{low:.0%}, {high:.0%}] (Wilson 95 %, ties left out)"
    scores = []
    for metric, name in SCORE_NAMES.items():
        s = p["scores"].get(metric)
        if s and s["difference"] is not None:
            low, high = s["interval"]
            scores.append(f"{name} {s['difference']:+.2f} [{low:+.2f}, {high:+.2f}]")
    heading = f"<b>{html.escape(p['b'])} against {html.escape(p['a'])}</b> on {p['questions']} questions: "
    counts = f"B better {p['wins']} · tie {p['ties']} · A better {p['losses']}; {share}"
    differences = f"; B − A {', '.join(scores)}" if scores else ""
    return f"{heading}{counts}{differences}; {len(p['regressions'])} regressions"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"
