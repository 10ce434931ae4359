"""The triage thresholds dialog: the scores an answer's judge must reach for it to be cleared."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout, QLabel, QWidget


class ThresholdsDialog(QDialog):
    """LeMAJ's triage rule, as the user wants it: correctness and relevance (F1) thresholds."""

    def __init__(self, parent: QWidget, min_correctness: float, min_relevance: float) -> None:
        super().__init__(parent)
        self.setWindowTitle("Triage thresholds")
        self.correctness = QDoubleSpinBox(minimum=0, maximum=1, singleStep=0.05, decimals=2, value=min_correctness)
        self.relevance = QDoubleSpinBox(minimum=0, maximum=1, singleStep=0.05, decimals=2, value=min_relevance)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(QLabel("An answer is <b>cleared</b> when the judge's scores reach both; the rest are flagged."))
        form.addRow("Correctness at least", self.correctness)
        form.addRow("Relevance (F1) at least", self.relevance)
        form.addRow(buttons)

    def values(self) -> tuple[float, float]:
        return self.correctness.value(), self.relevance.value()
