"""The project's review guidelines beside the review window, open at the section of the tag in play.

Shift+F1 (Help ▸ Review guidelines) opens the panel at the section of the selected data point's tag:
the reviewer's own tag, else the judge's beside it; while the panel is open it follows the selected
point. F1 stays the keyboard shortcut sheet; Shift+F1 is Qt's (and most desktops') context-help key.
A section is a Markdown heading whose first word is the tag's name ("## Incorrect").

The guidelines are read and saved through the review session: a version saved here comes back as the
session's `Changes` (guidelines=True), which every view showing them hears, this panel included.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.project import DEFAULT_GUIDELINES, Guidelines
from app.review.service import ReviewPoint
from app.review.session import Changes, ReviewSession
from models.vocabulary import Tag
from ui.screen_fit import fit_to_screen

WIDTH = 340  # px: a readable column of guidelines
TOP = "top"  # the anchor of the guidelines' first line


class GuidelinesPanel(QDockWidget):
    """The current version of the guidelines, rendered from Markdown, one anchor per tag's section;
    while shown, it follows the session's selected point, and it shows a new version once saved."""

    def __init__(self, session: ReviewSession, parent: QWidget | None = None) -> None:
        super().__init__("Review guidelines", parent)
        self.setObjectName("guidelines")  # the window's saved layout names its docks
        self.session = session
        self.guidelines: Guidelines | None = None
        self.section: str = TOP  # the anchor shown: a tag's value, or TOP
        self.sections: set[str] = set()  # the anchors the current text has
        self.version = QLabel(wordWrap=True)
        self.version.setStyleSheet("color: palette(mid)")
        self.browser = QTextBrowser(openExternalLinks=True)
        self.browser.document().setDocumentMargin(10)
        self.start_button = QPushButton("Start from the LeMAJ guidelines")
        self.start_button.setToolTip("Make the guidelines shipped with Assay this project's version 1 (audited)")
        self.start_button.clicked.connect(self._on_start_clicked)
        self.edit_button = QPushButton("Edit as a new version…")
        self.edit_button.setToolTip("Change the guidelines: the text saved becomes the next version (audited)")
        self.edit_button.clicked.connect(self._on_edit_clicked)
        self.editor: GuidelinesEditor | None = None
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.addWidget(self.version)
        layout.addWidget(self.browser, 1)
        layout.addWidget(self.start_button)
        layout.addWidget(self.edit_button)
        self.setWidget(body)
        self.setMinimumWidth(WIDTH)
        self.refresh()
        session.subscribe(self._on_changes)

    def _on_changes(self, changes: Changes) -> None:
        if changes.guidelines or changes.project:
            self.show_tag(None)  # read again; a new version is read from its top
        elif self.isVisible() and (changes.point or changes.answer or changes.opened):
            self.show_tag(tag_in_play(self.session.current_point))

    def refresh(self) -> None:
        """Read the current version again (another reviewer or `assay guidelines --set` may have made one)."""
        current = self.session.guidelines()
        self.start_button.setVisible(current is None)
        self.edit_button.setVisible(current is not None)
        if current == self.guidelines and current is not None:
            return
        self.guidelines = current
        if current is None:
            self.sections = set()
            self.version.setText("This project has no review guidelines yet.")
            self.browser.setMarkdown(
                "Reviewers tag by the project's guidelines. Start from the LeMAJ guidelines below, or set "
                "your firm's with `assay guidelines --set FILE.md`."
            )
            return
        self.version.setText(f"Version {current.version} · {current.author} · {current.created_at:%Y-%m-%d %H:%M}")
        self.version.setToolTip(f"SHA-256 of this version: {current.sha256}")
        self.browser.setMarkdown(current.text)
        self._name_sections()

    def _name_sections(self) -> None:
        """An anchor on each heading named by its first word, so a tag's section can be scrolled to."""
        self.sections = set()
        block = self.browser.document().begin()
        first = True
        while block.isValid():
            words = block.text().split()
            if block.blockFormat().headingLevel() > 0 and words:
                names = [words[0].lower()] + ([TOP] if first else [])
                self.sections.update(names)
                first = False
                cursor = QTextCursor(block)
                cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
                anchor = QTextCharFormat()
                anchor.setAnchor(True)
                anchor.setAnchorNames(names)
                cursor.mergeCharFormat(anchor)
            block = block.next()

    def show_tag(self, tag: Tag | None) -> None:
        """Scroll to the section of this tag (the top when there is none, or no such section)."""
        self.refresh()
        self.section = tag.value if tag is not None and tag.value in self.sections else TOP
        if self.section == TOP:
            self.browser.moveCursor(QTextCursor.MoveOperation.Start)
            self.browser.verticalScrollBar().setValue(0)
        else:
            self.browser.scrollToAnchor(self.section)

    def _on_start_clicked(self) -> None:
        self.save(DEFAULT_GUIDELINES.read_text(encoding="utf-8"))

    def _on_edit_clicked(self) -> None:
        current = self.session.guidelines()
        if current is None:
            return
        self.editor = GuidelinesEditor(current, self)
        self.editor.accepted.connect(lambda: self.save(self.editor.text.toPlainText()) if self.editor else None)
        self.editor.open()

    def save(self, text: str) -> bool:
        """The text as the next version (the same text as now adds none), through the session: the panel
        shows it when the session says the guidelines changed; a refusal is said in the status bar."""
        return self.session.set_guidelines(text)


class GuidelinesEditor(QDialog):
    """The current guidelines' Markdown to change; saving makes the next version, reviews made from then
    on record it. Headings whose first word is a tag ("## Incorrect") are what Shift+F1 opens at."""

    def __init__(self, current: Guidelines, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Review guidelines — version {current.version + 1}")
        self.text = QPlainTextEdit(current.text)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        hint = QLabel(
            "Markdown. Keep a heading per tag (## Correct, ## Incorrect, ## Irrelevant, ## Missing): "
            "Shift+F1 opens the guidelines there. Saving makes a new version; earlier reviews keep theirs.",
            wordWrap=True,
        )
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Save).setText(f"Save as version {current.version + 1}")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(900, 640)  # the shipped text's 100-character lines unbroken
        fit_to_screen(self)  # never larger than a laptop's screen


def tag_in_play(point: ReviewPoint | None) -> Tag | None:
    """The tag whose section a reviewer on this point wants: theirs, else the judge's beside it."""
    if point is None:
        return None
    return point.point.tag or point.judge_tag


def open_guidelines(window: QMainWindow, panel: GuidelinesPanel, document: QWidget) -> None:
    """Shift+F1: show the panel at the selected point's tag, on the right beside the window's panes
    where the screen has the room, else in the contract's place (the answer list and the answer stay
    in view; the contract comes back when the panel closes); Shift+F1 again closes it."""
    if panel.isVisible():
        panel.hide()
        return
    size = window.size()
    room = window.screen().availableGeometry().width()
    document.setVisible(window.minimumSizeHint().width() + WIDTH + 16 <= room)  # first: never wider
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, panel)
    panel.show()
    if not window.isMaximized():  # back to the width it had, now that the queue has made room
        window.layout().activate()
        window.resize(size.expandedTo(window.minimumSizeHint()))
    panel.raise_()
    panel.show_tag(tag_in_play(panel.session.current_point))
