"""Export the reviewed set from the window: format, file, and optional redaction of personal data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QApplication,
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
    QScrollArea,
    QWidget,
)

from app.errors import AssayError
from app.export.formats import FORMATS, Redact
from app.export.redaction import Redaction, keep_everything
from app.settings import load_settings, save_settings
from app.workspace import Workspace
from ui.screen_fit import fit_to_screen

DESCRIPTIONS = {
    "xlsx": ("Excel workbook: answers, data points, agreement, triage", "xlsx"),
    "csv": ("CSV: every data point with every rater's tag", "csv"),
    "jsonl": ("JSONL: re-importable labels (assay import-labels)", "jsonl"),
    "finetune": ("Fine-tuning JSONL: judge prompts with the reviewers' answers", "jsonl"),
    "report": ("Report for a partner or client, HTML (opens offline)", "html"),
    "pdf": ("Report for a partner or client, PDF (pages, contents)", "pdf"),
}
assert set(DESCRIPTIONS) == set(FORMATS)
REPORTS = ("report", "pdf")  # the formats the first page is previewed for
PREVIEW_WIDTH = 680  # pixels at most: an A4 page's 10-point text at about 11 pixels, readable on a laptop
PREVIEW_DPI = 160  # drawn finer than shown, then scaled down: sharp letters
NO_PAGES = "No preview: this format has no pages. The report formats (HTML and PDF) are previewed here."


class PreviewSignals(QObject):
    finished = Signal(int, bytes)  # the preview's number, the first page as a PNG
    failed = Signal(int, str)


class PreviewWorker(QRunnable):
    """Lays out the report and draws its first page, off the window's thread (a few seconds)."""

    def __init__(self, number: int, workspace: Workspace, redact: Redact, paper: str) -> None:
        super().__init__()
        self.number, self.workspace, self.redact, self.paper = number, workspace, redact, paper
        self.signals = PreviewSignals()

    def run(self) -> None:
        try:
            png = self.workspace.first_page_png(self.redact, self.paper, dpi=PREVIEW_DPI)
        except (AssayError, OSError) as exc:
            self.signals.failed.emit(self.number, f"No preview: {exc}")
            return
        self.signals.finished.emit(self.number, png)


