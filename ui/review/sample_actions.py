"""The review window's statistics actions: review a random sample (seeded, recorded) and review the
least certain answers first. Kept apart so the window's module stays about reviewing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from app.errors import AssayError
from app.figures import calibration
from app.review import sampling

if TYPE_CHECKING:
    from ui.review.window import ReviewWindow


def refresh_queue_statistics(window: ReviewWindow, certainty: bool = True, requery: bool = True) -> None:
    """Give the queue each answer's random draw and (when asked: it reads every label, so not at
    every window opening) its calibrated certainty; `requery=False` keeps the rows just read."""
    model = window.queue_model
    if certainty:
        model.certainty = calibration.review_certainty(window.project)
    model.sampled = sampling.sampled_answers(window.project)
    model.reset(window.service.queue() if requery else model.rows)


def draw_random_sample(window: ReviewWindow, size: int | None = None, seed: int | None = None) -> bool:
    """Draw answers uniformly at random for review (asking how many when not given); the queue then
    lists the drawn answers first. Returns whether a draw was made."""
    if size is None:
        size, accepted = QInputDialog.getInt(
            window,
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
        draw = sampling.draw_sample(window.project, size, seed, actor=window.service.reviewer)
    except AssayError as exc:
        window.say(f"No sample drawn: {exc}.")
        return False
    refresh_queue_statistics(window)
    window.table.sortByColumn(window.queue_model.HEADERS.index("Sample"), Qt.SortOrder.DescendingOrder)
    window.say(
        f"Drew {len(draw.answer_ids)} of {draw.population} answers at random (draw {draw.number}, seed "
        f"{draw.seed}); they are marked in the queue's Sample column."
    )
    return True


def least_certain_first(window: ReviewWindow) -> None:
    """Order the queue so Next answer goes to the answers the judges are least sure of."""
    refresh_queue_statistics(window)
    window.table.sortByColumn(window.queue_model.CERTAINTY, Qt.SortOrder.AscendingOrder)
    window.table.selectRow(0)
    window.say("Queue ordered least certain first: calibrated judge confidence, lowered where judges disagree.")
