"""What the review window's menu keys do that needs the window: the functions of keymap.WindowKeys
(app/review/keymap.py), here bound to one ReviewWindow. The keys the session does alone (undo, redo,
merge, delete) are bound to the session's own methods; these ask first (a dialog), read a pane's
selection, or open another window.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, cast

from PySide6.QtWidgets import QMainWindow, QWidget

from app.review.session import ReviewSession
from ui.export_dialog import export_from_dialog
from ui.review import review_actions
from ui.review.answer_pane import AnswerPane
from ui.review.document_pane import DocumentPane
from ui.review.guidelines_panel import GuidelinesPanel, open_guidelines
from ui.review.queue_pane import QueuePane
from ui.review.sample_actions import least_certain_first


class Window(Protocol):
    """What these read of ui.review.window.ReviewWindow (which imports this module)."""

    session: ReviewSession
    workspace: Any  # app.workspace.Workspace
    answer_pane: AnswerPane
    document_pane: DocumentPane
    queue_pane: QueuePane
    guidelines_panel: GuidelinesPanel

    def submit(self) -> None: ...
    def confirm_sign_off(self) -> object: ...
    def move_answer(self, step: int) -> None: ...
    def open_side_by_side(self) -> None: ...
    def open_judge_dialog(self) -> None: ...
    def show_shortcuts(self) -> object: ...
    def say(self, sentence: str) -> None: ...


class WindowCommands:
    """keymap.WindowKeys for one review window."""

    def __init__(self, window: Window) -> None:
        self.window = window
        self.widget = cast(QMainWindow, window)  # a ReviewWindow: the dialogs' parent

    def _asking(self, ask: Callable[[QWidget, ReviewSession], object]) -> None:
        """A review action that asks first (a dialog); then the keys work on the table again at once."""
        ask(self.widget, self.window.session)
        self.widget.activateWindow()
        self.window.answer_pane.points.setFocus()

    def add_point_from_selection(self) -> None:
        self.window.answer_pane.add_point_from_selection()

    def edit_point(self) -> None:
        self._asking(review_actions.edit_point)

    def split_point(self) -> None:
        self._asking(review_actions.split_point)

    def comment_point(self) -> None:
        self._asking(review_actions.comment_point)

    def submit(self) -> None:
        self.window.submit()

    def sign_off(self) -> None:
        self.window.confirm_sign_off()

    def search(self) -> None:
        self.window.document_pane.focus_search()

    def move_answer(self, step: int) -> None:
        self.window.move_answer(step)

    def least_certain_first(self) -> None:
        least_certain_first(self.window.queue_pane, self.window.session)

    def side_by_side(self) -> None:
        self.window.open_side_by_side()

    def run_judge(self) -> None:
        self.window.open_judge_dialog()

    def export(self) -> None:
        export_from_dialog(self.widget, self.window.workspace, self.window.say)

    def shortcuts(self) -> None:
        self.window.show_shortcuts()

    def guidelines(self) -> None:
        open_guidelines(self.widget, self.window.guidelines_panel, self.window.document_pane)
