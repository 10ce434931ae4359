"""The review session's ground floor: its one notification, and the doors to the project beyond the open
answer that the review window goes through (ReviewSession, app/review/session.py, adds the open answer).

No pane queries the project itself: it asks the session for the documents' names, a search of a
document, the guidelines, the random draws and certainty, the disagreements waiting and the claim
checker's findings. What an action here changes (guidelines saved, answers imported, a sample drawn)
comes out as one `Changes`, which every pane hears, as the open answer's actions do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from app.errors import AssayError
from app.figures import calibration
from app.ingest.datasets import import_dataset
from app.plain_text import counted
from app.project import Guidelines, Project, SearchHit
from app.review import adjudication, sampling
from app.review.adjudication import Case
from app.review.changes import Changes, Listener
from models.checker.engine import AnswerReport
from storage.db import sqlite_path

ClaimsOf = Callable[[str], AnswerReport | None]  # an answer id → the claim checker's findings on its points
# Makes a ClaimsOf, on first use: the claim checker loads in a second or more, never when a window opens
# (the window passes one over app.judging.verification: review knows nothing of judging).
ClaimChecker = Callable[[], ClaimsOf]


def _no_claims(_answer_id: str) -> None:
    return None


def _no_claim_checker() -> ClaimsOf:
    return _no_claims


class ProjectSession:
    """A reviewer's session on a project: who listens to its changes, and what it reads and changes of
    the project beyond the open answer."""

    def __init__(self, project: Project, reviewer: str, claim_checker: ClaimChecker | None = None) -> None:
        self.project = project
        self._reviewer = reviewer
        self._listeners: list[Listener] = []
        self._titles: dict[str, str] | None = None  # read once, again after an import or a restore
        self._claim_checker = claim_checker or _no_claim_checker
        self._claims: ClaimsOf | None = None  # made on first use, by whichever thread asks first
        self._claims_made = threading.Lock()

    @property
    def reviewer(self) -> str:
        return self._reviewer

    # ------------------------------------------------------------------ the one notification

    def subscribe(self, listener: Listener) -> None:
        """Call `listener` with every change, in the order the listeners subscribed."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def notify(self, changes: Changes) -> None:
        for listener in list(self._listeners):
            listener(changes)

    def say(self, sentence: str) -> None:
        """A sentence for whoever shows the session's messages (the window's status bar)."""
        self.notify(Changes(message=sentence))

    # ------------------------------------------------------------------ documents and answers

    def document_titles(self) -> dict[str, str]:
        """Each document's name as a reader knows it, by its stored name."""
        if self._titles is None:
            self._titles = self.project.document_titles()
        return self._titles

    def search(self, document: str, words: str, limit: int = 15) -> list[SearchHit]:
        """The passages of a document that best match the words (BM25), best first; AssayError when the
        words or the document cannot be searched."""
        return self.project.search(document, words, limit=limit)

    def folder(self) -> Path | None:
        """The folder the project file is in; None for a project on a database server."""
        path = sqlite_path(self.project.url)
        return path.parent if path is not None else None

    def import_answers(self, path: Path) -> bool:
        """A dataset into the project (answers, with their documents); the queue is read again."""
        try:
            summary = import_dataset(self.project.sessions, path)
        except AssayError as exc:
            self.say(f"Nothing imported: {exc}")
            return False
        self._titles = None  # new documents, named
        self.notify(
            Changes(
                queue=True,
                message=f"Imported {path.name}: {counted(summary.answers_added, 'new answer')}, "
                f"{counted(summary.documents_added, 'new document')}, {summary.answers_updated} updated.",
            )
        )
        return True

    # ------------------------------------------------------------------ the guidelines

    def guidelines(self) -> Guidelines | None:
        """The current version of the review guidelines; None when the project has none."""
        return self.project.guidelines()

    def set_guidelines(self, text: str) -> bool:
        """The text as the guidelines' next version, by this reviewer (audited; the same text as now adds
        none); every view showing the guidelines reads them again."""
        try:
            saved, added = self.project.set_guidelines(text, self.reviewer)
        except AssayError as exc:
            self.say(f"Guidelines not saved: {exc}")
            return False
        said = (
            f"Guidelines version {saved.version} saved: reviews from now on record it."
            if added
            else f"The guidelines are unchanged: the text is version {saved.version}'s."
        )
        self.notify(Changes(guidelines=added, message=said))
        return True

    # ------------------------------------------------------------------ the queue's statistics

    def review_certainty(self) -> dict[str, float | None]:
        """How sure the judges are of each answer (reads every label: asked for, not at each opening)."""
        return calibration.review_certainty(self.project)

    def sampled_answers(self) -> dict[str, int]:
        """The answers in the random sample, with their draw's number."""
        return sampling.sampled_answers(self.project)

    def draw_sample(self, size: int, seed: int | None = None) -> sampling.Draw | None:
        """Draw answers uniformly at random for review (seeded, recorded); the queue reads its draws again.
        None, and the sentence why, when none was drawn."""
        try:
            draw = sampling.draw_sample(self.project, size, seed, actor=self.reviewer)
        except AssayError as exc:
            self.say(f"No sample drawn: {exc}.")
            return None
        said = (
            f"Drew {len(draw.answer_ids)} of {draw.population} answers at random (draw {draw.number}, seed "
            f"{draw.seed}); they are marked in the queue's Sample column."
        )
        self.notify(Changes(sampled=True, message=said))
        return draw

    # ------------------------------------------------------------------ adjudication

    def adjudication_cases(self) -> list[Case]:
        """The answers whose reviewers disagree and that wait for a decision, most disputed first."""
        return adjudication.waiting(self.project)

    def adjudicators(self) -> list[str]:
        return adjudication.adjudicators(self.project)

    def may_adjudicate(self, name: str) -> bool:
        return adjudication.may_adjudicate(self.project, name)

    # ------------------------------------------------------------------ the claim checker

    def claim_findings(self, answer_id: str) -> AnswerReport | None:
        """What the claim checker finds in an answer's points: as stored by the last `assay verify`, else
        checked now (a second or more the first time, a tenth an answer after), nothing saved. Meant for a
        worker thread: it reads through a database session of its own and touches nothing else here."""
        with self._claims_made:
            if self._claims is None:
                self._claims = self._claim_checker()
            claims = self._claims
        return claims(answer_id)

    def _project_replaced(self) -> None:
        """The project file was replaced (a backup restored): nothing read of the old one is kept."""
        self._titles = None
        with self._claims_made:
            self._claims = None  # its documents prepared from the old file
