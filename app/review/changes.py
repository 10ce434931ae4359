"""What an action on the review changed (`Changes`, the one notification every view listens to, as
Anki's OpChanges), and what is read ahead for the next answer (`Prepared`): the review session's
vocabulary (app/review/session.py), kept apart from its actions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.ingest.citations import Citation
from app.ingest.contract_terms import ContractReading
from app.project import Passage
from app.review.service import ReviewState


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


Listener = Callable[[Changes], None]
StandingOf = Callable[[str], Any]  # an answer id → the standing of the judge whose tags the answer shows
