"""The window's File menu: open another project, import answers into this one (through the review
session, which tells every pane), quit (Ctrl+Q)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QFileDialog, QMainWindow, QMenu

from app.errors import AssayError
from app.workspace import Workspace, open_workspace

ReviewWindow = Any  # the review window (ui/review/window.py, which imports this module)

DATASETS = "Answers (*.jsonl *.csv *.xlsx);;All files (*)"


def add_file_menu(window: ReviewWindow, new_window: Callable[[Workspace], QMainWindow]) -> QMenu:
    """File ▸ Open project… (Ctrl+O; `new_window` makes the window of the project opened), Import
    answers…, Import a dataset folder…, Quit (Ctrl+Q)."""
    menu = window.menuBar().addMenu("&File")
    for text, keys, slot in (
        ("Open project…", QKeySequence.StandardKey.Open, lambda: open_another(window, new_window)),
        ("Import answers…", None, lambda: import_answers(window, folder=False)),
        ("Import a dataset folder…", None, lambda: import_answers(window, folder=True)),
    ):
        act = QAction(text, window)
        if keys is not None:
            act.setShortcut(QKeySequence(keys))
        act.triggered.connect(slot)
        menu.addAction(act)
    menu.addSeparator()
    quit_action = QAction("Quit", window)
    quit_action.setShortcut(QKeySequence("Ctrl+Q"))  # the same on every desktop, Windows' included
    quit_action.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
    quit_action.triggered.connect(QApplication.closeAllWindows)  # each window stops its runs as it closes
    menu.addAction(quit_action)
    return menu


def _folder(window: ReviewWindow) -> str:
    return str(window.session.folder() or Path.home())


def open_another(
    window: ReviewWindow, new_window: Callable[[Workspace], QMainWindow], path: str | None = None
) -> QMainWindow | None:
    """Another project in a window of its own, for the same reviewer; this one closes."""
    if path is None:
        path, _ = QFileDialog.getOpenFileName(window, "Open a project", _folder(window), "Assay projects (*.assay)")
    if not path:
        return None
    try:
        workspace = open_workspace(Path(path))
    except AssayError as exc:
        window.say(f"Not opened: {exc}")
        return None
    opened = new_window(workspace)
    opened.resize(window.size())
    opened.show()
    window.close()
    return opened


def import_answers(window: ReviewWindow, folder: bool, path: str | None = None) -> bool:
    """A dataset into this project (answers, with their documents), the queue read again."""
    if path is None:
        if folder:
            path = QFileDialog.getExistingDirectory(window, "Import a dataset folder", _folder(window))
        else:
            path, _ = QFileDialog.getOpenFileName(window, "Import answers", _folder(window), DATASETS)
    if not path:
        return False
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        return window.session.import_answers(Path(path))
    finally:
        QApplication.restoreOverrideCursor()
