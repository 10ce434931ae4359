"""Run the judge from the window: a dialog to choose it, a worker that runs the workspace's judge run
(app/judging/judge_run.py) off the GUI thread."""

from __future__ import annotations

import html
import threading
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from app.errors import AssayError
from app.judging.runs import JudgeSettings, Progress
from app.judging.standing import Standing, figure_lines, planted_text, real_label_note, real_label_text
from app.settings import ModelChoice
from app.workspace import Workspace
from models.judge import Mode
from models.prompts import Strictness
from models.rubrics import Rubric
from models.vocabulary import BackendKind
from ui.model_picker import KINDS, LOCAL, ModelPicker

# What each choice does, in words; the value each stands for is the item's data.
RUBRIC_WORDS = {
    Rubric.LEMAJ: "Claim by claim: correct, incorrect, irrelevant or missing (LeMAJ)",
    Rubric.DECE: "Against criteria drawn from the question (DeCE)",
    Rubric.POINTWISE: "One grade for the whole answer, Poor to Excellent",
    Rubric.COVERAGE: "How much of the expected answer it covers",
    Rubric.TWO_DIMENSIONAL: "Truthfulness and soundness of the reasoning",
    Rubric.SCORE: "Readability and use of the document (SCORE)",
}
MODE_WORDS = {
    Mode.TWO_STAGE: "In two steps: cut into claims, then tag each with a confidence",
    Mode.ONE_PASS: "In one step: faster, no confidences",
}
STRICTNESS_WORDS = {
    Strictness.LENIENT: "Lenient: irrelevant only when it has nothing to do with the question",
    Strictness.STANDARD: "Standard: irrelevant when it does not help answer the question",
    Strictness.STRICT: "Strict: irrelevant unless it answers the question directly",
}


def _choices(box: QComboBox, words: Mapping[Any, str], current: object) -> None:
    for value, text in words.items():
        box.addItem(text, value)
    box.setCurrentIndex(box.findData(current))


