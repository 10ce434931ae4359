"""Every window within the screen it opens on: a window asked for at 1500 × 900 opens at most as large
as a 1366 × 768 laptop's screen leaves room for, and inside it. Each large window calls it after
choosing its size; the panes' own minimum sizes are kept small enough that a window can shrink that far."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QSize
from PySide6.QtWidgets import QWidget


def fit_to_screen(window: QWidget) -> None:
    """Shrink the window to its screen's free area (less its frame) and move it inside, where it is not."""
    screen = window.screen()
    if screen is None:
        return
    room = screen.availableGeometry()
    frame = window.frameGeometry()
    extra = QSize(max(frame.width() - window.width(), 0), max(frame.height() - window.height(), 0))
    size = window.size().boundedTo(QSize(room.width() - extra.width(), room.height() - extra.height()))
    if size != window.size():
        window.resize(size.expandedTo(window.minimumSize()))
    frame = window.frameGeometry()
    x = min(max(frame.left(), room.left()), room.right() - frame.width() + 1)
    y = min(max(frame.top(), room.top()), room.bottom() - frame.height() + 1)
    if QPoint(x, y) != frame.topLeft():
        window.move(QPoint(x, y))
