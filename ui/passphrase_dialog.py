"""A new passphrase, typed twice in one dialog: a mismatch is said in the dialog itself, beside the fields
(not in a status bar after it closed), and the dialog warns that a forgotten passphrase cannot be
recovered, since nothing in Assay keeps a copy of it."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QLineEdit, QVBoxLayout, QWidget

DIFFERENT = "The two passphrases differ: type the same one twice."
UNRECOVERABLE = (
    "A forgotten passphrase cannot be recovered: no one, not even your IT team, can open what it protects "
    "without it. Keep it in your password manager."
)


class NewPassphraseDialog(QDialog):
    """Two password fields; OK only when they hold the same passphrase."""

    def __init__(self, title: str, prompt: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.first = QLineEdit(echoMode=QLineEdit.EchoMode.Password)
        self.again = QLineEdit(echoMode=QLineEdit.EchoMode.Password, placeholderText="the same passphrase again")
        self.warning = QLabel(f"⚠ {UNRECOVERABLE}", wordWrap=True)
        self.warning.setStyleSheet("color: #8a5a00;")
        self.problem = QLabel(wordWrap=True)
        self.problem.setStyleSheet("color: #b00020;")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(prompt, wordWrap=True))
        layout.addWidget(self.first)
        layout.addWidget(QLabel("Type the same passphrase again"))
        layout.addWidget(self.again)
        layout.addWidget(self.problem)
        layout.addWidget(self.warning)
        layout.addWidget(self.buttons)
        self.first.textChanged.connect(self._on_text_changed)
        self.again.textChanged.connect(self._on_text_changed)
        self.setMinimumWidth(420)
        self._on_text_changed()

    def passphrase(self) -> str:
        return self.first.text()

    def _on_text_changed(self, *_: object) -> None:
        """OK once both fields agree; the mismatch said as soon as the second is as long as the first."""
        first, again = self.first.text(), self.again.text()
        differ = bool(again) and again != first and (len(again) >= len(first) or not first.startswith(again))
        self.problem.setText(DIFFERENT if differ else "")
        self.problem.setVisible(differ)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(bool(first) and first == again)

    def accept(self) -> None:
        if self.first.text() != self.again.text():  # Enter in a field: said here, the dialog stays open
            self.problem.setText(DIFFERENT)
            self.problem.show()
            return
        super().accept()
