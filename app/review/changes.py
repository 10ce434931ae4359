"""What an action on the review changed (`Changes`, the one notification every view listens to, as
Anki's OpChanges), and what is read ahead for the next answer (`Prepared`): the review session's
vocabulary (app/review/session.py), kept apart from its actions, and how an answer is read ahead."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.errors import AssayError
from app.ingest.citations import Citation, find_citations
from app.ingest.contract_terms import ContractReading, contract_reading
from app.project import Passage, Project
from app.review.service import ReviewService, ReviewState
from storage.answers import AnswerDetail


@dataclass(frozen=True, kw_only=True)
class Changes:
    """What one action changed: the views read the session again for the parts named here."""

    opened: bool = False  # another answer is open (its document may be another too)
    answer: bool = False  # the open answer's review: its points, tags, ratings, status, sign-off
    point: bool = False  # the selected point
    rows: tuple[str, ...] = ()  # the answers whose queue rows changed
    judged: bool = False  # those rows changed by a judge run: their judge counts are read again
    queue: bool = False  # the whole queue is read again (a run ended, the blind mode changed)
    project: bool = False  # the project file itself was replaced (a backup restored): everything
    guidelines: bool = False  # the review guidelines have a new version: whoever shows them reads them again
    sampled: bool = False  # a random sample was drawn: the queue reads its draws (and certainty) again
    advance: int = 0  # the queue goes this many answers on (a submitted review goes to the next)
    message: str | None = None  # a sentence for the status bar; "" clears it, None leaves it
    prepared: Prepared | None = None  # what was read ahead for the answer just opened, if it was
    source: object = None  # the view whose action it was (it has shown the change already)


@dataclass(frozen=True, kw_only=True)
class Prepared:
    """The answer the reviewer will likely open next, read while they read this one: what opening it
    will show (ReviewService.preview) and what showing it needs. Good only while `changes` is what
    ReviewService.changes says: a save that may have changed the answer makes it stale."""

    state: ReviewState
    changes: tuple[int, int]
    standing: Any  # how good the judge is whose tags it shows (app.judging.standing.Standing), or None
    passages: list[Passage]  # of its document
    reading: ContractReading | None  # of its document: parties, defined terms, references
    citations: list[Citation]  # in its text
    rendered: object = None  # what a view made of it ahead (the answer pane: its text, first point marked)


@dataclass(frozen=True, kw_only=True)
class Shown:
    """What the open answer shows now, which an answer read ahead about the same document reuses."""

    answer: AnswerDetail
    passages: list[Passage]
    reading: ContractReading | None


def read_ahead(
    project: Project, service: ReviewService, answer_id: str, shown: Shown, standing_of: StandingOf
) -> Prepared | None:
    """What opening the answer will show, read now with nothing saved; None if it is gone (moving there
    will say so)."""
    changes = service.changes(answer_id)
    try:
        state = service.preview(answer_id)
    except AssayError:
        return None
    same_document = state.answer.document_id == shown.answer.document_id
    passages = shown.passages if same_document else service.passages(state.answer)
    reading = shown.reading if same_document else contract_reading_or_problem(project, state.answer.document_id)[0]
    return Prepared(
        state=state,
        changes=changes,
        standing=standing_of(answer_id),
        passages=passages,
        reading=reading,
        citations=find_citations(state.answer.text, passages),
    )


def contract_reading_or_problem(project: Project, document_id: int) -> tuple[ContractReading | None, str]:
    """The contract's reading, or None and the sentence that says why it could not be read."""
    try:
        return contract_reading(project, document_id), ""
    except AssayError as exc:
        return None, f"The contract's terms and references could not be read: {exc}"


Listener = Callable[[Changes], None]
StandingOf = Callable[[str], Any]  # an answer id → the standing of the judge whose tags the answer shows
