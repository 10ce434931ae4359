"""A reviewer's work on answers: confirm or override tags, edit the data points, add what is missing.

Every action is its own transaction, saved at once (a killed process loses nothing saved), and is
undoable: an action reports the reviewer's points before and after as a Step (to `on_step`: the
review session, app/review/session.py, keeps the undo history), and `restore` puts them back exactly.
A reviewer works on their own copy of the judge's data points (or of the deterministic segmentation
when no judge ran), so each reviewer's labels are their own; a copy and the judge's point say the
same thing, so they are one data point (storage/points.py), whichever was recorded first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

from sqlalchemy import event
from sqlalchemy.orm import Session

from app import keys
from app import raters as project_raters
from app.errors import AssayError
from app.figures.scores import Scores
from app.project import Project
from app.review import edits, qualification, roles
from app.review.adjudication import refuse_consensus
from app.review.checker_verdicts import with_checker_verdicts
from app.review.starting_points import cited_passages, segmented, starting_points
from models.segmentation import strip_span
from models.vocabulary import RaterKind, ReviewStatus, Tag
from storage import answers as stored
from storage import audit, documents, reviews, signoffs
from storage.answers import AnswerDetail
from storage.documents import Passage
from storage.points import RaterTag
from storage.reviews import JudgeCounts, PointSnapshot, QueueRow, ReviewPoint
from storage.rubric_results import RubricRecord, rubric_results
from storage.signoffs import SignOff

ASSISTED, BLIND = "assisted", "blind"
ANY = ""  # the answer of a commit that may have changed any answer
_ANSWER = "assay.answer"  # a session's info key: the one answer its transaction changes
_LABELS = "assay.labels"  # a session's info key: it changed a submitted review (the project's human labels)
__all__ = [
    "ASSISTED",
    "BLIND",
    "JudgeCounts",
    "QueueRow",
    "RaterTag",
    "ReviewPoint",
    "ReviewService",
    "ReviewState",
    "Step",
]


@dataclass(frozen=True, kw_only=True)
class ReviewState:
    """What the review pane shows for one answer."""

    answer: AnswerDetail
    points: list[ReviewPoint]
    status: ReviewStatus
    holistic_correctness: int | None
    holistic_relevance: int | None
    comment: str | None
    active_seconds: float
    judge_visible: bool  # blind mode hides the judge until the reviewer submits
    rubric_results: tuple[RubricRecord, ...] = ()  # answer-level verdicts of the other rubrics
    signoff: SignOff | None = None  # this reviewer's sign-off in force: the review is locked until reopened

    @property
    def scores(self) -> Scores:
        return Scores.of(p.point.tag for p in self.points)


@dataclass(frozen=True, kw_only=True)
class Step:
    """One change to a reviewer's points: what undo puts back, and what redo puts again."""

    answer_id: str
    before: list[PointSnapshot]
    after: list[PointSnapshot]
    name: str


