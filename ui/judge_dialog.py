"""Run the judge from the window: a dialog to choose it, a worker that runs app.judging off the GUI thread."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

from PySide6.QtCore import QObject, QRunnable, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.errors import AssayError
from app.judging import JudgeSettings, Progress, RunSummary, make_backend, run_judge
from app.project import Project
from models.judge import Mode
from models.prompts import Strictness
from models.rubrics import Rubric

BACKENDS = {
    "Embedded model (SmolLM2-135M, on this computer)": "embedded",
    "A GGUF model file (on this computer)": "gguf",
    "OpenAI-compatible server (vLLM, llama-server, Ollama, OpenAI…)": "openai",
    "Anthropic API": "anthropic",
}


class JudgeDialog(QDialog):
    """Which judge, on which answers; says plainly where the texts will go."""

    def __init__(self, parent: QWidget | None = None, *, selected_answer: str | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run the judge")
        self.backend = QComboBox()
        self.backend.addItems(list(BACKENDS))
        self.model = QLineEdit(placeholderText="model file or name")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_clicked)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model)
        model_row.addWidget(browse)
        self.base_url = QLineEdit(placeholderText="http://127.0.0.1:8080/v1")
        self.gpu_layers = QSpinBox(minimum=-1, maximum=999, value=-1, specialValueText="all that fit (-1)")
        self.mode = QComboBox()
        self.mode.addItems([m.value for m in Mode])
        self.mode.setCurrentText(Mode.TWO_STAGE.value)  # the default everywhere: tags with confidences
        self.rubric = QComboBox()
        self.rubric.addItems([r.value for r in Rubric])
        self.strictness = QComboBox()
        self.strictness.addItems([s.value for s in Strictness])
        self.strictness.setCurrentText(Strictness.STANDARD.value)
        self.scope = QComboBox()
        if selected_answer:
            self.scope.addItem(f"The selected answer ({selected_answer})", [selected_answer])
        self.scope.addItem("All answers this run has not judged", None)
        self.where = QLabel(wordWrap=True)
        self.allow = QCheckBox()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Run")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.run_button = buttons.button(QDialogButtonBox.StandardButton.Ok)

        form = QFormLayout(self)
        form.addRow("Judge", self.backend)
        form.addRow("Model", model_row)
        form.addRow("Server URL", self.base_url)
        form.addRow("GPU layers", self.gpu_layers)
        form.addRow("Rubric", self.rubric)
        form.addRow("Mode", self.mode)
        form.addRow("Relevance", self.strictness)
        form.addRow("Answers", self.scope)
        form.addRow(self.where)
        form.addRow(self.allow)
        form.addRow(buttons)
        for signal in (self.backend.currentTextChanged, self.base_url.textChanged, self.allow.toggled):
            signal.connect(self._on_choice_changed)
        self._on_choice_changed()

    @property
    def kind(self) -> str:
        return BACKENDS[self.backend.currentText()]

    def _host(self) -> str:
        if self.kind == "anthropic":
            return urlsplit(self.base_url.text() or "https://api.anthropic.com").netloc
        return urlsplit(self.base_url.text()).netloc or "the server you enter"

    def _on_choice_changed(self, *_: object) -> None:
        remote = self.kind in ("openai", "anthropic")
        self.base_url.setEnabled(remote)
        self.gpu_layers.setEnabled(not remote)
        self.model.setEnabled(self.kind != "embedded")
        if remote:
            self.where.setText(
                f"⚠ The contract text, the questions and the answers will be sent to {self._host()}. "
                "Use a server your organisation allows for confidential documents."
            )
            self.allow.setText(f"Allow sending these texts to {self._host()}")
            self.allow.show()
        else:
            self.where.setText("🔒 The judge runs on this computer; nothing leaves it.")
            self.allow.hide()
        self.run_button.setEnabled(not remote or self.allow.isChecked())

    def _on_browse_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", "", "GGUF models (*.gguf)")
        if path:
            self.model.setText(path)
            self.backend.setCurrentText(next(k for k, v in BACKENDS.items() if v == "gguf"))

    def settings(self) -> JudgeSettings:
        kind = self.kind
        return JudgeSettings(
            backend="local" if kind in ("embedded", "gguf") else kind,
            model=self.model.text() or None if kind != "embedded" else None,
            base_url=self.base_url.text() or None,
            gpu_layers=None if self.gpu_layers.value() < 0 else self.gpu_layers.value(),
            mode=Mode(self.mode.currentText()),
            strictness=Strictness(self.strictness.currentText()),
            rubric=Rubric(self.rubric.currentText()),
            structured="json_schema",
            allow_network=self.allow.isChecked(),
        )

    def answer_ids(self) -> list[str] | None:
        return self.scope.currentData()


class JudgeSignals(QObject):
    progressed = Signal(object)  # Progress
    failed = Signal(str)
    finished = Signal(object)  # RunSummary


class JudgeWorker(QRunnable):
    """Runs app.judging.run_judge on a pool thread; results reach the GUI thread through signals."""

    def __init__(self, project: Project, settings: JudgeSettings, answer_ids: list[str] | None) -> None:
        super().__init__()
        self.project = project
        self.settings = settings
        self.answer_ids = answer_ids
        self.cancel = threading.Event()
        self.signals = JudgeSignals()

    def run(self) -> None:
        try:
            backend = make_backend(self.settings)
            judge = self.settings.judge(backend)
            summary: RunSummary = run_judge(
                self.project.sessions,
                judge,
                self.settings.default_name(backend),
                answer_ids=self.answer_ids,
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
