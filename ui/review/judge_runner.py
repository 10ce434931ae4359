"""A judge run from the review window: the judge dialog, one JudgeWorker at a time on the thread
pool, its progress, device and Cancel button in the status bar, and a banner naming the host while
document text leaves this computer. The window stays usable; each judged answer is announced as it
is saved."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool, Signal
from PySide6.QtWidgets import QLabel, QMainWindow, QProgressBar, QPushButton

from app.figures.rater_names import rater_name
from app.judging.runs import JudgeSettings, Progress, RunSummary, destination, is_on_premise
from app.settings import Settings, save_settings
from app.workspace import Workspace
from ui.judge_dialog import JudgeDialog, JudgeWorker


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class JudgeRunner(QObject):
    """Starts judge runs and shows how they go in the window's status bar; sentences go to `say`."""

    answerJudged = Signal(str)  # noqa: N815 - an answer's verdict was saved (its id)
    runEnded = Signal()  # noqa: N815 - a run finished or was cancelled (not emitted when it failed)

    def __init__(
        self, workspace: Workspace, settings: Settings, say: Callable[[str], None], window: QMainWindow
    ) -> None:
        super().__init__(window)
        self.workspace, self.settings, self.say = workspace, settings, say
        self.worker: JudgeWorker | None = None
        self.network_banner = QLabel()
        self.network_banner.setStyleSheet("background:#fde2b8; padding:1px 6px;")
        self.network_banner.hide()
        self.progress = QProgressBar(maximumWidth=220)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel judge run")
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(self.cancel)
        bar = window.statusBar()
        bar.addPermanentWidget(self.network_banner)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)

    def open_dialog(self, selected_answer: str | None, reviewer: str) -> None:
        """Choose the judge, its model and the answers, then run it; the model chosen is remembered,
        and so is a host the reviewer allowed for this project."""
        dialog = JudgeDialog(
            self.parent(),
            selected_answer=selected_answer,
            choice=self.settings.model,
            allowed_hosts=self.workspace.allowed_hosts(),
            standing=self.workspace.standing_of_model,
            workspace=self.workspace,
        )
        if dialog.exec():
            settings = dialog.settings()
            self.settings.model = dialog.picker.choice()
            save_settings(self.settings)
            if settings.allow_network:
                self.workspace.allow_host(dialog.picker.host(), reviewer)
            self.start_judge(settings, dialog.answer_ids())

    def start_judge(self, settings: JudgeSettings, answer_ids: list[str] | None) -> JudgeWorker:
        """Run the judge without blocking the window; progress and Cancel live in the status bar."""
        return self.start(JudgeWorker(self.workspace, settings, answer_ids), settings)

    def start(self, worker: JudgeWorker, settings: JudgeSettings) -> JudgeWorker:
        """Start `worker` unless a run is going on (then that run's worker is returned)."""
        if self.worker is not None:
            self.say(f"A {self.worker.RUN} is already in progress.")
            return self.worker
        worker.setAutoDelete(False)
        worker.signals.progressed.connect(self._on_worker_progressed)
        worker.signals.loaded.connect(self._on_worker_loaded)
        worker.signals.failed.connect(self._on_worker_failed)
        worker.signals.finished.connect(self._on_worker_finished)
        self.worker = worker
        if settings.backend != "local":
            host = destination(settings)
            where = "on-premise" if is_on_premise(host) else "outside this network"
            self.network_banner.setText(f"⚠ Sending document text to {host} ({where})")
            self.network_banner.show()
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.setText(f"Cancel {worker.RUN}")
        self.cancel_button.show()
        self.say("Judging… the window stays usable.")
        QThreadPool.globalInstance().start(worker)
        return worker

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel.set()
            self.say(f"Stopping {self.worker.DOER} after the answer in flight…")

    def stop_and_wait(self) -> None:
        """On closing the window: cancel a run and wait for the answer in flight to be saved."""
        if self.worker is not None:
            self.worker.cancel.set()
            QThreadPool.globalInstance().waitForDone(60_000)

    def _on_worker_loaded(self, device: str) -> None:
        self.progress.setToolTip(device)  # kept beside the bar while the run goes on
        self.say(f"Judging… {device}.")

    def _on_worker_progressed(self, progress: Progress) -> None:
        self.progress.setRange(0, progress.total)
        self.progress.setValue(progress.done)
        if progress.tokens_per_second:  # a model's run; the checker's is a second or two
            eta = _duration(progress.eta_seconds) if progress.eta_seconds is not None else "—"
            self.say(f"Judged {progress.done}/{progress.total} · {progress.tokens_per_second:.0f} tokens/s · ETA {eta}")
        self.answerJudged.emit(progress.answer_id)

    def _on_worker_failed(self, message: str) -> None:
        self._clear_run()
        self.say(message)

    def _on_worker_finished(self, summary: RunSummary) -> None:
        self._clear_run()
        stopped = " (cancelled: run it again to resume)" if summary.cancelled else ""
        refused = sum(summary.rejected.values())
        note = f", {refused} judge points refused by validation" if refused else ""
        failed = f", {summary.failed} could not be judged" if summary.failed else ""
        who = rater_name(summary.rater)  # "SmolLM2-135M (two-stage)", never the run's internal name
        self.say(f"{who}: {summary.judged} judged{failed}{note}{stopped}.")
        self.runEnded.emit()

    def _clear_run(self) -> None:
        """The run is over: no worker, and nothing of it left in the status bar."""
        self.worker = None
        self.network_banner.hide()
        self.progress.hide()
        self.cancel_button.hide()