class ReviewService:
    """One reviewer's actions on a project, each a transaction; every change of points goes to `on_step`."""

    def __init__(self, project: Project, reviewer: str) -> None:
        reviewer = roles.database_login(project) or reviewer.strip()  # on a server: the login, not a typed name
        if not reviewer:
            raise AssayError("a reviewer needs a name")
        refuse_consensus(reviewer, "reviewing or signing off")  # the consensus is adjudication's alone
        self.project = project
        self.reviewer = reviewer
        with project.sessions.begin() as session:
            rater = project_raters.human_named(session, reviewer, create_by=reviewer)
        self.rater_id = rater.id
        # Every commit to the project in this process (any window, worker or thread), by the answer it
        # changed; ANY: it may have changed any answer. A state read before its count moved may be stale.
        self._commits: Counter[str] = Counter()
        self._label_saves = 0  # of those, the commits that changed a submitted review (human labels)
        self._standings: list[project_raters.RaterStanding] = []
        self._standings_read_at: tuple[int, int] | None = None
        event.listen(project.sessions, "after_commit", self._on_commit)
        self.judge_rater: int | None = None  # the rater whose tags the reviewer sees beside theirs
        self.judge_rater_name: str | None = None  # and its name ("verifier" for the claim checker)
        self.refresh_judge_rater()
        self.on_step: Callable[[Step], None] = lambda _step: None

    def close(self) -> None:
        """Stop counting the project's commits: a service replaced (after a restore) or done with."""
        if event.contains(self.project.sessions, "after_commit", self._on_commit):
            event.remove(self.project.sessions, "after_commit", self._on_commit)

    def _on_commit(self, session) -> None:
        self._commits[session.info.get(_ANSWER, ANY)] += 1
        self._label_saves += bool(session.info.get(_LABELS))

    def changes(self, answer_id: str) -> tuple[int, int]:
        """Moves whenever a commit in this process may have changed what opening the answer shows."""
        return self._commits[ANY], self._commits[answer_id]

    @property
    def saves(self) -> int:
        """Every commit to the project in this process so far: what was read before it moved may be stale."""
        return self._commits.total()

    @property
    def label_changes(self) -> tuple[int, int]:
        """Moves whenever a commit in this process may have changed how the raters stand on human labels:
        a save of no one answer (a judge run, a stress test, imported labels, an adjudication, the lead's
        choice of rater) or a change to a submitted review; opening an answer, tagging one in review, or
        the time spent on it does not."""
        return self._commits[ANY], self._label_saves

    @contextmanager
    def _saving(self, answer_id: str, *, labels: bool = True) -> Iterator[Session]:
        """A transaction that changes this answer only (what other answers show stays as it was);
        `labels` False: it changes no tag, comment or status the human labels are read from."""
        with self.project.sessions.begin() as session:
            session.info[_ANSWER] = answer_id
            yield session
            if labels and reviews.review(session, answer_id, self.rater_id).status is ReviewStatus.SUBMITTED:
                session.info[_LABELS] = True

    def rater_standings(self) -> list[project_raters.RaterStanding]:
        """Every automatic rater's standing (app/raters.py), read again only after `label_changes` moved:
        it weighs the project's human labels, 0.1 s and more at 100,000 answers."""
        if self._standings_read_at != self.label_changes:
            self._standings_read_at = self.label_changes
            self._standings = project_raters.standings(self.project.sessions)
        return self._standings

    # ------------------------------------------------------------------ settings and queue

    @property
    def mode(self) -> str:
        with self.project.sessions() as session:
            return reviews.setting(session, "review_mode", ASSISTED)

    def set_mode(self, mode: str) -> None:
        if mode not in (ASSISTED, BLIND):
            raise AssayError(f"review mode is {ASSISTED} or {BLIND}, not {mode!r}")
        with self.project.sessions.begin() as session:
            reviews.set_setting(session, "review_mode", mode)
            audit.append_audit(session, self.reviewer, "project.review_mode", "project", "-", {"mode": mode})

    def queue(self) -> list[QueueRow]:
        if self.label_changes != self._rater_read_at:  # a save since it was read: a run may speak now
            self.refresh_judge_rater()
        with self.project.sessions() as session:
            rows = reviews.queue(session, self.rater_id)
        return qualification.mixed_queue(self.project, self.reviewer, rows)  # gold mixed in, when set

    def queue_row(self, answer_id: str) -> QueueRow:
        with self.project.sessions() as session:
            row = reviews.queue(session, self.rater_id, answer_id)[0]
        return qualification.queue_row(self.project, row)  # a gold answer stays unannounced

    def refresh_judge_rater(self) -> None:
        """Read again which rater speaks for the project (app/raters.py): after a judge run, imported
        labels or a submitted review its standing may have changed."""
        self._standings_read_at = None  # read again, whatever moved
        every = self.rater_standings()
        with self.project.sessions() as session:
            found = project_raters.speaker(session, every)
        self.judge_rater = None if found is None else found.rater_id
        self.judge_rater_name = None if found is None else found.name
        self._rater_read_at = self.label_changes

    def judge_counts(self, answer_ids: Sequence[str] | None = None) -> dict[str, JudgeCounts]:
        """The default rater's tag counts of these answers (of every answer if None)."""
        if self.judge_rater is None and self.label_changes != self._rater_read_at:  # one may have judged now
            self.refresh_judge_rater()
        with self.project.sessions() as session:
            return reviews.judge_counts(session, self.judge_rater, answer_ids)

    # ------------------------------------------------------------------ reading

    def open(self, answer_id: str) -> ReviewState:
        """The answer as this reviewer sees it; the first time, their copy of the data points is made."""
        answer = self._answer(answer_id)
        with self._saving(answer_id, labels=False) as session:
            self._start(session, answer)
            return self._state(session, answer)

    def preview(self, answer_id: str) -> ReviewState:
        """What `open` will show, with nothing saved: open's writes are made in a transaction that is
        rolled back. Its point ids may differ from the ones open saves: show it, never act on it."""
        answer = self._answer(answer_id)
        with self.project.sessions() as session:
            self._start(session, answer)
            state = self._state(session, answer)
            session.rollback()
        return state

    def _start(self, session, answer: AnswerDetail) -> None:
        """The reviewer's copy of the points, made the first time. Reading an answer does not start
        its review: the first change the reviewer saves does (`_started`)."""
        if not reviews.has_points(session, answer.id, self.rater_id):
            reviews.restore(session, answer.id, self.rater_id, starting_points(session, answer, self.judge_rater))

    def _started(self, session, answer_id: str) -> None:
        """The answer is in review from the reviewer's first change to it (a tag, a point, a comment)."""
        if reviews.review(session, answer_id, self.rater_id).status is ReviewStatus.UNREVIEWED:
            reviews.update_review(session, answer_id, self.rater_id, status=ReviewStatus.IN_REVIEW)

    def state(self, answer_id: str) -> ReviewState:
        answer = self.project.answer(answer_id)
        assert answer is not None
        with self.project.sessions() as session:
            return self._state(session, answer)

    def _state(self, session, answer: AnswerDetail) -> ReviewState:
        answer_id = answer.id
        review = reviews.review(session, answer_id, self.rater_id)
        points = reviews.review_points(session, answer_id, self.rater_id, self.judge_rater)
        points = with_checker_verdicts(session, answer_id, points)  # "needs review" where it left no tag
        visible = reviews.setting(session, "review_mode", ASSISTED) == ASSISTED
        rubric = tuple(rubric_results(session, answer_id=answer_id))
        visible = visible or review.status is ReviewStatus.SUBMITTED
        if review.status is not ReviewStatus.SUBMITTED and qualification.unannounced(session, answer_id):
            points = [replace(p, others=tuple(t for t in p.others if t.kind is not RaterKind.HUMAN)) for p in points]
        if not visible:
            points = [
                replace(p, judge_tag=None, judge_confidence=None, judge_rationale=None, others=()) for p in points
            ]
            rubric = ()
        return ReviewState(
            answer=answer,
            points=points,
            status=review.status,
            holistic_correctness=review.holistic_correctness,
            holistic_relevance=review.holistic_relevance,
            comment=review.comment,
            active_seconds=review.active_seconds,
            judge_visible=visible,
            rubric_results=rubric,
            signoff=signoffs.standing_signoff(session, answer_id, self.rater_id),
        )

    def passages(self, answer: AnswerDetail) -> list[Passage]:
        return self.project.passages(answer.document_id)

    def adopt_judge(self, answer_id: str) -> ReviewState | None:
        """A judge has just judged an answer this reviewer opened before it: give them the judge's
        points (with its tags beside them) if their copy is still the untouched segmentation.
        Their own work always wins: None when they tagged, edited or commented anything (and the
        session does not ask when it holds an undo step of the answer)."""
        answer = self._answer(answer_id)
        with self._saving(answer_id) as session:
            mine = reviews.snapshot(session, answer_id, self.rater_id)
            if reviews.reference_judge(session, answer_id, self.judge_rater) is None or not mine:
                return None
            if reviews.review(session, answer_id, self.rater_id).status is ReviewStatus.SUBMITTED:
                return None
            untouched = segmented(
                answer,
                documents.passages_of(session, answer.document_id),
                stored.segmentation(session, answer_id, keep=False),
            )
            if [replace(p, id=0, ordinal=0, key=None) for p in mine] != [replace(p, ordinal=0) for p in untouched]:
                return None
            reviews.restore(session, answer_id, self.rater_id, starting_points(session, answer, self.judge_rater))
        return self.state(answer_id)

    # ------------------------------------------------------------------ actions on points

    def set_tag(self, answer_id: str, point_id: int, tag: Tag | None) -> ReviewState:
        return self._change(answer_id, "tag", lambda ps: [replace(p, tag=tag) if p.id == point_id else p for p in ps])

    def accept_judge(self, answer_id: str, point_id: int) -> ReviewState:
        """Take the judge's tag as one's own (Enter)."""
        point = self._point(answer_id, point_id)
        if point.judge_tag is None:
            raise AssayError("the judge did not tag this data point: choose a tag with 1–4")
        return self.set_tag(answer_id, point_id, point.judge_tag)

    def comment_point(self, answer_id: str, point_id: int, comment: str) -> ReviewState:
        text = comment.strip() or None
        return self._change(
            answer_id, "comment", lambda ps: [replace(p, comment=text) if p.id == point_id else p for p in ps]
        )

    def edit_text(self, answer_id: str, point_id: int, text: str) -> ReviewState:
        """New words for a point; a point of the answer keeps a span only if the words are the answer's."""
        text = text.strip()
        if not text:
            raise AssayError("a data point cannot be empty: delete it instead")
        answer = self._answer(answer_id)
        return self._change(answer_id, "edit", lambda ps: edits.edited(ps, point_id, text, answer.text))

    def split(self, answer_id: str, point_id: int, at: int) -> ReviewState:
        """Cut a point in two at a character offset of its text; both halves keep the tag."""
        return self._change(answer_id, "split", lambda ps: edits.split(ps, point_id, at))

    def merge_with_next(self, answer_id: str, point_id: int) -> ReviewState:
        answer = self._answer(answer_id)
        return self._change(answer_id, "merge", lambda ps: edits.merged(ps, point_id, answer.text))

    def delete(self, answer_id: str, point_id: int) -> ReviewState:
        return self._change(answer_id, "delete", lambda ps: [p for p in ps if p.id != point_id])

    def add_point(self, answer_id: str, start: int, end: int) -> ReviewState:
        """Make a data point of answer text no point holds yet (text the reviewer selected in the answer);
        it is read with the lead-in the segmentation finds for that text."""
        answer = self._answer(answer_id)
        start, end = strip_span(answer.text, max(start, 0), min(end, len(answer.text)))
        if start >= end:
            raise AssayError("select the answer text to make a data point of")
        text = answer.text[start:end]
        with self.project.sessions() as session:  # stored when the answer was opened
            segments = stored.segmentation(session, answer_id, keep=False)
        context = next(
            (
                (s.context_start, s.context_end)
                for s in segments
                if s.start < end and start < s.end and s.context_end is not None and s.context_end <= start
            ),
            (None, None),
        )
        point = edits.new_point(
            text=text,
            span_start=start,
            span_end=end,
            evidence_ids=cited_passages(text, self.passages(answer)),  # the answer's citations, not the reviewer's
            context_start=context[0],
            context_end=context[1],
        )

        return self._change(answer_id, "add", lambda ps: edits.added(ps, point))

    def add_missing(self, answer_id: str, text: str, citation_ids: list[str]) -> ReviewState:
        """A critical omission, usually text selected in the document; its passages are cited."""
        text = " ".join(text.split())
        if not text:
            raise AssayError("select the text that the answer leaves out, then add it as missing")
        answer = self._answer(answer_id)
        ids = {p.citation_id: p.id for p in self.passages(answer)}
        cited = tuple(sorted(ids[c] for c in citation_ids if c in ids))
        point = edits.new_point(text=text, tag=Tag.MISSING, passage_ids=cited)
        return self._change(answer_id, "missing", lambda ps: [*ps, point])

    # ------------------------------------------------------------------ the answer as a whole

    def comment_answer(self, answer_id: str, comment: str) -> ReviewState:
        return self._update_review(answer_id, "review.comment", comment=comment.strip() or None)

    def rate(self, answer_id: str, correctness: int | None, relevance: int | None) -> ReviewState:
        """LeMAJ Table 8's holistic ratings, 1 (completely incorrect / irrelevant) to 5 (completely)."""
        for value in (correctness, relevance):
            if value is not None and not 1 <= value <= 5:
                raise AssayError("holistic ratings go from 1 to 5")
        return self._update_review(
            answer_id, "review.rated", holistic_correctness=correctness, holistic_relevance=relevance
        )

    def submit(self, answer_id: str) -> ReviewState:
        state = self.state(answer_id)
        untagged = sum(1 for p in state.points if p.point.tag is None)
        if untagged:
            raise AssayError(f"{untagged} data point(s) still have no tag: tag them before submitting")
        guidelines = self.project.guidelines()  # the version the review was made under
        return self._update_review(
            answer_id,
            "review.submitted",
            status=ReviewStatus.SUBMITTED,
            guideline_version=guidelines.version if guidelines else None,
        )

    # ------------------------------------------------------------------ sign-off

    def sign_off(self, answer_id: str, before_commit: Callable[[Session], None] | None = None) -> SignOff:
        """Sign this reviewer's submitted review of the answer: tags, comments, answer, document and
        guideline version, bound by a digest in the audit log. The review is locked until reopened.
        `before_commit` runs in the sign-off's transaction once it is signed (`signoff --export` writes
        the certificate there): what it raises undoes the sign-off."""
        self._answer(answer_id)
        with self._saving(answer_id) as session:
            standing = signoffs.standing_signoff(session, answer_id, self.rater_id)
            if standing is not None:
                raise AssayError(f"{self.reviewer} already signed off answer {answer_id} on {_when(standing)}")
            if reviews.review(session, answer_id, self.rater_id).status is not ReviewStatus.SUBMITTED:
                raise AssayError(f"{self.reviewer} has not submitted a review of answer {answer_id}: submit it first")
            signer, created = keys.signing_key(session, self.reviewer)  # made on the first sign-off
            signed = signoffs.sign(session, answer_id, self.rater_id, self.reviewer, signer)
            head = audit.sign_head(session, signer)
            if before_commit is not None:
                before_commit(session)
        keys.remember_head(self.project.url, head)
        return replace(signed, key_created=created)

    def reopen(self, answer_id: str, reason: str) -> SignOff:
        """Withdraw this reviewer's sign-off of the answer, for a reason the audit log keeps, so that
        the review can be changed (and signed again)."""
        reason = " ".join(reason.split())
        if not reason:
            raise AssayError("say why the signed review is reopened: the reason is kept in the audit log")
        self._answer(answer_id)
        with self._saving(answer_id) as session:
            withdrawn = signoffs.reopen(session, answer_id, self.rater_id, self.reviewer, reason)
            if withdrawn is None:  # refused inside the transaction: no key registered, nothing written
                raise AssayError(f"{self.reviewer} has no sign-off of answer {answer_id} to reopen")
            signer = keys.held_signer(session, self.reviewer)
            head = audit.sign_head(session, signer) if signer is not None else None
        keys.remember_head(self.project.url, head)
        return withdrawn

    def _refuse_if_signed(self, session, answer_id: str) -> None:
        standing = signoffs.standing_signoff(session, answer_id, self.rater_id)
        if standing is not None:
            raise AssayError(
                f"{self.reviewer} signed off answer {answer_id} on {_when(standing)}: reopen it "
                f"(Review ▸ Reopen signed review…, or assay reopen) before changing the review"
            )

    def add_active_time(self, answer_id: str, seconds: float) -> None:
        """Time spent actively reviewing (the window counts only while the reviewer is at work)."""
        if seconds <= 0:
            return
        with self._saving(answer_id, labels=False) as session:
            current = reviews.review(session, answer_id, self.rater_id).active_seconds
            reviews.update_review(session, answer_id, self.rater_id, active_seconds=current + seconds)

    # ------------------------------------------------------------------ undo

    def restore(self, answer_id: str, points: list[PointSnapshot], action: str) -> ReviewState:
        """Put a reviewer's points back as a Step recorded them (undo, redo); refused once signed off."""
        with self._saving(answer_id) as session:
            self._refuse_if_signed(session, answer_id)
            reviews.restore(session, answer_id, self.rater_id, points)
            audit.append_audit(session, self.reviewer, f"review.{action.replace(' ', '_')}", "answer", answer_id, {})
        return self.state(answer_id)

    # ------------------------------------------------------------------ plumbing

    def _answer(self, answer_id: str) -> AnswerDetail:
        answer = self.project.answer(answer_id)
        if answer is None:
            raise AssayError(f"no answer with id {answer_id!r}")
        return answer

    def _point(self, answer_id: str, point_id: int) -> ReviewPoint:
        for point in self.state(answer_id).points:
            if point.point.id == point_id:
                return point
        raise AssayError("that data point no longer exists (it was merged, split or deleted)")

    def _change(self, answer_id: str, name: str, change) -> ReviewState:
        with self._saving(answer_id) as session:
            self._refuse_if_signed(session, answer_id)
            before = reviews.snapshot(session, answer_id, self.rater_id)
            reviews.restore(session, answer_id, self.rater_id, change(before))
            after = reviews.snapshot(session, answer_id, self.rater_id)
            self._started(session, answer_id)
            audit.append_audit(
                session,
                self.reviewer,
                f"review.{name}",
                "answer",
                answer_id,
                {"points": [(p.id, p.tag.value if p.tag else None) for p in after]},
            )
        self.on_step(Step(answer_id=answer_id, before=before, after=after, name=name))
        return self.state(answer_id)

    def _update_review(self, answer_id: str, action: str, **fields) -> ReviewState:
        with self._saving(answer_id) as session:
            self._refuse_if_signed(session, answer_id)
            self._started(session, answer_id)
            reviews.update_review(session, answer_id, self.rater_id, **fields)
            payload = {k: (v.value if isinstance(v, ReviewStatus) else v) for k, v in fields.items()}
            audit.append_audit(session, self.reviewer, action, "answer", answer_id, payload)
        return self.state(answer_id)


def _when(signoff: SignOff) -> str:
    return f"{signoff.signed_at:%Y-%m-%d %H:%M} UTC"
