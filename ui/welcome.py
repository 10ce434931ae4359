"""The first window: what Assay does, and the ways in — the sample, a new project, a project, a dataset."""

from __future__ import annotations

import getpass
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError, PasswordRequired
from app.ingest.documents import PageProgress
from app.project import SAMPLE_DATASET, AskPassphrase, default_project_path
from app.settings import Settings
from app.workspace import Workspace, open_workspace
from ui.backups_dialog import offer_restore
from ui.model_picker import ModelPicker
from ui.screen_fit import fit_to_screen

INTRO = (
    "<h2>Welcome to Assay</h2>"
    "<p>An LLM answered questions about your contracts. Assay helps you check each answer, "
    "one assertion at a time:</p>"
    "<ol>"
    "<li><b>Import</b> the questions, the answers and the contracts they are about.</li>"
    "<li>A <b>judge</b> (an LLM) splits each answer into data points and tags each one "
    "<i>correct</i>, <i>incorrect</i> or <i>irrelevant</i>, and adds what is <i>missing</i>, "
    "citing the contract's paragraphs.</li>"
    "<li><b>You</b> confirm or change each tag with one key (1, 2, 3, 4). Assay scores every answer, "
    "tells which ones a human must read, and exports the reviewed set.</li>"
    "</ol>"
)

NAME_USE = "recorded with every tag and sign-off you make; the audit log and the report name you by it"


def reviewer_name_prompt(login: str) -> str:
    """What the reviewer's name is asked with: what it is for, and what an empty one means."""
    return f"Your name as a reviewer: it is {NAME_USE}.\nLeave it empty to use your login ({login})."


class ImportSignals(QObject):
    finished = Signal()
    failed = Signal(str)
    progressed = Signal(str)  # "OCR contract.pdf: page 2 of 5"
    password_needed = Signal(str, bool)  # an encrypted PDF's file name; whether the given password was wrong


class ImportWorker(QRunnable):
    """Imports a dataset on a pool thread: the window keeps painting while a large set is read."""

    def __init__(self, workspace: Workspace, dataset: Path, passwords: dict[str, str]) -> None:
        super().__init__()
        self.workspace, self.dataset, self.passwords = workspace, dataset, passwords
        self.signals = ImportSignals()

    def run(self) -> None:
        try:  # the sample comes with its labelled set and the claim checker's run on it
            self.workspace.import_dataset(self.dataset, self.passwords, self._report, self._reading)
        except PasswordRequired as exc:
            self.signals.password_needed.emit(exc.name, exc.wrong)
            return
        except AssayError as exc:  # import is all or nothing: the message names the file, line and field
            self.signals.failed.emit(str(exc))
            return
        except Exception as exc:  # a bug: say so, rather than leave the window waiting forever
            self.signals.failed.emit(f"the import stopped on an unexpected error: {exc!r}")
            return
        self.signals.finished.emit()

    def _report(self, progress: PageProgress) -> None:
        if progress.ocr:
            self.signals.progressed.emit(f"OCR {progress.document}: page {progress.done} of {progress.total}…")

    def _reading(self, done: int, total: int) -> None:
        self.signals.progressed.emit(f"Reading the contracts for the claim checker: {done} of {total}…")


def fit_names(box: QComboBox, letters: int = 24) -> None:
    """A combo box as wide as `letters` letters, however long the names it lists (a model file's name can
    run to 90): the shown name is elided, its list opens as wide as the names, and each name in full is
    its tooltip. Sized to its longest name, the welcome window ran past a 1366-px laptop screen."""
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(letters)
    widest = max((box.fontMetrics().horizontalAdvance(box.itemText(i)) for i in range(box.count())), default=0)
    box.view().setMinimumWidth(widest + 40)  # the open list reads whole; Qt keeps it on the screen
    for i in range(box.count()):
        box.setItemData(i, box.itemText(i), Qt.ItemDataRole.ToolTipRole)


