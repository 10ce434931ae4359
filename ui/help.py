"""Help: the keyboard shortcut sheet (F1) and the About box."""

from __future__ import annotations

import html

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from app.about import versions
from app.settings import ModelChoice

# Keys the data-point list reads itself (ReviewWindow's menus list the others).
REVIEW_KEYS = [
    ("1", "Tag the data point correct"),
    ("2", "Tag it incorrect (an error or a hallucination)"),
    ("3", "Tag it irrelevant"),
    ("4", "Add the text selected in the document as a missing data point"),
    ("Enter", "Accept the judge's tag"),
    ("J / K", "Next / previous data point"),
]


def _dialog(parent: QWidget | None, title: str, body: str) -> QDialog:
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    label = QLabel(body, wordWrap=True)
    label.setOpenExternalLinks(False)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(label)
    layout.addWidget(buttons)
    return dialog


def _rows(rows: list[tuple[str, str]]) -> str:
    cells = "".join(
        f"<tr><td style='padding:2px 14px 2px 0'><b>{html.escape(k)}</b></td><td>{html.escape(v)}</td></tr>"
        for k, v in rows
    )
    return f"<table>{cells}</table>"


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    """The review keys, then every menu action that has a shortcut, as the window binds them."""
    menu = [
        (a.shortcut().toString(QKeySequence.SequenceFormat.NativeText), a.text().removesuffix("…"))
        for a in actions
        if not a.shortcut().isEmpty()
    ]
    return REVIEW_KEYS + menu


def shortcut_sheet(parent: QWidget | None, actions: list[QAction]) -> QDialog:
    body = (
        "<h3>Keyboard shortcuts</h3>"
        "<p>Click a data point in the list, then review it without the mouse.</p>"
        f"{_rows(shortcut_rows(actions))}"
    )
    return _dialog(parent, "Assay — keyboard shortcuts", body)


def about_dialog(parent: QWidget | None, model: ModelChoice) -> QDialog:
    rows = versions(model)
    rows[1:1] = [("Qt", qVersion()), ("PySide6", PySide6.__version__)]
    body = (
        "<h3>Assay</h3><p>Review LLM answers about legal documents, offline. Documents stay on this "
        "computer unless you choose an API judge and allow it.</p>"
        f"{_rows(rows)}"
    )
    return _dialog(parent, "About Assay", body)
