"""A comment box of a few lines: a reviewer's note on an answer is a paragraph, not a line. It keeps a line
field's habits: Tab moves on, the text is saved when the box is left (`editingFinished`), and Ctrl+Enter
stays the window's Submit."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QSizePolicy

LINES = 2  # shown at once (a laptop has no room for more beside the points); a longer comment scrolls


class CommentBox(QPlainTextEdit):
    """A multi-line comment field with QLineEdit's text(), setText() and editingFinished."""

    editingFinished = Signal()  # noqa: N815 - the box was left with its text changed since it was entered

    def __init__(self, placeholder: str = "") -> None:
        super().__init__()
        self.setPlaceholderText(placeholder)
        self.setTabChangesFocus(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        lines = self.fontMetrics().lineSpacing() * LINES
        margins = self.contentsMargins()
        self.setFixedHeight(lines + 2 * int(self.document().documentMargin()) + margins.top() + margins.bottom() + 2)
        self._entered = ""

    def text(self) -> str:
        return self.toPlainText()

    def setText(self, text: str) -> None:  # noqa: N802 - QLineEdit's name
        if text != self.toPlainText():
            self.setPlainText(text)
        self._entered = text

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt's name
        self._entered = self.toPlainText()
        super().focusInEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt's name
        super().focusOutEvent(event)
        if self.toPlainText() != self._entered:
            self._entered = self.toPlainText()
            self.editingFinished.emit()

    def event(self, event: QEvent) -> bool:
        """Ctrl+Enter is the window's (Submit): the box does not take it as a new line."""
        submit = (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        )
        if submit:
            event.ignore()
            return False
        return super().event(event)
