"""Project ▸ Claim checker ▸ Learn from reviews…: `assay checker fit` in the window. The workspace's fit
(app/judging/learning.fit_checker, which opens its own sessions) runs on a pool thread with a progress bar;
the window stays responsive, and closing the dialog cancels a fit in flight, which then changes nothing."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.errors import AssayError
from app.judging.learning import FitResult
from app.workspace import Workspace

ABOUT = (
    "Refit the claim checker's decision, calibration and thresholds on this project's reviews (never its "
    "encoders), measure it held out by document beside the shipped checker, and let it speak for the project "
    "only if it is better (exact McNemar test). The shipped checker stays otherwise. Each fit is audited."
)


class FitSignals(QObject):
    progressed = Signal(int, int)
    finished = Signal(object)
    failed = Signal(str)


class FitWorker(QRunnable):
    def __init__(self, workspace: Workspace, actor: str, cancel: threading.Event) -> None:
        super().__init__()
        self.workspace, self.actor, self.cancel = workspace, actor, cancel
        self.signals = FitSignals()

    def run(self) -> None:
        try:
            result = self.workspace.fit_checker(self.actor, self.signals.progressed.emit, self.cancel)
        except AssayError as exc:
            self.signals.failed.emit(str(exc))
        else:
            self.signals.finished.emit(result)


def said(result: FitResult) -> str:
    """A fit's outcome in a sentence or two."""
    held = result.standing
    head = f"Fitted on {result.points} reviewed points of {result.answers} answers in {result.seconds:.0f} s."
    if held is None:
        return head
    figures = (
        f" Held out by document: flags {held.refit.recall:.0%} of wrong points (shipped {held.shipped.recall:.0%}),"
        f" false alarms {held.refit.false_alarms:.0%} (shipped {held.shipped.false_alarms:.0%})."
    )
    if result.adopted:
        return head + figures + f" Adopted: it now speaks for this project (p = {held.p_mcnemar:.3f})."
    return head + figures + " Not adopted: " + "; ".join(held.reasons) + "."


class LearnDialog(QDialog):
    """Fit, watch it go, read whether it was adopted; or go back to the shipped checker."""

    def __init__(self, parent: QWidget, workspace: Workspace, actor: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Learn from reviews")
        self.workspace, self.actor = workspace, actor
        self.cancel = threading.Event()
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self.progress = QProgressBar(self)
        self.progress.setFormat("%v of %m answers read")
        self.message = QLabel(ABOUT, self)
        self.message.setWordWrap(True)
        self.start = QPushButton("Fit", self)
        self.start.clicked.connect(self._on_start_clicked)
        self.back = QPushButton("Use the shipped checker", self)
        self.back.clicked.connect(self._on_back_clicked)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.addButton(self.start, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.back, QDialogButtonBox.ButtonRole.ResetRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for widget in (self.message, self.progress, buttons):
            layout.addWidget(widget)

    def _on_start_clicked(self) -> None:
        self.start.setEnabled(False)
        self.back.setEnabled(False)
        self.message.setText("Reading the reviewed answers with the shipped checker…")
        worker = FitWorker(self.workspace, self.actor, self.cancel)
        worker.signals.progressed.connect(self._on_fit_progressed)
        worker.signals.finished.connect(self._on_fit_finished)
        worker.signals.failed.connect(self._on_fit_failed)
        self.pool.start(worker)

    def _on_fit_progressed(self, done: int, total: int) -> None:
        self.progress.setMaximum(total)
        self.progress.setValue(done)

    def _on_fit_finished(self, result: FitResult) -> None:
        self.message.setText(said(result))
        self.start.setEnabled(True)
        self.back.setEnabled(True)

    def _on_fit_failed(self, message: str) -> None:
        self.message.setText(message)
        self.start.setEnabled(True)
        self.back.setEnabled(True)

    def _on_back_clicked(self) -> None:
        was = self.workspace.reset_checker(self.actor)
        self.message.setText("The shipped checker speaks for this project." if was else "It already did.")

    def done(self, result: int) -> None:
        self.cancel.set()  # a fit in flight stops at its next answer and changes nothing
        self.pool.waitForDone()
        super().done(result)


def open_learn_dialog(parent: QWidget, workspace: Workspace, actor: str) -> None:
    LearnDialog(parent, workspace, actor).exec()
