"""Help: the keyboard shortcut sheet (F1), generated from the review keymap, and the About box."""

from __future__ import annotations

import html

import PySide6
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from app.about import versions
from app.review import keymap
from app.settings import ModelChoice


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


def shortcut_rows() -> list[tuple[str, str]]:
    """The keys the data points read, then the window's shortcuts: the keymap the window binds."""
    window = [(keys, label.removesuffix("…")) for keys, label in keymap.help_rows(keymap.WINDOW)]
    return keymap.help_rows(keymap.REVIEW) + window


def shortcut_sheet(parent: QWidget | None) -> QDialog:
    body = (
        "<h3>Keyboard shortcuts</h3>"
        "<p>Click a data point in the list, then review it without the mouse.</p>"
        f"{_rows(shortcut_rows())}"
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
