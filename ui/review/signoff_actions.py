"""Signing off the open answer's review, and reopening a signed one (Review menu).

A sign-off binds the reviewer's tags and comments, the answer, the contract and the guideline version
by a digest in the audit log (app.review.service.ReviewService.sign_off); while it stands, the service
refuses every change to the review, and the window says so in its status bar. Reopening asks why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QInputDialog, QMenu

from app.errors import AssayError

if TYPE_CHECKING:
    from ui.review.window import ReviewWindow

SIGN_SHORTCUT = "Ctrl+Shift+Return"


def attach_signoff(window: ReviewWindow, menu: QMenu) -> None:
    sign = QAction("Sign off this answer", window)
    sign.setShortcut(QKeySequence(SIGN_SHORTCUT))
    sign.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    sign.triggered.connect(lambda: sign_off(window))
    menu.addAction(sign)
    reopen_action = QAction("Reopen signed review…", window)
    reopen_action.triggered.connect(lambda: reopen(window))
    menu.addAction(reopen_action)
    window.queue_pane.answerChosen.connect(lambda _answer_id: say_if_signed(window))  # after the window opened it


def say_if_signed(window: ReviewWindow) -> None:
    """A signed answer says so as it opens: its review is locked until reopened."""
    signed = window.state.signoff if window.state is not None else None
    if signed is not None:
        window.say(
            f"Signed off by {signed.reviewer} on {signed.signed_at:%Y-%m-%d %H:%M} UTC (sha256 {signed.digest[:16]}…): "
            "Review ▸ Reopen signed review… to change it."
        )


def sign_off(window: ReviewWindow) -> None:
    """Sign the open answer's submitted review; the sentence says what was signed."""
    if window.state is None:
        return
    window.finish_opening()
    try:
        signed = window.service.sign_off(window.state.answer.id)
    except AssayError as exc:
        window.say(str(exc))
        return
    window.show_state(window.service.state(signed.answer_id))
    version = "" if signed.guideline_version is None else f" under guideline version {signed.guideline_version}"
    window.say(f"Signed off{version}: sha256 {signed.digest[:16]}… (the review is locked until reopened)")


def reopen(window: ReviewWindow, reason: str | None = None) -> None:
    """Withdraw the open answer's sign-off, for a reason asked of the reviewer (kept in the audit log)."""
    if window.state is None:
        return
    if reason is None:
        reason, ok = QInputDialog.getText(window, "Reopen signed review", "Why is the signed review reopened?")
        if not ok:
            return
    try:
        window.service.reopen(window.state.answer.id, reason)
    except AssayError as exc:
        window.say(str(exc))
        return
    window.show_state(window.service.state(window.state.answer.id))
    window.say("Sign-off reopened: the review can be changed, then signed again.")
