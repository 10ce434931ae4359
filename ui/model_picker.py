"""Choose the judge's model: the embedded one, a GGUF file (browsed, dropped, or used before), or an
API endpoint; says where data goes, and what a GGUF file is and whether it fits this computer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.about import gpu_offload
from app.errors import InvalidInput
from app.judging.model_files import (
    cached_model_info,
    check_fit,
    describe,
    free_memory,
    memory_needed,
    read_model_info,
    recent_models,
)
from app.judging.runs import JudgeSettings, is_on_premise, permitted
from app.settings import ModelChoice
from models.backends.http import is_loopback
from models.vocabulary import BackendKind
from ui.found_models import FoundModels

if TYPE_CHECKING:  # the welcome window shows a picker before any project is open
    from app.workspace import Workspace

KINDS = {
    "Embedded model (SmolLM2-135M, on this computer)": "embedded",
    "A GGUF model file (on this computer)": "gguf",
    "OpenAI-compatible server (vLLM, llama-server, Ollama, OpenAI…)": "openai",
    "Anthropic API": "anthropic",
}
LOCAL = ("embedded", "gguf")


class _InfoSignals(QObject):
    read = Signal(str, str, bool)  # path, what the file is and whether it fits (HTML), fits


class _InfoReader(QRunnable):
    """Reads a GGUF header off the GUI thread: a large tokenizer takes seconds to parse."""

    def __init__(self, path: str, gpu: bool) -> None:
        super().__init__()
        self.path, self.gpu = path, gpu
        self.signals = _InfoSignals()

    def run(self) -> None:
        try:
            info = read_model_info(Path(self.path))
            fit = check_fit(info, gpu=self.gpu)
            self.signals.read.emit(self.path, f"{describe(info)}<br><b>Memory:</b> {fit.sentence()}", fit.fits)
        except InvalidInput as exc:
            self.signals.read.emit(self.path, exc.problem, False)


class ModelPicker(QWidget):
    """The model part of the judge's settings. With `ask_permission`, an API choice stays blocked
    (`ready()` is False) until the user ticks that the texts may go to the host named."""

    changed = Signal()

    def __init__(
        self,
        choice: ModelChoice | None = None,
        *,
        ask_permission: bool = False,
        allowed_hosts: list[str] = (),
        workspace: Workspace | None = None,
    ) -> None:
        super().__init__()
        self.allowed_hosts = set(allowed_hosts)  # the project's recorded opt-ins
        self._asked_for: str | None = None
        self.kind_box = QComboBox()
        self.kind_box.addItems(list(KINDS))
        self.model = QLineEdit(placeholderText="model file, or the server's model name")
        self.about = QLabel(wordWrap=True)  # what the GGUF file is, and whether it fits
        self._readers: dict[str, _InfoReader] = {}
        self.recent = QComboBox()
        self.recent.addItem("Models used before…")
        ram, vram = free_memory()
        for entry in recent_models():
            path = Path(entry["path"])
            if path.is_file():
                info = cached_model_info(path)  # suggested by what fits free memory now (GPU's included)
                needed = memory_needed(info) if info else None
                fits = "" if needed is None else (" — fits" if needed <= ram + (vram or 0) else " — too big now")
                self.recent.addItem(f"{path.name}{fits}", str(path))
        self.recent.setVisible(self.recent.count() > 1)
        self.recent.activated.connect(self._on_recent_activated)
        self.setAcceptDrops(True)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_clicked)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model)
        model_row.addWidget(browse)
        model_row.addWidget(self.recent)
        self.base_url = QLineEdit(placeholderText="http://127.0.0.1:8080/v1")
        self.gpu_layers = QSpinBox(minimum=-1, maximum=999, value=-1, specialValueText="as many as fit")
        self.gpu_layers.setSuffix(" layers")
        self.gpu = QLabel(f"<b>GPU offload:</b> {gpu_offload()}", wordWrap=True)
        self.where = QLabel(wordWrap=True)
        self.where.setStyleSheet("padding: 6px; border: 1px solid #c9c2ae; background: #fbf8ef;")
        self.allow = QCheckBox()
        self.ask_permission = ask_permission

        self.found = FoundModels()  # models already here and servers running: one click, no typing
        self.found.chosen.connect(self._on_found_chosen)
        self.check = None
        if workspace is not None:  # "Check this model" judges the project's labelled answers
            from ui.model_check import ModelCheckPanel

            self.check = ModelCheckPanel(workspace)
            self.check.button.clicked.connect(self._on_check_clicked)

        form = QFormLayout()
        form.addRow("Found here", self.found)
        form.addRow("Judge model", self.kind_box)
        form.addRow("Model", model_row)
        form.addRow("Server URL", self.base_url)
        form.addRow("On the graphics card", self.gpu_layers)
        # Wrapped labels go below the form: inside it, Qt gives them the height of one line.
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        for label in (self.about, self.gpu, self.where, self.allow):
            layout.addWidget(label)
        if self.check is not None:
            layout.addWidget(self.check)
        if choice is not None:
            self.load(choice)
        for signal in (self.kind_box.currentTextChanged, self.base_url.textChanged, self.allow.toggled):
            signal.connect(self._on_choice_changed)
        self.model.textChanged.connect(self.changed)
        self.model.textChanged.connect(self._on_model_changed)
        self.kind_box.currentTextChanged.connect(self._on_model_changed)
        self._on_choice_changed()
        self._on_model_changed()

    @property
    def kind(self) -> str:
        return KINDS[self.kind_box.currentText()]

    def host(self) -> str:
        if self.kind == "anthropic":
            return urlsplit(self.base_url.text() or "https://api.anthropic.com").hostname or "api.anthropic.com"
        return urlsplit(self.base_url.text()).hostname or "the server you enter"

    def on_this_computer(self) -> bool:
        """A server addressed on this computer (loopback); still asked for, as any server is."""
        return self.kind == "openai" and is_loopback(urlsplit(self.base_url.text()).hostname or "")

    def ready(self) -> bool:
        return self.kind in LOCAL or not self.ask_permission or self.allow.isChecked()

    def load(self, choice: ModelChoice) -> None:
        self.kind_box.setCurrentText(next(k for k, v in KINDS.items() if v == choice.kind))
        self.model.setText(choice.model or "")
        self.base_url.setText(choice.base_url or "")
        self.gpu_layers.setValue(-1 if choice.gpu_layers is None else choice.gpu_layers)

    def choice(self) -> ModelChoice:
        kind = self.kind
        return ModelChoice(
            kind=kind,
            model=None if kind == "embedded" else self.model.text().strip() or None,
            base_url=None if kind in LOCAL else self.base_url.text().strip() or None,
            gpu_layers=None if kind not in LOCAL or self.gpu_layers.value() < 0 else self.gpu_layers.value(),
        )

    def _on_choice_changed(self, *_: object) -> None:
        remote = self.kind not in LOCAL
        self.base_url.setEnabled(remote)
        self.gpu_layers.setEnabled(not remote)
        self.gpu.setVisible(not remote)
        self.model.setEnabled(self.kind != "embedded")
        self.about.setVisible(self.kind == "gguf" and bool(self.about.text()))
        if remote:
            host = self.host()
            if self.on_this_computer():
                self.where.setText(
                    f"<b>A server on this computer.</b> When the judge runs, the contract text, the questions and "
                    f"the answers are sent to the server at <b>{host}</b>. Allow it if you know what it is: a "
                    "program listening here can pass them on."
                )
            else:
                inside = "inside your organisation's network" if is_on_premise(host) else "outside this computer"
                self.where.setText(
                    "<b>Leaves this computer.</b> When the judge runs, the contract text, the questions and the "
                    f"answers are sent to <b>{host}</b> ({inside}). Use a server your organisation allows for "
                    "confidential documents."
                )
            self.allow.setText(f"Allow sending these texts to {host} (remembered for this project)")
            if host != self._asked_for:  # a permission is for one host: a new host is asked anew
                self._asked_for = host
                self.allow.setChecked(host in self.allowed_hosts)
        else:
            self.where.setText("<b>On this computer.</b> The judge runs here; nothing leaves it.")
        self.allow.setVisible(remote and self.ask_permission)
        self.changed.emit()

    def _on_found_chosen(self, choice: ModelChoice) -> None:
        self.load(choice)

    def judge_settings(self) -> JudgeSettings:
        """The judge the picker names, as a run takes it (an API host allowed as the tick says)."""
        choice = self.choice()
        settings = JudgeSettings(
            backend=BackendKind.LOCAL if choice.kind in LOCAL else BackendKind(choice.kind),
            model=choice.model,
            base_url=choice.base_url,
            gpu_layers=choice.gpu_layers,
        )
        return permitted(settings, self.allowed_hosts, self.allow.isChecked())

    def _on_check_clicked(self) -> None:
        assert self.check is not None
        if not self.ready():
            self.check.result.setText(f"Tick the box allowing texts to go to {self.host()} first.")
            self.check.result.show()
            return
        choice = self.choice()
        found = next((m for m in self.found.models if m.path == choice.model), None)
        self.check.start(self.judge_settings(), f"check:{found.name}" if found else None)  # Ollama's by name

    def _on_browse_clicked(self) -> None:
        self.browse()

    def browse(self) -> None:
        """Ask for a GGUF file and use it."""
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", "", "GGUF models (*.gguf)")
        if path:
            self._use_file(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt's name
        if self._dropped_model(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt's name
        if (path := self._dropped_model(event)) is not None:
            self._use_file(path)
            event.acceptProposedAction()

    @staticmethod
    def _dropped_model(event: QDragEnterEvent | QDropEvent) -> str | None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        files = [url.toLocalFile() for url in urls if url.isLocalFile()]
        return files[0] if len(files) == 1 and files[0].lower().endswith(".gguf") else None

    def _use_file(self, path: str) -> None:
        self.kind_box.setCurrentText(next(k for k, v in KINDS.items() if v == "gguf"))
        self.model.setText(path)

    def _on_recent_activated(self, index: int) -> None:
        if index > 0:
            self._use_file(self.recent.itemData(index))
            self.recent.setCurrentIndex(0)

    def _on_model_changed(self, *_: object) -> None:
        """Read what a GGUF file is (off the GUI thread) once the field names an existing file."""
        path = self.model.text().strip()
        if self.kind != "gguf" or not path.lower().endswith(".gguf") or not Path(path).is_file():
            self.about.clear()
            self.about.setVisible(False)
            return
        self.about.setText(f"<b>Model file:</b> reading {Path(path).name}…")
        self.about.setVisible(True)
        reader = _InfoReader(path, gpu=self.gpu_layers.value() != 0 and "available" in self.gpu.text())
        reader.setAutoDelete(False)
        reader.signals.read.connect(self._on_info_read)
        self._readers[path] = reader  # kept alive until it reports
        QThreadPool.globalInstance().start(reader)

    def _on_info_read(self, path: str, text: str, fits: bool) -> None:
        self._readers.pop(path, None)
        if path != self.model.text().strip():
            return  # the user has moved on to another file
        colour = "" if fits else "color: #a01b1b;"
        self.about.setStyleSheet(colour)
        self.about.setText(f"<b>Model file:</b> {text}")
        self.about.setVisible(self.kind == "gguf")