class WelcomeWindow(QWidget):
    """Emits `opened(workspace, reviewer)` once a project is open (and imported into, if asked)."""

    opened = Signal(object, str)

    def __init__(self, settings: Settings, ask_passphrase: AskPassphrase) -> None:
        super().__init__()
        self.settings = settings
        self.ask_passphrase = ask_passphrase
        self.setWindowTitle("Assay")
        self.resize(980, 700)
        fit_to_screen(self)  # never larger than a laptop's screen

        intro = QLabel(INTRO, wordWrap=True)
        self.reviewer = QLineEdit(settings.reviewer or "", placeholderText=f"your login: {getpass.getuser()}")
        self.reviewer.setToolTip(f"Your name as a reviewer: {NAME_USE}.")
        self.encrypt = QCheckBox("Encrypt new projects with a passphrase (SQLCipher)")

        sample = QPushButton("Open the sample project")
        sample.setDefault(True)
        sample.setStyleSheet("font-weight: bold")
        sample.setToolTip(
            "12 real public contracts: 119 LLM answers (LegalBench-RAG) and 34 answers with human labels"
            " (ContractNLI, worded as ContractNLI words its statements: the claim checker's best case)"
        )
        create = QPushButton("Create a project…")
        open_existing = QPushButton("Open a project…")
        import_set = QPushButton("Import a dataset…")
        import_set.setToolTip("A folder with qa.jsonl and documents/, or a .jsonl, .csv or .xlsx file")
        sample.clicked.connect(self.open_sample)
        create.clicked.connect(self._on_create_clicked)
        open_existing.clicked.connect(self._on_open_clicked)
        import_set.clicked.connect(self._on_import_clicked)
        hints = [
            (sample, "Try Assay on real contracts: nothing to prepare."),
            (create, "An empty project file; import into it later."),
            (open_existing, "Continue a review (.assay file)."),
            (import_set, "Questions, answers and their documents, into a new project."),
        ]
        actions = QGridLayout()
        for row, (button, hint) in enumerate(hints):
            button.setMinimumWidth(220)
            actions.addWidget(button, row, 0)
            actions.addWidget(QLabel(f"<span style='color:#555'>{hint}</span>", wordWrap=True), row, 1)

        self.recent = QListWidget(maximumHeight=180)
        for path in settings.recent_projects:
            if Path(path).exists():  # a project since moved or deleted is not offered
                item = QListWidgetItem(f"{Path(path).name}  —  {Path(path).parent}")
                item.setToolTip(path)
                item.setData(Qt.ItemDataRole.UserRole, path)
                self.recent.addItem(item)
        if not self.recent.count():
            self.recent.addItem(QListWidgetItem("No recent projects yet."))
            self.recent.item(0).setFlags(Qt.ItemFlag.NoItemFlags)
        self.recent.itemActivated.connect(lambda item: self.open_path(Path(item.data(Qt.ItemDataRole.UserRole))))
        recent_box = QGroupBox("Recent projects (double-click to open)")
        QVBoxLayout(recent_box).addWidget(self.recent)

        self.picker = ModelPicker(settings.model)
        for box in self.picker.findChildren(QComboBox):
            fit_names(box)
        model_box = QGroupBox("Judge model")
        QVBoxLayout(model_box).addWidget(self.picker)

        name_row = QHBoxLayout()
        name_row.addWidget(QLabel("Your name as a reviewer:"))
        name_row.addWidget(self.reviewer, 1)
        name_use = QLabel(f"<span style='color:#555'>It is {NAME_USE}.</span>", wordWrap=True)
        left = QVBoxLayout()
        left.addWidget(intro)
        left.addLayout(name_row)
        left.addWidget(name_use)
        left.addLayout(actions)
        left.addWidget(self.encrypt)
        self.status = QLabel(wordWrap=True)
        left.addWidget(self.status)
        left.addStretch()
        right = QVBoxLayout()
        right.addWidget(recent_box)
        right.addWidget(model_box)
        right.addStretch()
        layout = QHBoxLayout(self)
        layout.addLayout(left, 3)
        layout.addLayout(right, 2)

    # ------------------------------------------------------------------ the ways in

    def open_sample(self) -> Workspace | None:
        path = default_project_path().with_name("sample.assay")
        return self.open_path(path, dataset=SAMPLE_DATASET, only_if_empty=True)

    def open_path(
        self, path: Path, *, dataset: Path | None = None, only_if_empty: bool = False, encrypt: bool = False
    ) -> Workspace | None:
        """Open (or create) the project and hand it on; a dataset is imported first, off the GUI thread."""
        try:
            workspace = open_workspace(path, encrypt=encrypt, ask=self.ask_passphrase)
        except AssayError as exc:
            restored = offer_restore(self, path, exc, self.ask_passphrase)  # a damaged file: its backup
            if restored:
                return self.open_path(path, dataset=dataset, only_if_empty=only_if_empty, encrypt=encrypt)
            if restored is None:
                QMessageBox.warning(self, "Assay", str(exc))
            return None
        self.settings.reviewer = self.reviewer.text().strip() or getpass.getuser()
        self.settings.model = self.picker.choice()
        self.settings.remember_project(path)
        if dataset is None or (only_if_empty and workspace.has_answers()):
            self.opened.emit(workspace, self.settings.reviewer)
            return workspace
        self._import(workspace, dataset)
        return workspace

    def _import(self, workspace: Workspace, dataset: Path, passwords: dict[str, str] | None = None) -> None:
        passwords = dict(passwords or {})
        self.setEnabled(False)
        self.status.setText(
            f"Importing {dataset.name}… a large set takes a minute; nothing is saved until it is all read."
        )
        worker = ImportWorker(workspace, dataset, passwords)
        worker.setAutoDelete(False)
        worker.signals.failed.connect(lambda message: self._on_import_failed(workspace, message))
        worker.signals.progressed.connect(self.status.setText)
        worker.signals.password_needed.connect(
            lambda name, wrong: self._on_password_needed(workspace, dataset, passwords, name, wrong)
        )
        worker.signals.finished.connect(lambda: self._on_imported(workspace))
        self._worker = worker  # kept alive until it reports
        QThreadPool.globalInstance().start(worker)

    def _on_imported(self, workspace: Workspace) -> None:
        self.setEnabled(True)
        self.status.clear()
        self.opened.emit(workspace, self.settings.reviewer)

    def _on_password_needed(
        self, workspace: Workspace, dataset: Path, passwords: dict[str, str], name: str, wrong: bool
    ) -> None:
        """Ask for an encrypted PDF's password, then import again; cancelling imports nothing."""
        self.setEnabled(True)
        prompt = f"{name} is password-protected.{' That password is wrong.' if wrong else ''}\nIts password:"
        password, ok = QInputDialog.getText(self, "Assay: a protected PDF", prompt, QLineEdit.EchoMode.Password)
        if not ok or not password:
            self._on_import_failed(workspace, f"{name}: this PDF is password-protected and no password was given")
            return
        self._import(workspace, dataset, {**passwords, name: password})

    def _on_import_failed(self, workspace: Workspace, message: str) -> None:
        self.setEnabled(True)
        self.status.clear()
        workspace.close()
        QMessageBox.warning(self, "Assay: nothing was imported", message)

    def _new_project_path(self, title: str) -> Path | None:
        path, _ = QFileDialog.getSaveFileName(
            self, title, str(Path.home() / "review.assay"), "Assay projects (*.assay)"
        )
        if not path:
            return None
        path = Path(path).with_suffix(".assay")
        if path.exists():
            QMessageBox.warning(self, "Assay", f"{path} already exists: open it instead.")
            return None
        return path

    def _on_create_clicked(self) -> None:
        if path := self._new_project_path("Create a project"):
            self.open_path(path, encrypt=self.encrypt.isChecked())

    def _on_open_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a project", str(Path.home()), "Assay projects (*.assay)")
        if path:
            self.open_path(Path(path))

    def _on_import_clicked(self) -> None:
        title = "Import a dataset: qa.jsonl in its folder, or a .csv or .xlsx"
        dataset, _ = QFileDialog.getOpenFileName(self, title, str(Path.home()), "Datasets (*.jsonl *.csv *.xlsx)")
        if not dataset:
            return
        chosen = Path(dataset)
        source = chosen.parent if chosen.name == "qa.jsonl" else chosen  # a folder dataset: its qa.jsonl
        if path := self._new_project_path("Save the new project as"):
            self.open_path(path, dataset=source, encrypt=self.encrypt.isChecked())
