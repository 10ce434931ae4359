"""The sample's first open in the window: open the tour's first answer and judge in the background."""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.errors import AssayError
from app.judging.sample_tour import SampleTour, judge_sample
from app.project import Project
from ui.judge_dialog import JudgeWorker

if TYPE_CHECKING:
    from ui.review.window import ReviewWindow


class SampleJudgeWorker(JudgeWorker):
    """app.judging.sample_tour.judge_sample on a pool thread, with the judge worker's signals."""

    def __init__(self, project: Project, tour: SampleTour) -> None:
        super().__init__(project, tour.settings, list(tour.answer_ids))
        self.tour = tour

    def run(self) -> None:
        try:
            summary = judge_sample(self.project, self.tour, on_progress=self._report, cancel=self.cancel)
        except AssayError as exc:
            self.signals.failed.emit(f"The sample was not judged: {exc}")
            return
        except Exception as exc:  # a bug: say so in the window rather than kill a pool thread silently
            self.signals.failed.emit(f"the judge run stopped on an unexpected error: {exc!r}")
            return
        self.signals.finished.emit(summary)


def start_sample_tour(window: ReviewWindow, tour: SampleTour | None) -> SampleJudgeWorker | None:
    """On the sample's first open (tour from app.judging.sample_tour.sample_tour, the window opened at its
    first answer): start judging in the background, progress in the status bar; else nothing."""
    if tour is None:
        return None
    worker = SampleJudgeWorker(window.project, tour)
    window.judge_runner.start(worker, tour.settings)
    window.say(
        f"The embedded judge is judging {len(tour.answer_ids)} sample answers on this computer, this one first: "
        "its tags appear beside yours as each answer is done. The window stays usable."
    )
    return worker
