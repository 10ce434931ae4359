"""The models already on this computer and the servers running, found off the GUI thread when the picker
opens, listed so that choosing one needs no typing; folders and network servers added once are
remembered in the settings."""

from __future__ import annotations

import html

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.judging.model_discovery import FoundModel, FoundServer, detect_servers, find_models, server_url
from app.settings import ModelChoice, load_settings, save_settings


class _LookSignals(QObject):
    models_found = Signal(object)  # list[FoundModel]
    servers_found = Signal(object)  # list[FoundServer]
    failed = Signal(str)


class _Look(QRunnable):
    """Finds the models (a second at most once their headers are cached) and asks the servers (2 s at
    most) on a pool thread, each reported as soon as it is known."""

    def __init__(self, folders: list[str], servers: list[str], *, models: bool = True) -> None:
        super().__init__()
        self.folders, self.servers, self.models = folders, servers, models
        self.signals = _LookSignals()

    def run(self) -> None:
        try:
            self.signals.servers_found.emit(detect_servers(self.servers))
            if self.models:
                self.signals.models_found.emit(find_models(self.folders))
        except AssayError as exc:
            self.signals.failed.emit(str(exc))


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}{'' if n == 1 else 's'}"


class FoundModels(QWidget):
    """A list of the models found and the models the servers serve; `chosen` carries the pick."""

    chosen = Signal(object)  # ModelChoice
    looked = Signal()  # models and servers are both listed

    def __init__(self) -> None:
        super().__init__()
        self.list = QListWidget()
        self.list.setMinimumSize(640, 110)  # a model's line reads whole: name, program, size, quantisation, context
        self.list.setMaximumHeight(190)  # about seven lines, then it scrolls: the judge's settings stay in view
        self.list.itemActivated.connect(self._on_item_activated)
        self.list.itemClicked.connect(self._on_item_activated)
        self.status = QLabel("Looking for models on this computer and servers running…", wordWrap=True)
        self.status.setStyleSheet("color: #555;")
        self.add_folder = QPushButton("Add a folder…")
        self.add_folder.setToolTip("Look for GGUF models in another folder too (remembered)")
        self.add_folder.clicked.connect(self._on_add_folder_clicked)
        self.add_server = QPushButton("Add a server…")
        self.add_server.setToolTip("A model server on your organisation's network, by its address (remembered)")
        self.add_server.clicked.connect(self._on_add_server_clicked)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.add_folder)
        buttons.addWidget(self.add_server)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)  # no gaps when the dialog grows
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.list)
        layout.addLayout(buttons)
        self.models: list[FoundModel] = []
        self.servers: list[FoundServer] = []
        self._pending = 0
        self._looks: list[_Look] = []
        self.look()

    def look(self, *, models: bool = True) -> None:
        """Look again (off the GUI thread): after a folder or server is added."""
        settings = load_settings()
        look = _Look(settings.model_folders, settings.model_servers, models=models)
        look.setAutoDelete(False)
        look.signals.servers_found.connect(self._on_servers_found)
        look.signals.models_found.connect(self._on_models_found)
        look.signals.failed.connect(self._on_look_failed)
        self._looks.append(look)  # kept alive until it reports
        self._pending = 2 if models else 1
        QThreadPool.globalInstance().start(look)

    def _on_servers_found(self, servers: list[FoundServer]) -> None:
        self.servers = servers
        self._refill()

    def _on_models_found(self, models: list[FoundModel]) -> None:
        self.models = models
        self._refill()

    def _on_look_failed(self, problem: str) -> None:
        self._pending = 0
        self.status.setText(problem)

    def _refill(self) -> None:
        self._pending -= 1
        self.list.clear()
        style = self.style()
        server_icon = style.standardIcon(QStyle.StandardPixmap.SP_DriveNetIcon)
        file_icon = style.standardIcon(QStyle.StandardPixmap.SP_FileIcon)
        for server in self.servers:
            where = "this computer" if server.on_this_computer else "on the network"
            if server.problem:
                item = QListWidgetItem(style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning), server.line())
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)  # shown, not choosable
                item.setToolTip(f"{server.base_url}: {server.problem}")
                self.list.addItem(item)
                continue
            for model in server.models:
                netloc = server.base_url.split("//", 1)[-1].removesuffix("/v1")
                item = QListWidgetItem(server_icon, f"{model} — {server.kind} at {netloc} ({where})")
                item.setData(
                    Qt.ItemDataRole.UserRole, ModelChoice(kind="openai", model=model, base_url=server.base_url)
                )
                item.setToolTip(f"Judge through the {server.kind} server at {server.base_url}")
                self.list.addItem(item)
        for model in self.models:
            item = QListWidgetItem(file_icon, model.line())
            if model.problem is None:
                item.setData(Qt.ItemDataRole.UserRole, ModelChoice(kind="gguf", model=model.path))
            else:
                item.setFlags(Qt.ItemFlag.ItemIsEnabled)
            item.setToolTip(html.escape(model.path))
            self.list.addItem(item)
        running = [s for s in self.servers if not s.problem]
        troubled = len(self.servers) - len(running)
        parts = [_count(len(self.models), "model file"), _count(len(running), "server") + " running"]
        if troubled:
            parts.append(_count(troubled, "server") + " not usable")
        text = " · ".join(parts)
        self.status.setText(text + (" · still looking…" if self._pending > 0 else " · click one to use it"))
        if self._pending <= 0:
            self.looked.emit()

    def _on_item_activated(self, item: QListWidgetItem) -> None:
        choice = item.data(Qt.ItemDataRole.UserRole)
        if choice is not None:
            self.chosen.emit(choice)

    def _on_add_folder_clicked(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "A folder with GGUF models")
        if folder:
            self.remember(folder=folder)

    def _on_add_server_clicked(self) -> None:
        text, ok = QInputDialog.getText(self, "Add a model server", "Its address, e.g. http://10.0.0.5:8000")
        if ok and text.strip():
            self.remember(server=text)

    def remember(self, *, folder: str | None = None, server: str | None = None) -> None:
        """Add a folder or a server to the settings and look again."""
        settings = load_settings()
        try:
            if server is not None:
                url = server_url(server)
                if url not in settings.model_servers:
                    settings.model_servers.append(url)
        except AssayError as exc:
            self.status.setText(str(exc))
            return
        if folder is not None and folder not in settings.model_folders:
            settings.model_folders.append(folder)
        save_settings(settings)
        self.status.setText("Looking again…")
        self.look(models=folder is not None)
