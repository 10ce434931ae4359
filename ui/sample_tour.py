"""The sample's first open in the window: open the tour's first answer and check the sample in the
background with the claim checker (no model loaded)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.errors import AssayError
from app.judging.runs import JudgeSettings
from app.judging.sample_tour import SampleTour
from app.workspace import Workspace
from ui.judge_dialog import JudgeWorker

if TYPE_CHECKING:
    from ui.review.window import ReviewWindow

# What the embedded model is, and what a capable one adds: said once, when the sample first opens.
TOUR_TEXT = (
    "The verdicts beside each point come from the claim checker, which needs no model and was measured "
    "on answers lawyers labelled: it confirms a point (✓ correct) only where it was right 95 times in "
    "100, flags one it finds unsupported or contradicted (✗ incorrect), and otherwise leaves it to you. "
    "It cannot say that a point is irrelevant or that something is missing: that is the LeMAJ judge's "
    "work, and it needs a capable model of your own (Ollama, LM Studio, a server on your network — "
    "Project ▸ Run the judge…). The small embedded model is a demonstration: near chance on these labels."
)


CHECKED = "Sample checked: ✓ confirmed, ✗ flagged, the rest is yours to read. Hover here for what a model adds."


class SampleCheckWorker(JudgeWorker):
    """The workspace's check of the sample (app.judging.sample_tour.check_sample) on a pool thread, with the
    judge worker's signals."""

    RUN = "claim check"  # one name for the claim checker: never "judge run" while it runs
    DOER = "the claim checker"

    def __init__(self, workspace: Workspace, tour: SampleTour) -> None:
        super().__init__(workspace, JudgeSettings(), list(tour.answer_ids))
        self.tour = tour

    def run(self) -> None:
        try:
            summary = self.workspace.check_sample(self.tour, self._report, self.cancel)
        except AssayError as exc:
            self.signals.failed.emit(f"The sample was not checked: {exc}")
            return
        except Exception as exc:  # a bug: say so in the window rather than kill a pool thread silently
            self.signals.failed.emit(f"the check stopped on an unexpected error: {exc!r}")
            return
        self.signals.finished.emit(summary)


def start_sample_tour(window: ReviewWindow, tour: SampleTour | None) -> SampleCheckWorker | None:
    """On the sample's first open (tour from Workspace.sample_tour, the window opened at its
    first answer): check the sample in the background, progress in the status bar; else nothing."""
    if tour is None:
        return None
    worker = SampleCheckWorker(window.workspace, tour)
    window.judge_runner.start(worker, worker.settings)
    window.message.setToolTip(TOUR_TEXT)
    window.say("The claim checker is checking the sample, this answer first (no model needed). Hover here for more.")
    worker.signals.finished.connect(lambda _summary: window.say(CHECKED))  # after the runner's own line
    return worker
