"""The "Check this model" button of the picker: app.judging.model_check on a pool thread, its progress and figures
shown beside the model picker."""

from __future__ import annotations

import html
import threading

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.errors import AssayError
from app.judging.model_check import CHECK_ANSWERS, LONG_TIMED, ModelCheck
from app.judging.runs import JudgeSettings, Progress
from app.workspace import Workspace


class _CheckSignals(QObject):
    progressed = Signal(object)  # Progress
    failed = Signal(str)
    finished = Signal(object)  # ModelCheck


class CheckWorker(QRunnable):
    def __init__(
        self, workspace: Workspace, settings: JudgeSettings, name: str | None, size: int, long_timed: int
    ) -> None:
        super().__init__()
        self.workspace, self.settings, self.name = workspace, settings, name
        self.size, self.long_timed = size, long_timed
        self.cancel = threading.Event()
        self.signals = _CheckSignals()

    def run(self) -> None:
        try:
            result = self.workspace.check_model(
                self.settings, self.name, self.size, self.long_timed, self.signals.progressed.emit, self.cancel
            )
        except AssayError as exc:
            self.signals.failed.emit(str(exc))
            return
        except Exception as exc:  # a bug: said in the window rather than lost with a pool thread
            self.signals.failed.emit(f"the check stopped on an unexpected error: {exc!r}")
            return
        self.signals.finished.emit(result)


class ModelCheckPanel(QWidget):
    """A button that checks the chosen model on the project's human-labelled answers, and its figures."""

    checked = Signal(object)  # ModelCheck

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.button = QPushButton("Check this model")
        self.button.setToolTip(
            "Judge a few answers people have labelled in this project with this model: how often it agrees "
            "with them, and how long the whole project would take on this computer"
        )
        self.result = QLabel(wordWrap=True)
        self.result.setStyleSheet("padding: 6px; border: 1px solid #c9c2ae; background: #fbf8ef;")
        self.result.hide()
        row = QHBoxLayout()
        row.addWidget(self.button)
        row.addStretch()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.result)
        self.worker: CheckWorker | None = None
        self.size, self.long_timed = CHECK_ANSWERS, LONG_TIMED  # labelled answers, and long ones timed

    def start(self, settings: JudgeSettings, name: str | None = None) -> CheckWorker:
        """Check the model `settings` name, as the run `name` (default check:<model file>)."""
        worker = CheckWorker(self.workspace, settings, name, self.size, self.long_timed)
        worker.setAutoDelete(False)
        worker.signals.progressed.connect(self._on_check_progressed)
        worker.signals.failed.connect(self._on_check_failed)
        worker.signals.finished.connect(self._on_check_finished)
        self.worker = worker
        self.button.setEnabled(False)
        self.result.setText("Loading the model and judging labelled answers…")
        self.result.show()
        QThreadPool.globalInstance().start(worker)
        return worker

    def _on_check_progressed(self, progress: Progress) -> None:
        self.result.setText(f"Checking: {progress.done} of {progress.total} labelled answers judged…")

    def _on_check_failed(self, problem: str) -> None:
        self.worker = None
        self.button.setEnabled(True)
        self.result.setText(f"<b>The check could not run:</b> {html.escape(problem)}")

    def _on_check_finished(self, result: ModelCheck) -> None:
        self.worker = None
        self.button.setEnabled(True)
        first, *rest = [line for line in result.lines() if not line.startswith("standing:")]  # the dialog shows it
        self.result.setText(f"<b>{html.escape(first)}</b><br>" + "<br>".join(html.escape(line) for line in rest))
        self.checked.emit(result)
