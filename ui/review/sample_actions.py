"""The queue's statistics actions: review a random sample (seeded, recorded) and review the least
certain answers first. Kept apart so the queue's module stays about the queue; both go through the
review session, which draws the sample and tells the queue to read its draws again."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from app.review.session import ReviewSession
from ui.review.queue_pane import QueuePane


def draw_random_sample(
    queue: QueuePane, session: ReviewSession, size: int | None = None, seed: int | None = None
) -> bool:
    """Draw answers uniformly at random for review (asking how many when not given); the queue then
    lists the drawn answers first. Returns whether a draw was made (the session says why not)."""
    if size is None:
        size, accepted = QInputDialog.getInt(
            queue,
            "Review a random sample",
            "Answers to draw at random (only reviews of randomly drawn answers back the triage bound\n"
            "and the estimates; the seed is recorded so the draw can be repeated):",
            20,
            1,
            100_000,
        )
        if not accepted:
            return False
    if session.draw_sample(size, seed) is None:
        return False
    queue.table.sortByColumn(queue.model.HEADERS.index("Sample"), Qt.SortOrder.DescendingOrder)
    return True


def least_certain_first(queue: QueuePane, session: ReviewSession) -> None:
    """Order the queue so Next answer goes to the answers the judges are least sure of."""
    queue.refresh_statistics()
    queue.table.sortByColumn(queue.model.CERTAINTY, Qt.SortOrder.AscendingOrder)
    queue.table.selectRow(0)
    session.say("Queue ordered least certain first: calibrated judge confidence, lowered where judges disagree.")
