"""Reviewer qualification for the project lead: each reviewer's agreement with gold (Cohen's kappa
with its 95 % bootstrap interval, per-tag recall with Wilson intervals, n), the share of gold mixed
into review queues, training mode and the gold raters; and, in training mode, the gold tags shown to
a reviewer once they submit a gold answer. The figures come from app/review/qualification.py."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.review.session import ReviewSession
from models.vocabulary import Tag
from ui.screen_fit import fit_to_screen

TAGS = [t.value for t in Tag]


def _interval(low_high: list[float] | None, share: bool = False) -> str:
    if not low_high:
        return ""
    low, high = low_high
    return f" [{low:.0%}–{high:.0%}]" if share else f" [{low:.2f}, {high:.2f}]"


class QualificationDialog(QDialog):
    """The lead's table of reviewers against gold, and the qualification settings."""

    def __init__(self, session: ReviewSession, parent: QWidget | None = None) -> None:
        """The settings are changed as the session's reviewer's (audited)."""
        super().__init__(parent)
        self.session = session
        self.setWindowTitle("Reviewers against gold")
        self.resize(1000, 420)
        fit_to_screen(self)  # never larger than a laptop's screen
        settings = session.qualification_settings()
        self.mix = QCheckBox("Mix gold answers into review queues, unannounced")
        self.mix.setChecked(settings.gold_share is not None)
        self.share = QSpinBox(minimum=0, maximum=95, singleStep=5, suffix=" % of each reviewer's queue")
        self.share.setValue(round(100 * settings.gold_share) if settings.gold_share is not None else 10)
        self.training = QCheckBox("Training mode: show the gold tags and their reason once an answer is submitted")
        self.training.setChecked(settings.training)
        self.gold = QLineEdit(", ".join(settings.gold_raters))
        self.gold.setPlaceholderText("imported raters whose labels are gold, comma-separated")
        form = QFormLayout()
        form.addRow(self.mix)
        form.addRow("Gold share", self.share)
        form.addRow("Gold raters", self.gold)
        form.addRow(self.training)
        self.table = QTableWidget()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.note = QLabel(
            "κ: Cohen's kappa on the gold points the reviewer tagged, 95 % bootstrap interval over answers; "
            "recall per gold tag with its 95 % Wilson interval (a gold point the reviewer has no record of is missed)."
        )
        self.note.setWordWrap(True)
        self.message = QLabel()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Apply | QDialogButtonBox.StandardButton.Close)
        buttons.button(QDialogButtonBox.StandardButton.Apply).clicked.connect(self.apply)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.note)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self.show_figures()

    def apply(self) -> bool:
        gold = [name.strip() for name in self.gold.text().split(",") if name.strip()]
        try:
            self.session.set_qualification(
                self.share.value() / 100 if self.mix.isChecked() else None, self.training.isChecked(), gold
            )
        except AssayError as exc:
            self.message.setText(str(exc))
            return False
        self.message.setText("Saved.")
        self.show_figures()
        return True

    def show_figures(self) -> None:
        rows = self.session.agreement_with_gold()
        headers = ["Reviewer", "Gold answers", "n", "κ [95 % CI]", *(f"recall {t}" for t in TAGS)]
        self.table.setColumnCount(len(headers))
        self.table.setHorizontalHeaderLabels(headers)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            kappa = "—" if row["kappa"] is None else f"{row['kappa']:.2f}{_interval(row['kappa_ci'])}"
            cells = [row["reviewer"], str(row["answers"]), str(row["n"]), kappa]
            for tag in TAGS:
                figures = row["recall"].get(tag)
                cells.append(
                    "—"
                    if figures is None
                    else f"{figures['recall']:.0%}{_interval(figures['ci'], True)} n {figures['n']}"
                )
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(r, c, item)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        if not rows:
            self.message.setText("No reviewer has reviewed a gold answer yet.")


def feedback_html(feedback: list[dict[str, Any]]) -> str:
    rows = "".join(
        f"<tr><td>{escape(f['text'][:120])}</td><td><b>{f['gold']}</b></td><td>{f['yours'] or '—'}</td>"
        f"<td>{escape(f['reason'] or '')}</td></tr>"
        for f in feedback
    )
    agreed = sum(f["gold"] == f["yours"] for f in feedback)
    return (
        f"<p>This answer was a gold item: you agreed with gold on {agreed} of {len(feedback)} data points.</p>"
        "<table border=1 cellpadding=4><tr><th>Data point</th><th>Gold</th><th>Yours</th><th>Why</th></tr>"
        f"{rows}</table>"
    )


def show_training_feedback(parent: QWidget, session: ReviewSession, answer_id: str | None) -> QMessageBox | None:
    """In training mode, after the session's reviewer submitted a gold answer: its gold tags and their reasons."""
    feedback = session.training_feedback(answer_id) if answer_id else None
    if not feedback:
        return None
    box = QMessageBox(QMessageBox.Icon.Information, "Training: the gold tags", "", parent=parent)
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(feedback_html(feedback))
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.open()
    return box
