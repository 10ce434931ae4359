"""The review as one Qt-free session: which answer is open, which point is selected, the next answer
read ahead, undo and redo, and every action a key, a menu, the judge runner, side by side, the
adjudication window or a backup restore takes on the review.

napari's ViewerModel plays this part for its viewer: the windows are views of it. An action is a
method; it saves through app.review.service.ReviewService (one short transaction each) and then
announces what it changed with one notification, `Changes` (Anki's OpChanges): every pane of the
window subscribes and redraws what the changes name, so no pane reaches into another's widgets and
a change made anywhere (a tag given side by side, a verdict saved by a judge run) shows everywhere.
An expected refusal is a sentence in the changes (`message`), never an exception out of an action.
What the session reads and changes of the project beyond the open answer (the documents' names and
search, the guidelines, imports, random samples, the claim checker) is its base, ProjectSession
(app/review/session_project.py): no pane queries the project itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app import raters
from app.errors import AssayError
from app.figures.rater_names import rater_name, role_name
from app.ingest.citations import Citation, find_citations
from app.ingest.contract_terms import ContractReading
from app.project import Passage, Project
from app.review import adjudication
from app.review.adjudication import Case
from app.review.changes import Changes, Prepared, Shown, contract_reading_or_problem, read_ahead
from app.review.judge_beside import JudgeBeside, StandingOfRater
from app.review.service import ASSISTED, BLIND, JudgeCounts, QueueRow, ReviewPoint, ReviewService, ReviewState, Step
from app.review.session_project import ClaimChecker, ProjectSession
from models.vocabulary import Tag
from storage.signoffs import SignOff


def _no_standing(_rater: str) -> None:
    return None


class ReviewSession(ProjectSession):
    """One reviewer reviewing one project: the state every view shows, and the actions on it.
    `standing_of_rater` reads how good a judge run is, by its name, and `claim_checker` makes what reads
    the claim checker's findings (the window passes app.judging's: review knows nothing of judging)."""

    def __init__(
        self,
        project: Project,
        reviewer: str,
        standing_of_rater: StandingOfRater = _no_standing,
        claim_checker: ClaimChecker | None = None,
    ) -> None:
        super().__init__(project, reviewer, claim_checker)
        self.service = ReviewService(project, reviewer)
        self.service.on_step = self._record
        self.judge = JudgeBeside(self.service, standing_of_rater)
        self.state: ReviewState | None = None  # the open answer as this reviewer sees it
        self.row = 0  # the selected point's index in state.points
        self.passages: list[Passage] = []  # of the open answer's document
        self.reading: ContractReading | None = None  # of that document
        self.citations: list[Citation] = []  # found in the open answer's text
        self.standing: Any = None  # of the judge whose tags the open answer shows (standing_of_rater)
        self.prepared: Prepared | None = None
        self.previewing = False  # the open answer is shown from a preview: finish_opening saves it
        self._undo: list[Step] = []
        self._redo: list[Step] = []

    # ------------------------------------------------------------------ reading

    @property
    def answer_id(self) -> str | None:
        return self.state.answer.id if self.state is not None else None

    @property
    def current_point(self) -> ReviewPoint | None:
        state = self.state
        return state.points[self.row] if state is not None and 0 <= self.row < len(state.points) else None

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    @property
    def mode(self) -> str:
        return self.service.mode

    def queue(self) -> list[QueueRow]:
        return self.service.queue()

    def queue_row(self, answer_id: str) -> QueueRow:
        return self.service.queue_row(answer_id)

    def judge_counts(self, answer_ids: Sequence[str] | None = None) -> dict[str, JudgeCounts]:
        return self.service.judge_counts(answer_ids)

    def state_of(self, answer_id: str) -> ReviewState:
        return self.service.state(answer_id)

    # ------------------------------------------------------------------ opening

    def open(self, answer_id: str, *, use_prepared: bool = True) -> bool:
        """Open an answer: from what was prepared if it is this one and still fresh (shown as a preview
        until finish_opening saves it as opened), else read and saved now."""
        self.finish_opening()  # the answer left was opened before another is shown
        if self.judge.refresh_rater():
            self.prepared = None  # read under the rater before
        prepared = self._take_prepared(answer_id) if use_prepared else None
        self.prepared = None
        if prepared is not None:
            state = prepared.state
        else:
            try:
                state = self.service.open(answer_id)
            except AssayError as exc:
                self.say(str(exc))
                return False
        self._take(state, row=0, prepared=prepared)
        self.previewing = prepared is not None
        self.notify(
            Changes(
                opened=True,
                answer=True,
                point=True,
                rows=() if prepared is not None else (answer_id,),  # a preview's row changes once opened
                message=_signed_sentence(state.signoff) if state.signoff is not None else None,
                prepared=prepared,
            )
        )
        return True

    def _take_prepared(self, answer_id: str) -> Prepared | None:
        prepared = self.prepared
        fresh = (
            prepared is not None
            and prepared.state.answer.id == answer_id
            and prepared.changes == self.service.changes(answer_id)  # nothing saved since that changes it
        )
        return prepared if fresh else None

    def finish_opening(self) -> None:
        """Open (save as opened) the answer shown from a preview, if not done yet; were it any different
        now (another process saved since), it is shown again."""
        if not self.previewing or self.state is None:
            return
        self.previewing = False
        preview = self.state
        opened = self.service.open(preview.answer.id)
        changed = opened != preview  # point ids may differ: the selection must point at the saved ones
        if changed:
            self._take(opened, row=self.row)
        else:
            self.state = opened
        self.notify(Changes(answer=changed, rows=(preview.answer.id,)))

    def is_prepared(self, answer_id: str) -> bool:
        """Whether what is prepared is this answer, still fresh."""
        return self._take_prepared(answer_id) is not None

    def prepare(self, answer_id: str) -> Prepared | None:
        """Read ahead what opening the answer will show (nothing saved); None if it is gone."""
        if self.previewing or self.state is None:
            return None
        shown = Shown(answer=self.state.answer, passages=self.passages, reading=self.reading)
        self.prepared = read_ahead(self.project, self.service, answer_id, shown, self.judge.standing)
        return self.prepared

    def _take(self, state: ReviewState, *, row: int, prepared: Prepared | None = None) -> None:
        """Make `state` the open answer's, `row` selected; what a prepared answer holds is taken from it."""
        previous = self.state
        document_changed = previous is None or previous.answer.document_id != state.answer.document_id
        answer_changed = previous is None or previous.answer.id != state.answer.id
        self.state = state
        if document_changed:
            if prepared is not None:
                self.passages, self.reading = prepared.passages, prepared.reading
            else:
                self.passages = self.service.passages(state.answer)
                self.reading, problem = contract_reading_or_problem(self.project, state.answer.document_id)
                if problem:
                    self.say(problem)
        if prepared is not None:
            self.citations = prepared.citations
        elif answer_changed or document_changed:
            self.citations = find_citations(state.answer.text, self.passages)
        self.standing = prepared.standing if prepared is not None else self.judge.standing(state.answer.id)
        self.row = min(max(row, 0), max(len(state.points) - 1, 0))

    # ------------------------------------------------------------------ the selected point

    def select(self, row: int, source: object = None) -> None:
        """Select the point at `row` (kept within the points)."""
        if self.state is None or not self.state.points:
            return
        row = min(max(row, 0), len(self.state.points) - 1)
        if row == self.row:
            return
        self.row = row
        self.standing = self.judge.standing(self.state.answer.id)  # a stress test may have run
        self.notify(Changes(point=True, source=source))

    def select_point(self, point_id: int) -> None:
        if self.state is not None:
            self.select(next((i for i, p in enumerate(self.state.points) if p.point.id == point_id), self.row))

    def move(self, step: int) -> None:
        """Select the point `step` rows down (up if negative), stopping at the first and the last."""
        self.select(self.row + step)

    # ------------------------------------------------------------------ actions on the selected point

    def tag_current(self, tag: Tag) -> bool:
        """Tag the selected point, then go to the next."""
        return self._on_current(lambda a, p: self.service.set_tag(a, p, tag), move=1)

    def accept_judge(self) -> bool:
        """Take the judge's tag on the selected point as one's own, then go to the next."""
        return self._on_current(self.service.accept_judge, move=1)

    def edit_current(self, text: str) -> bool:
        return self._on_current(lambda a, p: self.service.edit_text(a, p, text))

    def split_current(self, at: int) -> bool:
        return self._on_current(lambda a, p: self.service.split(a, p, at))

    def merge_current(self) -> bool:
        return self._on_current(self.service.merge_with_next)

    def delete_current(self) -> bool:
        return self._on_current(self.service.delete)

    def comment_current(self, comment: str) -> bool:
        return self._on_current(lambda a, p: self.service.comment_point(a, p, comment))

    def _on_current(self, change: Callable[[str, int], ReviewState], move: int = 0) -> bool:
        self.finish_opening()  # the point's saved id, not a preview's
        point, answer_id = self.current_point, self.answer_id
        if answer_id is None or point is None:
            return False
        return self._act(lambda: change(answer_id, point.point.id), row=self.row + move)

    def add_missing(self, text: str, citation_ids: Sequence[str]) -> bool:
        """A critical omission (usually text selected in the document), citing its passages; selected."""
        answer_id = self.answer_id
        if answer_id is None:
            return False
        return self._act(lambda: self.service.add_missing(answer_id, text, list(citation_ids)), row=-1)

    def add_point(self, start: int, end: int) -> bool:
        """Make a data point of the answer text from `start` to `end`; it is selected."""
        answer_id = self.answer_id
        if answer_id is None:
            return False
        if not self._act(lambda: self.service.add_point(answer_id, start, end)):
            return False
        assert self.state is not None
        spans = [p.point.span_start for p in self.state.points]
        self.select(next((i for i, s in enumerate(spans) if s is not None and s >= start), self.row))
        return True

    # ------------------------------------------------------------------ the answer as a whole

    def rate(self, correctness: int | None, relevance: int | None) -> bool:
        answer_id = self.answer_id
        return answer_id is not None and self._act(lambda: self.service.rate(answer_id, correctness, relevance))

    def comment(self, comment: str) -> bool:
        """Save the comment on the whole answer, if it changed."""
        state = self.state
        if state is None or comment == (state.comment or ""):
            return False
        return self._act(lambda: self.service.comment_answer(state.answer.id, comment))

    def submit(self) -> bool:
        """Submit the review of the open answer; the queue goes on to the next answer."""
        answer_id = self.answer_id
        if answer_id is None:
            return False
        return self._act(lambda: self.service.submit(answer_id), message="Review submitted.", advance=1)

    def sign_off(self) -> bool:
        """Sign the open answer's submitted review; the sentence says what was signed."""
        answer_id = self.answer_id
        if answer_id is None:
            return False
        self.finish_opening()
        try:
            signed = self.service.sign_off(answer_id)
        except AssayError as exc:
            self.say(str(exc))
            return False
        version = "" if signed.guideline_version is None else f" under guideline version {signed.guideline_version}"
        return self._act(
            lambda: self.service.state(answer_id),
            message=f"Signed off{version}: sha256 {signed.digest[:16]}… (the review is locked until reopened)"
            + (
                f". This was your first sign-off: a signing key was made for you ({signed.key_fingerprint[:16]}…)"
                if signed.key_created and signed.key_fingerprint
                else ""
            ),
        )

    def reopen(self, reason: str) -> bool:
        """Withdraw the open answer's sign-off, for a reason kept in the audit log."""
        answer_id = self.answer_id
        if answer_id is None:
            return False
        try:
            self.service.reopen(answer_id, reason)
        except AssayError as exc:
            self.say(str(exc))
            return False
        return self._act(
            lambda: self.service.state(answer_id),
            message="Sign-off reopened: the review can be changed, then signed again.",
        )

    def set_blind(self, blind: bool) -> None:
        """Blind review hides the judge until the answer is submitted; assisted shows it."""
        self.service.set_mode(BLIND if blind else ASSISTED)
        answer_id = self.answer_id
        if answer_id is not None:
            self._act(lambda: self.service.state(answer_id))

    def add_active_time(self, seconds: float) -> None:
        """Time spent actively reviewing the open answer."""
        if self.state is not None:
            self.finish_opening()
            self.service.add_active_time(self.state.answer.id, seconds)
            self.notify(Changes())  # saved: what was prepared may be stale, nothing shown changed

    # ------------------------------------------------------------------ undo

    def _record(self, step: Step) -> None:
        self._undo.append(step)
        self._redo.clear()

    def undo(self) -> bool:
        """Put the points of the last change back as they were (on whichever answer it was, which opens)."""
        return self._step_back(self._undo, self._redo, "undo")

    def redo(self) -> bool:
        return self._step_back(self._redo, self._undo, "redo")

    def _step_back(self, taken: list[Step], kept: list[Step], name: str) -> bool:
        if not taken:
            return False
        self.finish_opening()
        step = taken[-1]
        points = step.before if name == "undo" else step.after
        try:
            state = self.service.restore(step.answer_id, points, f"{name} {step.name}")
        except AssayError as exc:
            self.say(str(exc))
            return False
        kept.append(taken.pop())
        other = step.answer_id != self.answer_id
        self._take(state, row=0 if other else self.row)
        self.notify(Changes(opened=other, answer=True, point=True, rows=(step.answer_id,), message=""))
        return True

    # ------------------------------------------------------------------ changes made elsewhere

    def tag(self, answer_id: str, point_id: int, tag: Tag | None, source: object = None) -> bool:
        """Tag a point of any answer (side by side tags two answers' points at once)."""
        return self._elsewhere(answer_id, lambda: self.service.set_tag(answer_id, point_id, tag), source)

    def accept_judge_of(self, answer_id: str, point_id: int, source: object = None) -> bool:
        return self._elsewhere(answer_id, lambda: self.service.accept_judge(answer_id, point_id), source)

    def _elsewhere(self, answer_id: str, change: Callable[[], ReviewState], source: object) -> bool:
        self.finish_opening()
        try:
            state = change()
        except AssayError as exc:
            self.notify(Changes(message=str(exc), source=source))
            return False
        shown = answer_id == self.answer_id
        if shown:
            self._take(state, row=self.row)
        self.notify(Changes(answer=shown, rows=(answer_id,), message="", source=source))
        return True

    def judged(self, answer_id: str) -> None:
        """A judge run saved its verdict on an answer: its queue row gets the scores, and the open
        answer the judge's points if the reviewer's copy is still untouched."""
        self.finish_opening()
        if answer_id != self.answer_id:
            self.notify(Changes(rows=(answer_id,), judged=True))
            return
        touched = any(step.answer_id == answer_id for step in self._undo + self._redo)
        adopted = None if touched else self.service.adopt_judge(answer_id)
        self._take(adopted or self.service.state(answer_id), row=0 if adopted else self.row)
        self.notify(Changes(answer=True, point=True, rows=(answer_id,), judged=True))

    def run_ended(self) -> None:
        self.notify(Changes(queue=True))

    @property
    def judge_rater(self) -> int | None:
        """The id of the rater that speaks for the project, as the service last read it."""
        return self.judge.rater

    def judge_role(self) -> str:
        """What the rater that speaks for the project is, in a header's word: "Claim checker", "Jury" or "Judge"."""
        return role_name(self.service.judge_rater_name)

    def doubtful_raters(self) -> dict[str, str]:
        """The automatic raters that speak as no finding, with their standing in words (JudgeBeside)."""
        return self.judge.doubtful()

    def choose_rater(self, name: str | None) -> bool:
        """The lead chooses the rater that speaks for the project (None: the best measured; audited):
        the judge column, the queue's verdicts and the standing beside the answer follow it."""
        self.finish_opening()
        try:
            speaking = raters.set_default(self.project.sessions, name, self.reviewer)
        except AssayError as exc:
            self.say(str(exc))
            return False
        self.service.refresh_judge_rater()  # the choice was a save: standings read before it are stale
        if self.state is not None:  # its judge column is the new rater's
            self._take(self.service.state(self.state.answer.id), row=self.row)
        said = f"{rater_name(speaking.name)} speaks for the project." if speaking else "No rater speaks yet."
        self.notify(Changes(answer=self.state is not None, queue=True, message=said))
        return True

    def decide(self, answer_id: str, number: int, tag: Tag | None, reason: str | None, adjudicator: str) -> Case:
        """An adjudicator's decision on a disputed point (raises AssayError when refused); the judge's
        standing reads the consensus, so the open answer shows it again."""
        case = adjudication.decide(self.project, answer_id, number, tag, reason, adjudicator)
        if self.state is not None:
            self.standing = self.judge.standing(self.state.answer.id)
            self.notify(Changes(answer=True))
        return case

    def restored(self) -> None:
        """The project file was replaced by a backup: a fresh service (and undo history), nothing open."""
        self.service.close()  # the old one would go on counting every commit
        self.service = ReviewService(self.project, self.reviewer)
        self._project_replaced()
        self.service.on_step = self._record
        self.judge = JudgeBeside(self.service, self.judge.standing_of_rater)
        self._undo.clear()
        self._redo.clear()
        self.state, self.prepared, self.previewing, self.row = None, None, False, 0
        self.passages, self.reading, self.citations, self.standing = [], None, [], None
        self.notify(Changes(project=True, queue=True))

    # ------------------------------------------------------------------ plumbing

    def _act(
        self, call: Callable[[], ReviewState], *, row: int | None = None, message: str = "", advance: int = 0
    ) -> bool:
        """Call the service, take the state it returns, and tell the views; a refusal is a sentence."""
        self.finish_opening()
        try:
            state = call()
        except AssayError as exc:
            self.say(str(exc))
            return False
        before = self.row
        wanted = self.row if row is None else (len(state.points) - 1 if row < 0 else row)
        self._take(state, row=wanted)
        self.notify(
            Changes(answer=True, point=self.row != before or row is not None, rows=(state.answer.id,), message=message)
        )
        if advance:
            self.notify(Changes(advance=advance))
        return True


def _signed_sentence(signed: SignOff) -> str:
    return (
        f"Signed off by {signed.reviewer} on {signed.signed_at:%Y-%m-%d %H:%M} UTC (sha256 {signed.digest[:16]}…): "
        "Review ▸ Reopen signed review… to change it."
    )


__all__ = ["Changes", "Prepared", "ReviewSession"]