class JudgeDialog(QDialog):
    """Which judge, on which answers; says plainly where the texts will go."""

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        selected_answer: str | None = None,
        choice: ModelChoice | None = None,
        allowed_hosts: list[str] = (),
        standing: Callable[[ModelChoice], Standing] | None = None,
        workspace: Workspace | None = None,  # given: "Check this model" on its project's labelled answers
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run the judge")
        self.picker = ModelPicker(choice, ask_permission=True, allowed_hosts=allowed_hosts, workspace=workspace)
        self.standing_of = standing
        self.standing = QLabel(wordWrap=True)  # the chosen model's latest stress-test figures
        self.standing.setStyleSheet("padding: 6px; border: 1px solid #c9c2ae; background: #fbf8ef;")
        self.use_file = QPushButton("Choose a GGUF file…")
        self.use_file.clicked.connect(self._on_use_file_clicked)
        self.use_api = QPushButton("Use an API judge…")
        self.use_api.clicked.connect(self._on_use_api_clicked)
        capable = QHBoxLayout()
        capable.addWidget(self.use_file)
        capable.addWidget(self.use_api)
        capable.addStretch()
        self.mode = QComboBox()
        _choices(self.mode, MODE_WORDS, Mode.TWO_STAGE)  # the default everywhere: tags with confidences
        self.rubric = QComboBox()
        _choices(self.rubric, RUBRIC_WORDS, Rubric.LEMAJ)
        self.strictness = QComboBox()
        _choices(self.strictness, STRICTNESS_WORDS, Strictness.STANDARD)
        self.scope = QComboBox()
        if selected_answer:
            self.scope.addItem(f"The selected answer ({selected_answer})", [selected_answer])
        self.scope.addItem("All answers this run has not judged", None)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Run")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.run_button = buttons.button(QDialogButtonBox.StandardButton.Ok)

        form = QFormLayout(self)
        form.addRow(self.picker)
        form.addRow(self.standing)
        form.addRow(capable)
        form.addRow("What it judges", self.rubric)
        form.addRow("How", self.mode)
        form.addRow("Relevance", self.strictness)
        form.addRow("Answers", self.scope)
        form.addRow(buttons)
        self.picker.changed.connect(lambda: self.run_button.setEnabled(self.picker.ready()))
        self.picker.changed.connect(self._on_model_changed)
        if self.picker.check is not None:  # a check's figures become the model's standing
            self.picker.check.checked.connect(self._on_model_changed)
        self.picker.model.textChanged.connect(self._on_model_changed)
        self.run_button.setEnabled(self.picker.ready())
        self._on_model_changed()

    def _on_model_changed(self, *_: object) -> None:
        """Say how well the chosen model did against human labels, then on planted errors; near chance,
        offer a capable one."""
        if self.standing_of is None:
            self.standing.hide()
            return
        found = self.standing_of(self.picker.choice())
        lines = [html.escape(line) for line in figure_lines(found.figures)]
        where = f" (run {html.escape(found.run)}, {found.figures['answers']} answers)" if found.figures else ""
        if found.real is not None:
            demo = "demonstration model: " if found.demonstration else ""
            real = html.escape(demo + real_label_text(found.real))
            text = f"<b>How this model did</b> (run {html.escape(found.real['rater'])}) — {real}"
            text += f"<br>{html.escape(real_label_note(found.real) or '')}"
            if found.figures:
                planted = html.escape(planted_text(found.figures))
                text += f"<br><b>Planted errors, latest stress test</b>{where}: {planted}"
        else:
            text = f"<b>Latest stress test of this model</b>{where}: {html.escape(found.text)}"
        if lines:
            text += "<br>" + "<br>".join(lines)
        if found.demonstration:
            verdict = "close to chance" if found.measured else "never measured, and may be no better than chance"
            text += f"<br><b>Its tags are {verdict}: use it to try Assay, not to review.</b> A capable model:"
        self.standing.setText(text)
        self.use_file.setVisible(found.demonstration)
        self.use_api.setVisible(found.demonstration)

    def _on_use_file_clicked(self) -> None:
        self.picker.kind_box.setCurrentText(next(k for k, v in KINDS.items() if v == "gguf"))
        self.picker.browse()

    def _on_use_api_clicked(self) -> None:
        self.picker.kind_box.setCurrentText(next(k for k, v in KINDS.items() if v == "openai"))
        self.picker.base_url.setFocus()

    def settings(self) -> JudgeSettings:
        choice = self.picker.choice()
        return JudgeSettings(
            backend=BackendKind.LOCAL if choice.kind in LOCAL else BackendKind(choice.kind),
            model=choice.model,
            base_url=choice.base_url,
            gpu_layers=choice.gpu_layers,
            mode=Mode(self.mode.currentData()),
            strictness=Strictness(self.strictness.currentData()),
            rubric=Rubric(self.rubric.currentData()),
            structured="json_schema",
            allow_network=self.picker.allow.isChecked(),
        )

    def answer_ids(self) -> list[str] | None:
        return self.scope.currentData()


class JudgeSignals(QObject):
    loaded = Signal(str)  # where the local model runs: device and layers offloaded
    progressed = Signal(object)  # Progress
    failed = Signal(str)
    finished = Signal(object)  # RunSummary


class JudgeWorker(QRunnable):
    """Runs the workspace's judge run on a pool thread; results reach the GUI thread through signals."""

    RUN = "judge run"  # what the status bar calls it: "Cancel judge run"
    DOER = "the judge"

    def __init__(self, workspace: Workspace, settings: JudgeSettings, answer_ids: list[str] | None) -> None:
        super().__init__()
        self.workspace = workspace
        self.settings = settings
        self.answer_ids = answer_ids
        self.cancel = threading.Event()
        self.signals = JudgeSignals()

    def run(self) -> None:
        try:
            summary = self.workspace.judge(
                self.settings,
                self.answer_ids,
                on_loaded=self.signals.loaded.emit,
                on_progress=self._report,
                cancel=self.cancel,
            )
        except AssayError as exc:
            self.signals.failed.emit(str(exc))
            return
        except Exception as exc:  # a bug: say so in the window rather than kill a pool thread silently
            self.signals.failed.emit(f"the judge run stopped on an unexpected error: {exc!r}")
            return
        self.signals.finished.emit(summary)

    def _report(self, progress: Progress) -> None:
        self.signals.progressed.emit(progress)
