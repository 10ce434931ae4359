"""The review session's ground floor: its one notification, and the doors to the project beyond the open
answer that the review window goes through (ReviewSession, app/review/session.py, adds the open answer).

No pane or dialog queries the project itself: it asks the session for the documents' names and their
matters, a search of a document, the guidelines, the random draws and certainty, the disagreements
waiting, the raters' standings, the reviewers against gold, the backups and the claim checker's
findings. What an action here changes (guidelines saved, answers imported, a sample drawn, a backup
restored) comes out as one `Changes`, which every pane hears, as the open answer's actions do. What lies
beyond a reviewer's review (judge runs, exports, the dashboard) is app/workspace.py's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app import backups, matters, raters
from app.errors import AssayError, ProjectDamaged
from app.figures import calibration
from app.ingest.datasets import import_dataset
from app.plain_text import counted
from app.project import Guidelines, Project, SearchHit
from app.raters import RaterStanding
from app.review import adjudication, qualification, sampling
from app.review.adjudication import Case
from app.review.changes import Changes, Listener
from app.review.qualification import QualificationSettings
from models.checker.report import AnswerReport
from storage.db import sqlite_path
from storage.matters import Matter

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

    # ------------------------------------------------------------------ raters and reviewers against gold

    def rater_standings(self) -> list[RaterStanding]:
        """Every automatic rater that has rated answers, with its standing on human labels."""
        return [s for s in raters.standings(self.project.sessions) if s.rated]

    def speaking_rater(self) -> RaterStanding | None:
        """The rater that speaks for the project now (chosen, else the best measured); None yet."""
        return raters.default_rater(self.project.sessions)

    def chosen_rater(self) -> str | None:
        """The rater the lead chose to speak for the project; None: the best measured speaks."""
        with self.project.sessions() as session:
            return raters.chosen(session)

    def qualification_settings(self) -> QualificationSettings:
        return qualification.qualification_settings(self.project)

    def set_qualification(self, gold_share: float | None, training: bool, gold: list[str]) -> QualificationSettings:
        """Gold mixed into review queues (share None: none), training mode, the raters taken as gold;
        audited as this reviewer's. AssayError when refused."""
        return qualification.configure(self.project, self.reviewer, gold_share=gold_share, training=training, gold=gold)

    def agreement_with_gold(self) -> list[dict[str, Any]]:
        """Each reviewer against gold: kappa and recall per gold tag, with their intervals."""
        return qualification.agreement_with_gold(self.project)

    def training_feedback(self, answer_id: str) -> list[dict[str, Any]] | None:
        """In training mode, once a gold answer is submitted: its gold tags beside this reviewer's."""
        return qualification.training_feedback(self.project, self.reviewer, answer_id)

    def documents_by_matter(self) -> list[tuple[Matter | None, list[str]]]:
        """Each matter this login may see with its documents' names, then the unassigned documents (None)."""
        return matters.documents_by_matter(self.project)

    # ------------------------------------------------------------------ backups of a project file

    def backup_file(self) -> Path | None:
        """The project file backups are made of; None on a database server, which keeps its own."""
        try:
            return backups.project_file(self.project.url)
        except AssayError:
            return None

    def back_up(self) -> backups.Backup:
        """A backup of the project file, checked page by page (the full integrity check of the file): meant
        for a worker thread, it reads the file, never a session. ProjectDamaged says which backup to restore."""
        path = backups.project_file(self.project.url)
        try:
            return backups.make_backup(path, self.project.passphrase)
        except ProjectDamaged as exc:
            raise ProjectDamaged(exc.path, exc.problem, backups.advice(exc.path)) from exc

    def restore_backup(self, backup: Path) -> Path | None:
        """`backup` in the project file's place, the file replaced kept aside (where: returned); every view
        then shows the restored file. None, and the sentence why, when it was not restored."""
        try:
            with self.project.replacing_file() as path:  # what reads it (a claim check, the dashboard) ends first
                aside = backups.restore(path, backup, self.project.passphrase)
        except (AssayError, OSError) as exc:
            self.say(str(exc))
            return None
        self.restored()
        kept = f" The file it replaced is kept as {aside}." if aside else ""
        self.say(f"Restored the backup of {backup.name}.{kept}")
        return aside

    def restored(self) -> None:
        """The project file was replaced by a backup: nothing read of the old one is kept."""
        self._project_replaced()
        self.notify(Changes(project=True, queue=True))

    # ------------------------------------------------------------------ the claim checker

    def claim_findings(self, answer_id: str) -> AnswerReport | None:
        """What the claim checker finds in an answer's points: as stored by the last `assay verify`, else
        checked now (a second or more the first time, a tenth an answer after), nothing saved. Meant for a
        worker thread: it reads through a database session of its own and touches nothing else here."""
        with self._claims_made:
            if self._claims is None:
                self._claims = self._claim_checker()
            claims = self._claims
        with self.project.reading():  # a restore waits: the whole check reads one file
            return claims(answer_id)

    def _project_replaced(self) -> None:
        """The project file was replaced (a backup restored): nothing read of the old one is kept."""
        self._titles = None
        with self._claims_made:
            self._claims = None  # its documents prepared from the old file
