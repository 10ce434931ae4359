"""The windows' door to an open project: every use case that a window, dialog or worker of ui/ starts on
the project beyond one reviewer's review, so that no widget holds the project or opens a database session
(issue 66 §1; tests/test_ui_doors.py walks ui/ for it).

The review window takes a Workspace and asks it for its ReviewSession (app/review/session.py), made here
with judging's standing and claim checker passed in: review knows nothing of judging. The panes and the
review's dialogs (raters, backups, qualification) go through that session; what lies beyond it is here:
opening a project and importing into it, judge runs and model checks, the sample's tour, the dashboard's
figures, exports and their preview, and fitting the claim checker. Each call opens sessions of its own,
so a worker thread may make one while the window reads.
"""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from app import backups
from app.export.formats import Redact
from app.export.redaction import keep_everything
from app.ingest.datasets import ImportSummary, import_dataset
from app.ingest.documents import PageProgress
from app.judging.runs import JudgeSettings, Progress, RunSummary
from app.judging.sample_tour import SampleTour
from app.project import SAMPLE_DATASET, AskPassphrase, Project, project_passphrase, project_url
from app.review.session import ReviewSession
from app.settings import ModelChoice
from storage.db import sqlite_path

if TYPE_CHECKING:
    from app.figures.dashboard import DashboardFigures
    from app.judging.learning import FitResult
    from app.judging.model_check import ModelCheck
    from app.judging.standing import Standing


def open_workspace(path: Path, *, encrypt: bool = False, ask: AskPassphrase | None = None) -> Workspace:
    """Open (or create) the project file at `path`; an encrypted one's passphrase is asked with `ask`
    (without it, the project opens as a plain one would). AssayError when it does not open."""
    url = project_url(path)
    return Workspace(Project.open(url, project_passphrase(url, encrypt, ask) if ask is not None else None))


def restore_unopened(path: Path, backup: Path, ask: AskPassphrase) -> Path | None:
    """A project file that will not open, replaced by `backup` (an encrypted one's passphrase asked with
    `ask`): where the file replaced is kept aside."""
    return backups.restore(path, backup, project_passphrase(project_url(backup), False, ask))


WindowCommand = Callable[["Workspace", argparse.Namespace], int]


def window_command(run: WindowCommand) -> Callable[[Project, argparse.Namespace], int]:
    """A command of `assay` that opens a window (`assay gui`): the CLI opens the project, the window
    gets its workspace."""
    return lambda project, args: run(Workspace(project), args)


