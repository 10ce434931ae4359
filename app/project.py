"""Which project to open: a SQLite file (default in the user data folder) or a database URL."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidInput, PassphraseNeeded
from storage import analytics, audit, documents, judgements, raters, reviews
from storage.answers import AnswerDetail, AnswerSummary, answer_detail, list_answers
from storage.db import NotAProject, ProjectDamaged, counts, is_encrypted, open_project, sqlite_path, url_for_path
from storage.documents import Passage, SearchHit
from storage.file_gate import FileGate
from storage.guidelines import Guidelines, current_guidelines, set_guidelines
from storage.judgements import StoredDataPoint
from storage.signoff_checks import SignOffCheck, check_signoffs

__all__ = [
    "AnswerDetail",
    "AnswerSummary",
    "Guidelines",
    "Passage",
    "Project",
    "SearchHit",
    "SignOffCheck",
    "StoredDataPoint",
]

PASSPHRASE_ENV = "ASSAY_PASSPHRASE"  # for scripts; people are asked
RESOURCES = Path(__file__).resolve().parent.parent / "resources"
SAMPLE_DATASET = RESOURCES / "sample"
ALLOWED_HOSTS = "network.allowed_hosts"
MATTER_NAME = "project.matter_name"  # the matter a project reviews, as its users name it: the report's title
ICON = RESOURCES / "icons" / "assay.png"
DEFAULT_GUIDELINES = RESOURCES / "guidelines" / "lemaj.md"  # the sample's, and any project's to start from


def default_project_path() -> Path:
    from platformdirs import user_data_path

    return user_data_path("Assay", appauthor=False) / "default.assay"


def project_url(project: str | Path | None = None, db_url: str | None = None) -> str:
    if db_url:
        return db_url
    return url_for_path(project if project is not None else default_project_path())


AskPassphrase = Callable[[str, bool], "str | None"]  # (project file, creating it?) -> passphrase or None


def project_passphrase(url: str, encrypt: bool, ask: AskPassphrase) -> str | None:
    """None for a plain project; else the passphrase, from the environment or asked of the user."""
    path = sqlite_path(url)
    if encrypt and path is None:
        raise InvalidInput("--encrypt", "only SQLite project files are encrypted; a server has its own protection")
    encrypted = is_encrypted(url)
    creating = encrypt and not encrypted
    if not (creating or encrypted):
        return None
    if creating and path is not None and path.exists():
        raise InvalidInput(str(path), "this project already exists unencrypted; encryption is chosen for new ones")
    passphrase = os.environ.get(PASSPHRASE_ENV) or ask(str(path), creating)
    if not passphrase:
        raise PassphraseNeeded(f"{path} is encrypted: set {PASSPHRASE_ENV} or enter its passphrase")
    return passphrase


@dataclass
class Project:
    """An open project: the one session factory of this process, and the queries the UI needs."""

    url: str
    sessions: sessionmaker[Session]
    passphrase: str | None = field(default=None, repr=False)  # an encrypted project's backups need it
    # every thread's hold on a project file, which a restore waits on (a server's database is never replaced)
    _gate: FileGate | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if sqlite_path(self.url) is not None:
            self._gate = FileGate(self.sessions.kw["bind"])

    @classmethod
    def open(cls, url: str, passphrase: str | None = None) -> Project:
        """Open (or create) a project; a passphrase opens, or creates, an encrypted project file.
        A damaged file is refused with the newest good backup to restore."""
        from app import anchors

        path = sqlite_path(url)
        created = path is not None and not path.exists()
        try:
            project = cls(url, open_project(url, passphrase), passphrase)
        except ProjectDamaged as exc:
            from app.backups import advice

            raise ProjectDamaged(exc.path, exc.problem, advice(exc.path)) from exc
        except NotAProject as exc:
            from app.backups import advice, list_backups

            if list_backups(exc.path):  # it was a project once: say how to get it back
                raise NotAProject(exc.path, f"{exc}; {advice(exc.path)}") from exc
            raise
        anchors.opened(url, created)  # its audit log witnessed outside it from now on
        return project

    def close(self) -> None:
        """Release the database; SQLite folds its write-ahead log back into the project file."""
        from app import anchors

        bind = self.sessions.kw["bind"]
        bind.dispose()
        anchors.flush()  # the newest entries' witness, where quick edits held it back

    def reading(self, task: str = "") -> AbstractContextManager[None]:
        """Hold the project file for a task of several queries on a worker thread (a claim check, an export, a
        child process's dashboard): a restore waits for it to end, so the task never reads part of one file and
        part of another. A long task that writes as it goes, named by `task` ("a judge run"), refuses a restore
        at once instead."""
        return self._gate.reading(task) if self._gate is not None else nullcontext()

    @contextmanager
    def replacing_file(self) -> Iterator[Path]:
        """The project file, closed: every reader's connection returned (FileBusy when one is not within
        storage.file_gate.WAIT_S), and none opened until the block ends. A reader asking meanwhile waits, then
        reads what the block left in the file's place."""
        path = sqlite_path(self.url)
        if self._gate is None or path is None:
            raise InvalidInput(self.url, "only a project file can be replaced; a database server keeps its own backups")
        with self._gate.replacing():
            self.close()  # the audit log's newest witness first, from the file being replaced
            yield path

    def counts(self) -> dict[str, int]:
        """How many of each thing the project holds; `claims`: the data points the answers make, each
        once (`data_points` counts every rater's record of a point: the judge's, the jury's, each copy)."""
        with self.sessions() as session:
            return counts(session) | {"claims": analytics.claims_made(session)}

    # The per-project opt-in for API judges: a host texts may be sent to, recorded and audited.

    def allowed_hosts(self) -> list[str]:
        with self.sessions() as session:
            return list(reviews.setting(session, ALLOWED_HOSTS, []))

    def set_host_allowed(self, host: str, allowed: bool, actor: str) -> None:
        with self.sessions.begin() as session:
            hosts = set(reviews.setting(session, ALLOWED_HOSTS, []))
            hosts = hosts | {host} if allowed else hosts - {host}
            reviews.set_setting(session, ALLOWED_HOSTS, sorted(hosts))
            action = "network.allowed" if allowed else "network.forbidden"
            audit.append_audit(session, actor, action, "host", host, {"host": host})

    def matter_name(self) -> str | None:
        """The matter this project reviews, as its users named it (the report's title); None if unnamed."""
        with self.sessions() as session:
            return reviews.setting(session, MATTER_NAME) or None

    def set_matter_name(self, name: str, actor: str) -> None:
        """Name the matter the project reviews (an empty name forgets it); audited."""
        name = " ".join(name.split())
        if len(name) > 200:
            raise InvalidInput(repr(name[:40] + "…"), "a matter's name is at most 200 characters")
        with self.sessions.begin() as session:
            reviews.set_setting(session, MATTER_NAME, name or None)
            audit.append_audit(session, actor, "project.named", "project", "matter_name", {"name": name or None})

    # Review guidelines (versioned, audited) and the reviewers' sign-offs, checked against what is stored.

    def guidelines(self) -> Guidelines | None:
        """The current review guidelines, None when the project has none."""
        with self.sessions() as session:
            return current_guidelines(session)

    def set_guidelines(self, text: str, author: str) -> tuple[Guidelines, bool]:
        """New guidelines text becomes a new version (audited); the same text as now adds none (False)."""
        if not text.strip():
            raise InvalidInput("guidelines", "the text is empty")
        with self.sessions.begin() as session:
            return set_guidelines(session, text, author)

    def signoffs(self) -> list[SignOffCheck]:
        """Every sign-off in force, and whether it still matches the review, answer and document stored."""
        with self.sessions() as session:
            return check_signoffs(session)

    def answers(self) -> list[AnswerSummary]:
        with self.sessions() as session:
            return list_answers(session)

    def answer(self, answer_id: str) -> AnswerDetail | None:
        with self.sessions() as session:
            return answer_detail(session, answer_id)

    def document_titles(self) -> dict[str, str]:
        """Each document's name as a reader knows it (app/document_names.py), by its stored name."""
        from app.document_names import display_name

        with self.sessions() as session:
            return {name: display_name(name, opening) for name, opening in documents.document_openings(session).items()}

    def passages(self, document_id: int) -> list[Passage]:
        with self.sessions() as session:
            return documents.passages_of(session, document_id)

    def search(self, document: str, query: str, limit: int = 20) -> list[SearchHit]:
        with self.sessions() as session:
            name = self.document_named(document)
            document_id = documents.document_id_by_name(session, name)
            assert document_id is not None
            return documents.search_passages(session, document_id, query, limit)

    def data_points(self, answer_id: str) -> dict[str, list[StoredDataPoint]]:
        """Each rater's data points on an answer, by rater name."""
        with self.sessions() as session:
            return {
                rater.name: points
                for rater in raters.raters(session)
                if (points := judgements.data_points_of(session, answer_id, rater.id))
            }

    def document_named(self, wanted: str) -> str:
        """The document whose name is, or uniquely contains, what the user typed."""
        with self.sessions() as session:
            names = documents.document_names(session)
        if wanted in names:
            return wanted
        candidates = [n for n in names if wanted.lower() in n.lower()]
        if len(candidates) != 1:
            problem = "no document has that name" if not candidates else f"{len(candidates)} documents match it"
            raise InvalidInput(repr(wanted), problem)
        return candidates[0]
