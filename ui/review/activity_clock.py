"""How long a reviewer actually works on the open answer: key presses, clicks and scrolls keep the
clock running; a minute without any stops it."""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer

IDLE_AFTER_SECONDS = 60  # no key or mouse for this long: the reviewer is away, the clock stops


class ActivityClock(QObject):
    """Counts the seconds a reviewer is actually at work on the open answer (idle time excluded)."""

    def __init__(self, flush: Callable[[float], None], parent: QObject) -> None:
        # Parented to the window: when the window goes, Qt removes the clock from the
        # application's event filters with it, so no filter ever points at a deleted object.
        super().__init__(parent)
        self._flush = flush
        self.last_activity = time.monotonic()
        self.pending = 0.0
        self._last_tick = time.monotonic()
        self.timer = QTimer(self, interval=5000)
        self.timer.timeout.connect(self._on_timer_timeout)
        self.timer.start()

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.Wheel):
            self.last_activity = time.monotonic()
        return False

    def _on_timer_timeout(self) -> None:
        now = time.monotonic()
        if now - self.last_activity <= IDLE_AFTER_SECONDS:
            self.pending += now - self._last_tick
        self._last_tick = now
        if self.pending >= 30:
            self.flush()

    def flush(self) -> None:
        seconds, self.pending = self.pending, 0.0
        self._last_tick = time.monotonic()
        if seconds > 0:
            self._flush(seconds)
