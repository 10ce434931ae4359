"""The review actions that ask the reviewer something first (the words of an edited point, where to
split it, a comment, why a signed review is reopened), each then one ReviewSession action.

The session says what went wrong (a sentence in the status bar) and tells every pane what changed;
these only ask. The keys and the other menu actions call the session directly.
"""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QWidget

from app.review.session import ReviewSession


def edit_point(parent: QWidget, session: ReviewSession) -> None:
    point = session.current_point
    if point is None:
        return
    text, ok = QInputDialog.getMultiLineText(parent, "Edit data point", "Data point:", point.point.text)
    if ok:
        session.edit_current(text)


def split_point(parent: QWidget, session: ReviewSession) -> None:
    point = session.current_point
    if point is None:
        return
    text, ok = QInputDialog.getText(
        parent, "Split data point", "Put a | where the data point should be cut:", text=point.point.text
    )
    if ok and "|" in text:
        session.split_current(text.index("|"))


def comment_point(parent: QWidget, session: ReviewSession) -> None:
    """A comment of a few lines on the selected point (Enter starts a new line; OK saves it)."""
    point = session.current_point
    if point is None:
        return
    dialog = QInputDialog(parent)
    dialog.setWindowTitle("Comment")
    dialog.setLabelText("Comment on this data point (several lines allowed):")
    dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
    dialog.setTextValue(point.point.comment or "")
    dialog.resize(520, 260)
    if dialog.exec():
        session.comment_current(dialog.textValue())


def add_missing(parent: QWidget, session: ReviewSession, text: str, passages: list[str]) -> bool:
    """A missing data point from the document text selected (else asked for), citing its passages."""
    if session.state is None:
        return False
    if not text:
        text, ok = QInputDialog.getText(parent, "Missing data point", "What does the answer leave out?")
        if not ok:
            return False
    return session.add_missing(text, passages)


def reopen(parent: QWidget, session: ReviewSession, reason: str | None = None) -> None:
    """Withdraw the open answer's sign-off, for a reason asked of the reviewer (kept in the audit log)."""
    if session.state is None:
        return
    if reason is None:
        reason, ok = QInputDialog.getText(parent, "Reopen signed review", "Why is the signed review reopened?")
        if not ok:
            return
    session.reopen(reason)
