"""The queue's statistics actions: review a random sample (seeded, recorded) and review the least
certain answers first. Kept apart so the queue's module stays about the queue."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from app.errors import AssayError
from app.figures import calibration
from app.review import sampling
from app.review.session import ReviewSession
from ui.review.queue_pane import QueuePane


def refresh_queue_statistics(
    queue: QueuePane, session: ReviewSession, certainty: bool = True, requery: bool = True
) -> None:
    """Give the queue each answer's random draw and (when asked: it reads every label, so not at
    every window opening) its calibrated certainty; `requery=False` keeps the rows just read."""
    model = queue.model
    if certainty:
        model.certainty = calibration.review_certainty(session.project)
    model.sampled = sampling.sampled_answers(session.project)
    model.reset(session.queue() if requery else model.rows)


def draw_random_sample(
    queue: QueuePane, session: ReviewSession, size: int | None = None, seed: int | None = None
) -> bool:
    """Draw answers uniformly at random for review (asking how many when not given); the queue then
    lists the drawn answers first. Returns whether a draw was made."""
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
    try:
        draw = sampling.draw_sample(session.project, size, seed, actor=session.reviewer)
    except AssayError as exc:
        session.say(f"No sample drawn: {exc}.")
        return False
    refresh_queue_statistics(queue, session)
    queue.table.sortByColumn(queue.model.HEADERS.index("Sample"), Qt.SortOrder.DescendingOrder)
    session.say(
        f"Drew {len(draw.answer_ids)} of {draw.population} answers at random (draw {draw.number}, seed "
        f"{draw.seed}); they are marked in the queue's Sample column."
    )
    return True


def least_certain_first(queue: QueuePane, session: ReviewSession) -> None:
    """Order the queue so Next answer goes to the answers the judges are least sure of."""
    refresh_queue_statistics(queue, session)
    queue.table.sortByColumn(queue.model.CERTAINTY, Qt.SortOrder.AscendingOrder)
    queue.table.selectRow(0)
    session.say("Queue ordered least certain first: calibrated judge confidence, lowered where judges disagree.")
