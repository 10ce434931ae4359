"""Export the reviewed set from the window: format, file, and optional redaction of personal data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
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
    QWidget,
)

from app.errors import AssayError
from app.export.formats import FORMATS, Redact, export
from app.export.redaction import Redaction, keep_everything
from app.project import Project

DESCRIPTIONS = {
    "xlsx": ("Excel workbook: answers, data points, agreement, triage", "xlsx"),
    "csv": ("CSV: every data point with every rater's tag", "csv"),
    "jsonl": ("JSONL: re-importable labels (assay import-labels)", "jsonl"),
    "finetune": ("Fine-tuning JSONL: judge prompts with the reviewers' answers", "jsonl"),
    "report": ("HTML report with plots (opens offline)", "html"),
    "pdf": ("PDF report with plots", "pdf"),
}
assert set(DESCRIPTIONS) == set(FORMATS)


class ExportDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, folder: Path | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export the reviewed set")
        self.folder = folder or Path.home()
        self.format = QComboBox()
        for fmt, (text, _suffix) in DESCRIPTIONS.items():
            self.format.addItem(text, fmt)
        self.path = QLineEdit()
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_clicked)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path)
        path_row.addWidget(browse)
        self.redact = QCheckBox("Replace e-mail addresses and phone numbers")
        self.names = QLineEdit(placeholderText="and these names, separated by commas (optional)")
        note = QLabel("Redaction changes only the exported file; the project keeps the original text.", wordWrap=True)
        note.setStyleSheet("color: #555")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Export")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.export_button = buttons.button(QDialogButtonBox.StandardButton.Ok)

        form = QFormLayout(self)
        form.addRow("Format", self.format)
        form.addRow("File", path_row)
        form.addRow("Redaction", self.redact)
        form.addRow("", self.names)
        form.addRow(note)
        form.addRow(buttons)
        self.format.currentIndexChanged.connect(self._on_format_changed)
        self.path.textChanged.connect(lambda text: self.export_button.setEnabled(bool(text.strip())))
        self._on_format_changed()

    @property
    def fmt(self) -> str:
        return self.format.currentData()

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

    def _on_browse_clicked(self) -> None:
        suffix = DESCRIPTIONS[self.fmt][1]
        path, _ = QFileDialog.getSaveFileName(self, "Export to", self.path.text(), f"*.{suffix}")
        if path:
            self.path.setText(path)


def export_project(project: Project, fmt: str, out: Path, redact: Redact, say: Callable[[str], None]) -> bool:
    """Export with a wait cursor; where it went, or why nothing was exported, is one sentence to `say`."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
    try:
        export(project, fmt, out, redact)
    except (AssayError, OSError) as exc:
        say(f"Nothing exported: {exc}")
        return False
    finally:
        QApplication.restoreOverrideCursor()
    say(f"Exported to {out}" + (" (redacted)" if redact is not keep_everything else ""))
    return True


def export_from_dialog(parent: QWidget, project: Project, say: Callable[[str], None]) -> None:
    """Ask for the format, the file (beside the project file at first) and the redaction; export."""
    url = project.url
    folder = Path(url.removeprefix("sqlite:///")).parent if url.startswith("sqlite:///") else None
    dialog = ExportDialog(parent, folder)
    if dialog.exec():
        export_project(project, dialog.fmt, dialog.out(), dialog.redaction(), say)