class Workspace:
    """An open project, as the windows use it."""

    def __init__(self, project: Project) -> None:
        self._project = project

    @property
    def project(self) -> Project:
        """For app/ and tests; ui/ never reads it (tests/test_ui_doors.py)."""
        return self._project

    @property
    def url(self) -> str:
        return self._project.url

    @property
    def name(self) -> str:
        """The project as a window's title names it: its file's name, or its database's."""
        return self.url.rsplit("/", 1)[-1]

    def file(self) -> Path | None:
        """The project file; None for a project on a database server."""
        return sqlite_path(self.url)

    def close(self) -> None:
        self._project.close()

    def has_answers(self) -> bool:
        return bool(self._project.answers())

    def review(self, reviewer: str) -> ReviewSession:
        """`reviewer`'s review of the project: the session the review window's panes go through, with the
        standing of the judge run beside an answer and the claim checker's findings."""
        from app.judging.standing import standing_of_run
        from app.judging.verification import claim_checker

        sessions = self._project.sessions
        return ReviewSession(
            self._project, reviewer, lambda rater: standing_of_run(sessions, rater), lambda: claim_checker(sessions)
        )

    # ------------------------------------------------------------------ importing

    def import_dataset(
        self,
        dataset: Path,
        passwords: Mapping[str, str] | None = None,
        on_progress: Callable[[PageProgress], None] | None = None,
        on_reading: Callable[[int, int], None] = lambda _d, _t: None,
    ) -> ImportSummary:
        """A dataset into the project, all or nothing, and its contracts read by the claim checker (`read_contracts`,
        `on_reading(done, total)` after each); the bundled sample comes with its labelled set and the claim checker's
        run on it. PasswordRequired names a protected PDF without its password."""
        if dataset == SAMPLE_DATASET:
            from app.judging.sample_tour import import_sample

            return import_sample(self._project, on_progress=on_progress, on_reading=on_reading)
        summary = import_dataset(self._project.sessions, dataset, passwords=passwords, on_progress=on_progress)
        self.read_contracts(on_reading)
        return summary

    def read_contracts(self, on_progress: Callable[[int, int], None] = lambda _d, _t: None) -> int:
        """What the claim checker's encoders read of each contract not read yet, kept with it
        (app/judging/verification.read_contracts): at import, so that no check reads a whole contract on its first
        claim. How many were read; `on_progress(done, total)` after each."""
        from app.judging.verification import read_contracts

        with self._project.reading("the reading of the contracts"):
            return read_contracts(self._project.sessions, on_progress=on_progress)

    def import_sample_if_empty(self, on_reading: Callable[[int, int], None] = lambda _d, _t: None) -> None:
        """`assay gui --sample`: the sample into a project that has no answers yet."""
        if not self.has_answers():
            self.import_dataset(SAMPLE_DATASET, on_reading=on_reading)

    def sample_tour(self) -> SampleTour | None:
        """What to do on the untouched sample's first open (app/judging/sample_tour.py); else None."""
        from app.judging.sample_tour import sample_tour

        return sample_tour(self._project)

    def check_sample(
        self, tour: SampleTour, on_progress: Callable[[Progress], None], cancel: threading.Event
    ) -> RunSummary:
        """The tour's answers checked by the claim checker, in its order, each saved as it is checked."""
        from app.judging.sample_tour import check_sample

        with self._project.reading("the sample's check"):
            return check_sample(self._project, tour, on_progress=on_progress, cancel=cancel)

    # ------------------------------------------------------------------ judges

    def allowed_hosts(self) -> list[str]:
        """The hosts this project's texts may be sent to (each opt-in recorded and audited)."""
        return self._project.allowed_hosts()

    def allow_host(self, host: str, actor: str) -> None:
        if host not in self.allowed_hosts():
            self._project.set_host_allowed(host, True, actor)

    def standing_of_model(self, choice: ModelChoice) -> Standing:
        """How a model measured on this project's human labels, as the judge dialog shows it."""
        from app.judging.standing import standing_of_model

        return standing_of_model(self._project.sessions, choice)

    def judge(
        self,
        settings: JudgeSettings,
        answer_ids: list[str] | None,
        *,
        on_loaded: Callable[[str], None],
        on_progress: Callable[[Progress], None],
        cancel: threading.Event,
    ) -> RunSummary:
        """A judge run (app/judging/judge_run.py): the backend, the run, the model's speed, the default jury."""
        from app.judging.judge_run import judge_answers

        with self._project.reading("a judge run"):  # a restore is refused while it writes
            return judge_answers(
                self._project, settings, answer_ids, on_loaded=on_loaded, on_progress=on_progress, cancel=cancel
            )

    def check_model(
        self,
        settings: JudgeSettings,
        name: str | None,
        size: int,
        long_timed: int,
        on_progress: Callable[[Progress], None],
        cancel: threading.Event,
    ) -> ModelCheck:
        """The chosen model on `size` human-labelled answers: its agreement with people, and its speed."""
        from app.judging.model_check import check_model

        with self._project.reading("a model check"):
            return check_model(
                self._project,
                settings,
                name=name,
                size=size,
                long_timed=long_timed,
                on_progress=on_progress,
                cancel=cancel,
            )

    # ------------------------------------------------------------------ figures, exports, the checker's fit

    def dashboard_figures(
        self, on_progress: Callable[[int, str], None], cancel: threading.Event, triage_rule: tuple[float, float]
    ) -> DashboardFigures:
        """Every figure of the dashboard, computed in a child process (figures.dashboard.Cancelled when
        cancelled)."""
        from app.figures.dashboard import compute_elsewhere

        with self._project.reading("the dashboard's computation"):  # its child process's connections are not counted
            return compute_elsewhere(self._project, on_progress, cancel, triage_rule)

    def export(self, fmt: str, out: Path, redact: Redact = keep_everything, paper: str = "a4") -> Path:
        """The reviewed set written to `out` in `fmt` (app/export/formats.py)."""
        from app.export.formats import export

        with self._project.reading():
            return export(self._project, fmt, out, redact, paper)

    def first_page_png(self, redact: Redact, paper: str, dpi: int) -> bytes:
        """The report's first page as it would be exported now, as a PNG."""
        from app.export.report import first_page_png

        with self._project.reading():
            return first_page_png(self._project, redact, paper, dpi=dpi)

    def fit_checker(self, actor: str, on_progress: Callable[[int, int], None], cancel: threading.Event) -> FitResult:
        """The claim checker refitted on this project's reviews, adopted only if it measures better."""
        from app.judging.learning import fit_checker

        with self._project.reading("the claim checker's refit"):
            return fit_checker(self._project, None, actor, on_progress=on_progress, cancel=cancel)

    def reset_checker(self, actor: str) -> str | None:
        """The shipped claim checker speaks for the project again; what spoke before, None if it did."""
        from app.judging.learning import reset_checker

        return reset_checker(self._project, None, actor)
