"""The judge beside the reviewer, as the review session reads it: which rater speaks for the project, how
good it is on each answer, and which automatic raters speak as no finding. Each weighs the project's human
labels (0.3 s and more at 100,000 answers), so each is read again only after a save in this process that
may change it, never at each open, J or K."""

from __future__ import annotations

from typing import Any

from app import raters
from app.review.changes import StandingOf
from app.review.service import ReviewService


class JudgeBeside:
    """Read through `service` (its commit counts tell what may have changed); `standing_of` reads how
    good the judge is beside an answer (the window passes app.judging.standing.reference_standing)."""

    def __init__(self, service: ReviewService, standing_of: StandingOf) -> None:
        self.service = service
        self.standing_of = standing_of
        self._standings: dict[str, Any] = {}  # by answer: read once until something is saved
        self._standings_read_at: tuple[int, int] = (-1, 0)  # the saves of no one answer, and submits, then
        self._submitted = 0  # reviews submitted: their labels now count as human labels
        self._rater_read_at = self.service.changes("")[0]  # the saves of no one answer when it was read
        self._doubtful: dict[str, str] = {}  # automatic raters that speak as no finding: their standing
        self._doubtful_read_at = -1  # ReviewService.saves when it was read

    @property
    def rater(self) -> int | None:
        """The id of the rater that speaks for the project, as the service last read it."""
        return self.service.judge_rater

    def submitted(self) -> None:
        """A review was submitted: its labels count as human labels now, so standings are read again."""
        self._submitted += 1

    def refresh_rater(self) -> bool:
        """Read again which rater speaks for the project after a save of no one answer (a judge run, a
        stress test, imported labels): it weighs every rater's standing, too slow to ask per answer.
        True when it was read again (what was read under the rater before is stale)."""
        unscoped = self.service.changes("")[0]
        if unscoped == self._rater_read_at:
            return False
        self._rater_read_at = unscoped
        self.service.refresh_judge_rater()
        return True

    def standing(self, answer_id: str) -> Any:
        """The judge's standing beside the answer, read again only after a save that may change it (a
        judge run, a stress test, imported labels, a review submitted), not after the save each open makes."""
        saves = (self.service.changes("")[0], self._submitted)
        if saves != self._standings_read_at:
            self._standings.clear()
            self._standings_read_at = saves
        if answer_id not in self._standings:
            self._standings[answer_id] = self.standing_of(answer_id)
        return self._standings[answer_id]

    def doubtful(self) -> dict[str, str]:
        """The automatic raters that do not speak as findings (near chance, or not measured yet), each
        with its standing in words, for their greyed columns; read again only after a save."""
        if self._doubtful_read_at != self.service.saves:
            self._doubtful = {s.name: s.words for s in raters.standings(self.service.project.sessions) if not s.trusted}
            self._doubtful_read_at = self.service.saves
        return self._doubtful
