"""Project ▸ Raters…: every automatic rater's standing on human labels, and the one that speaks for the
project (app/raters.py). A rater near chance is greyed; the lead may still choose it, and the choice is
audited."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app import raters
from app.figures.rater_names import rater_name
from app.review.session import ReviewSession

AUTOMATIC = "Automatic: the best measured"
GREY = QColor("#8a8a8a")


class RatersDialog(QDialog):
    def __init__(self, parent: QWidget, session: ReviewSession) -> None:
        super().__init__(parent)
        self.setWindowTitle("Raters")
        self.session = session
        standings = session.rater_standings()
        default = session.speaking_rater()
        chosen = session.chosen_rater()

        table = QTableWidget(len(standings), 3, self)
        table.setHorizontalHeaderLabels(["Rater", "Answers rated", "Standing on human labels"])
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setWordWrap(False)  # one line a rater; the whole standing in its tooltip
        table.verticalHeader().hide()
        for row, s in enumerate(standings):
            cells = [rater_name(s.name), f"{s.rated:,}", s.words]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(s.name if column == 0 else text)
                if s.trusted is False:
                    item.setForeground(GREY)  # near chance: shown, never a finding unless chosen
                table.setItem(row, column, item)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)

        self.choice = QComboBox(self)
        self.choice.addItem(AUTOMATIC, None)
        for s in standings:
            self.choice.addItem(rater_name(s.name), s.name)
        self.choice.setCurrentIndex(max(0, self.choice.findData(chosen)) if chosen else 0)
        speaking = rater_name(default.name) if default else "none yet"
        rule = QLabel(raters.RULE, wordWrap=True)
        rule.setStyleSheet("color: #555;")

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout()
        form.addRow("Speaks for the project now:", QLabel(speaking))
        form.addRow("Choose:", self.choice)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(rule)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.resize(960, 360)

    def accept(self) -> None:
        self.session.choose_rater(self.choice.currentData())
        super().accept()


def open_raters_dialog(parent: QWidget, session: ReviewSession) -> RatersDialog:
    dialog = RatersDialog(parent, session)
    dialog.open()
    return dialog
