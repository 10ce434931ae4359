"""The judge beside the reviewer, as the review session reads it: which rater speaks for the project, how
good the judge is whose tags an answer shows, and which automatic raters speak as no finding. Each weighs
the project's human labels (0.1 s and more at 100,000 answers), so each is read again only after a save in
this process that may change it (ReviewService.label_changes), never at each open, J or K."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.review.service import ReviewService
from storage import reviews

StandingOfRater = Callable[[str], Any]  # a judge run's name → its standing (app.judging.standing.standing_of_run)


class JudgeBeside:
    """Read through `service`; `standing_of_rater` reads how good a judge run is (the window passes
    app.judging.standing.standing_of_run: review knows nothing of judging)."""

    def __init__(self, service: ReviewService, standing_of_rater: StandingOfRater) -> None:
        self.service = service
        self.standing_of_rater = standing_of_rater
        self._read_at: tuple[Any, ...] | None = None  # label_changes and the rater when these were read
        self._judge_of: dict[str, str | None] = {}  # answer → the judge run whose tags it shows
        self._standings: dict[str, Any] = {}  # judge run → its standing
        self._rater_read_at = service.label_changes  # the service read the rater as it was made
        self._doubtful: dict[str, str] = {}  # automatic raters that speak as no finding: their standing
        self._doubtful_read_at: tuple[int, int] | None = None

    @property
    def rater(self) -> int | None:
        """The id of the rater that speaks for the project, as the service last read it."""
        return self.service.judge_rater

    def refresh_rater(self) -> bool:
        """Read again which rater speaks for the project after a save that may change it (a judge run, a
        stress test, imported labels, a review submitted). True when it was read again (what was read
        under the rater before is stale)."""
        if self.service.label_changes == self._rater_read_at:
            return False
        self._rater_read_at = self.service.label_changes
        self.service.refresh_judge_rater()
        return True

    def standing(self, answer_id: str) -> Any:
        """The standing of the judge run whose tags the answer shows (None: no judge ran), read once a run
        until a save may change it: every answer that run judged shares it."""
        now = (self.service.label_changes, self.service.judge_rater)
        if now != self._read_at:
            self._judge_of.clear()
            self._standings.clear()
            self._read_at = now
        if answer_id not in self._judge_of:
            with self.service.project.sessions() as session:
                self._judge_of[answer_id] = reviews.reference_judge_name(session, answer_id, self.service.judge_rater)
        name = self._judge_of[answer_id]
        if name is None:
            return None
        if name not in self._standings:
            self._standings[name] = self.standing_of_rater(name)
        return self._standings[name]

    def doubtful(self) -> dict[str, str]:
        """The automatic raters that do not speak as findings (near chance, or not measured yet), each
        with its standing in words, for their greyed columns."""
        if self._doubtful_read_at != self.service.label_changes:
            self._doubtful_read_at = self.service.label_changes
            self._doubtful = {s.name: s.words for s in self.service.rater_standings() if not s.trusted}
        return self._doubtful
