"""The review actions on the open answer, as the keys and the Review menu trigger them: tag or accept
the selected data point and move on, make one from selected text, edit, split, merge, delete or
comment on it; rate, comment on and submit the answer; undo and redo; blind review.

Each is one call to app.review.service.ReviewService (one short transaction, saved at once); the window
shows the state it returns, and an expected failure is one sentence in the status bar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QInputDialog

from app.errors import AssayError
from app.review.service import BLIND, ReviewState
from models.vocabulary import Tag

if TYPE_CHECKING:
    from ui.review.window import ReviewWindow


def call_and_show(window: ReviewWindow, call: Callable[[], ReviewState | None], keep_point: bool = True) -> bool:
    """Call the review service and show the state it returns; an AssayError becomes one sentence."""
    window.finish_opening()
    try:
        state = call()
    except AssayError as exc:
        window.say(str(exc))
        return False
    if state is not None:
        window.show_state(state, keep_point=keep_point)
    window.say("")
    return True


def change_current_point(window: ReviewWindow, change: Callable[[str, int], ReviewState], move: int = 0) -> None:
    """Apply `change(answer id, point id)` to the selected point, then go `move` points on."""
    window.finish_opening()  # the point's saved id, not a preview's
    point = window.current_point()
    if window.state is None or point is None:
        return
    if call_and_show(window, lambda: change(window.state.answer.id, point.point.id)) and move:
        move_to_point(window, move)


def move_to_point(window: ReviewWindow, step: int) -> None:
    """Select the data point `step` rows down (up if negative), stopping at the first and the last."""
    if window.state is None or not window.state.points:
        return
    row = min(max(window.points.currentIndex().row() + step, 0), len(window.state.points) - 1)
    window.points.selectRow(row)


def tag_current_point(window: ReviewWindow, tag: Tag) -> None:
    change_current_point(window, lambda a, p: window.service.set_tag(a, p, tag), move=1)


def accept_judge_tag(window: ReviewWindow) -> None:
    change_current_point(window, window.service.accept_judge, move=1)


def add_missing_from_selection(window: ReviewWindow) -> None:
    """A missing data point from the document text selected, citing its passages (else asked for)."""
    if window.state is None:
        return
    text, passages = window.document.selected_text_and_passages()
    if not text:
        text, ok = QInputDialog.getText(window, "Missing data point", "What does the answer leave out?")
        if not ok:
            return
        passages = [window.document.focused] if window.document.focused else []
    answer_id = window.state.answer.id
    if call_and_show(window, lambda: window.service.add_missing(answer_id, text, passages)):
        window.points.selectRow(len(window.state.points) - 1)
        window.points.setFocus()


def add_point_from_selection(window: ReviewWindow) -> None:
    """Make a data point of the answer text selected in the answer pane."""
    span = window.answer_view.selected_span() if window.state is not None else None
    if span is None:
        window.say("Select the answer text to make a data point of, in the answer pane.")
        return
    answer_id = window.state.answer.id
    if call_and_show(window, lambda: window.service.add_point(answer_id, *span)):
        row = next(
            i
            for i, p in enumerate(window.state.points)
            if p.point.span_start is not None and p.point.span_start >= span[0]
        )
        window.points.selectRow(row)
        window.points.setFocus()


def edit_point(window: ReviewWindow) -> None:
    point = window.current_point()
    if point is None:
        return
    text, ok = QInputDialog.getMultiLineText(window, "Edit data point", "Data point:", point.point.text)
    if ok:
        change_current_point(window, lambda a, p: window.service.edit_text(a, p, text))


def split_point(window: ReviewWindow) -> None:
    point = window.current_point()
    if point is None:
        return
    text, ok = QInputDialog.getText(
        window, "Split data point", "Put a | where the data point should be cut:", text=point.point.text
    )
    if ok and "|" in text:
        change_current_point(window, lambda a, p: window.service.split(a, p, text.index("|")))


def merge_point(window: ReviewWindow) -> None:
    change_current_point(window, window.service.merge_with_next)


def delete_point(window: ReviewWindow) -> None:
    change_current_point(window, window.service.delete)


def comment_point(window: ReviewWindow) -> None:
    point = window.current_point()
    if point is None:
        return
    text, ok = QInputDialog.getText(window, "Comment", "Comment on this data point:", text=point.point.comment or "")
    if ok:
        change_current_point(window, lambda a, p: window.service.comment_point(a, p, text))


def undo(window: ReviewWindow) -> None:
    call_and_show(window, window.service.undo)


def redo(window: ReviewWindow) -> None:
    call_and_show(window, window.service.redo)


def submit(window: ReviewWindow) -> None:
    """Submit the review of the open answer and go on to the next answer in the queue."""
    if window.state is not None and call_and_show(window, lambda: window.service.submit(window.state.answer.id)):
        window.say("Review submitted.")
        window.queue_pane.move(1)


def rate_answer(window: ReviewWindow) -> None:
    """Save the holistic correctness and relevance chosen in the answer pane."""
    if window.state is None:
        return
    correctness, relevance = window.answer_pane.ratings()
    call_and_show(window, lambda: window.service.rate(window.state.answer.id, correctness, relevance))


def comment_answer(window: ReviewWindow) -> None:
    """Save the comment on the whole answer, if it changed."""
    comment = window.answer_pane.comment.text()
    if window.state is not None and comment != (window.state.comment or ""):
        call_and_show(window, lambda: window.service.comment_answer(window.state.answer.id, comment))


def set_blind(window: ReviewWindow, blind: bool) -> None:
    """Blind review hides the judge until the answer is submitted; assisted shows it."""
    window.service.set_mode(BLIND if blind else "assisted")
    if window.state is not None:
        call_and_show(window, lambda: window.service.state(window.state.answer.id))