class ExportDialog(QDialog):
    previewed = Signal()  # the preview shows the first page of the report as it would be exported now

    def __init__(
        self,
        parent: QWidget | None = None,
        folder: Path | None = None,
        workspace: Workspace | None = None,
        fmt: str | None = None,
    ) -> None:
        """`folder` and `fmt`: where the file goes and its format at first (the last export's, remembered);
        `workspace`: the project whose report's first page is previewed (None: no preview)."""
        super().__init__(parent)
        self.workspace = workspace
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._previews = 0  # the latest asked for: an older one finishing late is not shown
        self.page = QPixmap()  # the first page as drawn, before it is scaled to the room the dialog has
        self.preview = QLabel("", alignment=Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, wordWrap=True)
        self.preview.setStyleSheet("QLabel { background: white; color: #555; }")
        # The page at a readable size, scrolled: the dialog stays within a laptop's screen.
        self.preview_area = QScrollArea(widgetResizable=True)
        self.preview_area.setWidget(self.preview)
        self.preview_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.preview_area.setStyleSheet("QScrollArea { border: 1px solid #bbb; }")
        self.preview_area.setFixedWidth(self._preview_width(parent))
        self.setWindowTitle("Export the reviewed set")
        self.folder = folder or Path.home()
        self.format = QComboBox()
        for name, (text, _suffix) in DESCRIPTIONS.items():
            self.format.addItem(text, name)
        self.path = QLineEdit()
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_clicked)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path)
        path_row.addWidget(browse)
        self.page_size = QComboBox()
        self.page_size.addItem("A4", "a4")
        self.page_size.addItem("US Letter", "letter")
        self.redact = QCheckBox("Replace e-mail addresses and phone numbers")
        self.names = QLineEdit(placeholderText="and these names, separated by commas (optional)")
        note = QLabel("Redaction changes only the exported file; the project keeps the original text.", wordWrap=True)
        note.setStyleSheet("color: #555")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.export_button = buttons.button(QDialogButtonBox.StandardButton.Ok)

        choices = QWidget()
        form = QFormLayout(choices)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Format", self.format)
        form.addRow("File", path_row)
        form.addRow("Page size", self.page_size)
        form.addRow("Redaction", self.redact)
        form.addRow("", self.names)
        form.addRow(note)
        form.addRow(buttons)
        row = QHBoxLayout(self)
        row.addWidget(choices, 1, Qt.AlignmentFlag.AlignTop)
        row.addWidget(self.preview_area, 0)
        if fmt in DESCRIPTIONS:
            self.format.setCurrentIndex(self.format.findData(fmt))
        self.format.currentIndexChanged.connect(self._on_format_changed)
        self.path.textChanged.connect(lambda text: self.export_button.setEnabled(bool(text.strip())))
        self.redact.toggled.connect(self._on_report_options_changed)
        self.page_size.currentIndexChanged.connect(self._on_report_options_changed)
        self.names.editingFinished.connect(self._on_report_options_changed)
        # The preview's place is kept whatever the format (a workbook says it has no pages there): the
        # dialog is sized once and never grows or shrinks under the mouse as formats are tried.
        self.preview_area.setVisible(workspace is not None)
        self._on_format_changed()
        self._fit()

    @property
    def fmt(self) -> str:
        return self.format.currentData()

    @property
    def paper(self) -> str:
        return self.page_size.currentData()

    def out(self) -> Path:
        return Path(self.path.text().strip()).expanduser()

    def redaction(self) -> Redact:
        names = tuple(n.strip() for n in self.names.text().split(",") if n.strip())
        return Redaction(names) if self.redact.isChecked() or names else keep_everything

    def _on_format_changed(self, *_: object) -> None:
        suffix = DESCRIPTIONS[self.fmt][1]
        current = self.path.text().strip()
        stem = Path(current).stem if current else "assay-export"
        parent = Path(current).parent if current else self.folder
        self.path.setText(str(parent / f"{stem}.{suffix}"))
        self.page_size.setEnabled(self.fmt in REPORTS)
        if self.workspace is None:
            return
        if self.fmt not in REPORTS:
            self.preview.setPixmap(QPixmap())
            self.preview.setText(NO_PAGES)
        elif self.page.isNull():
            self.refresh_preview()
        else:  # the page drawn before, for the same options
            self._show_page()

    def _on_report_options_changed(self, *_: object) -> None:
        if self.workspace is not None and self.fmt in REPORTS:
            self.refresh_preview()

    def refresh_preview(self) -> None:
        """Draw the report's first page again, with the redaction as set now, in the background."""
        assert self.workspace is not None
        self._previews += 1
        self.page = QPixmap()
        self.preview.setPixmap(QPixmap())
        self.preview.setText("Preparing a preview of the first page…")
        worker = PreviewWorker(self._previews, self.workspace, self.redaction(), self.paper)
        worker.signals.finished.connect(self._on_preview_finished)
        worker.signals.failed.connect(self._on_preview_failed)
        self.pool.start(worker)

    def _on_preview_finished(self, number: int, png: bytes) -> None:
        if number != self._previews:
            return
        self.page = QPixmap()
        self.page.loadFromData(png, "PNG")
        if self.fmt in REPORTS:  # else shown when a report format is chosen again
            self._show_page()

    def _show_page(self) -> None:
        width = self.preview_area.viewport().width()
        self.preview.setPixmap(self.page.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation))
        self.previewed.emit()

    def _on_preview_failed(self, number: int, sentence: str) -> None:
        if number == self._previews:
            self.preview.setText(sentence)

    def _fit(self) -> None:
        """As tall as the screen leaves room for where a page can be previewed, compact when not; on screen."""
        screen = self.screen() or QApplication.primaryScreen()
        room = screen.availableGeometry().height() - 80 if screen is not None else 700
        self.layout().activate()
        height = min(room, 1000) if self.preview_area.isVisibleTo(self) else self.sizeHint().height()
        self.resize(self.sizeHint().width(), max(height, self.minimumSizeHint().height()))
        fit_to_screen(self)

    @staticmethod
    def _preview_width(parent: QWidget | None) -> int:
        """As wide as readable, leaving the choices their room on the screen the dialog opens on."""
        screen = (parent.screen() if parent is not None else None) or QApplication.primaryScreen()
        room = screen.availableGeometry().width() - 520 if screen is not None else PREVIEW_WIDTH
        return max(320, min(PREVIEW_WIDTH, room))

    def done(self, result: int) -> None:
        self.pool.waitForDone()  # a preview still drawing must not outlive the dialog
        super().done(result)

    def _on_browse_clicked(self) -> None:
        suffix = DESCRIPTIONS[self.fmt][1]
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(), f"*.{suffix}")
        if path:
            self.path.setText(path)


def export_project(
    workspace: Workspace, fmt: str, out: Path, redact: Redact, say: Callable[[str], None], paper: str = "a4"
) -> bool:
    """Export with a wait cursor; where it went, or why nothing was exported, is one sentence to `say`."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        workspace.export(fmt, out, redact, paper)
    except (AssayError, OSError) as exc:
        say(f"Nothing exported: {exc}")
        return False
    finally:
        QApplication.restoreOverrideCursor()
    say(f"Exported to {out}" + (" (redacted)" if redact is not keep_everything else ""))
    return True


def export_from_dialog(parent: QWidget, workspace: Workspace, say: Callable[[str], None]) -> None:
    """Ask for the format, the file (beside the project file at first) and the redaction; export."""
    file = workspace.file()
    folder = file.parent if file is not None else None
    settings = load_settings()  # the last export's format and folder, where it still exists
    if settings.export_folder and Path(settings.export_folder).is_dir():
        folder = Path(settings.export_folder)
    dialog = ExportDialog(parent, folder, workspace, settings.export_format)
    try:
        if dialog.exec():
            settings = load_settings()
            settings.export_format, settings.export_folder = dialog.fmt, str(dialog.out().parent)
            save_settings(settings)
            export_project(workspace, dialog.fmt, dialog.out(), dialog.redaction(), say, dialog.paper)
    finally:
        dialog.deleteLater()  # its preview thread pool goes with it now, not in Python's teardown at quit
