"""Two generators' answers to one question, side by side, for one reviewer: the answers in columns
with their data points aligned (models/point_alignment.py), tagging in either column through the
review service, and a pairwise preference (left better, right better, or a tie, with a reason).

Blind comparison (a project setting): the columns are named "Answer A" and "Answer B", never by their
generator, and which answer is on the left is drawn per question and reviewer from the project's
comparison seed (made once, when blind comparison is first turned on, and audited); each preference
records the order shown and that seed, so the draw can be checked afterwards.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

from app.errors import AssayError, InvalidInput
from app.project import Project
from app.review.service import ReviewService, ReviewState
from models.point_alignment import AlignedRow, align, content
from storage import audit, reviews
from storage.comparison import SharedQuestion, shared_questions
from storage.preferences import SEED_LIMIT, Preference, preference_problem, preferences, record_preference

BLIND_SETTING = "comparison.blind"
SEED_SETTING = "comparison.seed"
CHOICES = ("left", "right", "tie")
__all__ = ["CHOICES", "Column", "PairwiseReview", "SharedQuestion", "SideBySide", "set_blind"]


@dataclass(frozen=True)
class Column:
    generator: str
    label: str  # what the reviewer sees above it: the generator, or "Answer A" when blind
    state: ReviewState  # the reviewer's own review of the answer: points, their tags, the judge's


@dataclass(frozen=True, kw_only=True)
class SideBySide:
    """What the side-by-side view shows for one question and one pair of generators."""

    question: SharedQuestion
    left: Column
    right: Column
    rows: list[AlignedRow]  # indexes into left.state.points and right.state.points
    blind: bool
    seed: int | None  # the seed that put `left` on the left, when blind
    preference: Preference | None  # this reviewer's, on this pair
    pairs: list[tuple[str, str]]  # the pairs of generators that answered the question

    @property
    def answer_ids(self) -> tuple[str, str]:
        return self.left.state.answer.id, self.right.state.answer.id


def set_blind(project: Project, blind: bool, actor: str) -> int | None:
    """Turn blind comparison on or off (audited); the seed is made the first time it is turned on.
    Returns the seed."""
    with project.sessions.begin() as session:
        seed = reviews.setting(session, SEED_SETTING)
        if blind and seed is None:
            seed = secrets.randbelow(SEED_LIMIT)
            reviews.set_setting(session, SEED_SETTING, seed)
        reviews.set_setting(session, BLIND_SETTING, blind)
        audit.append_audit(session, actor, "project.comparison_blind", "project", "-", {"blind": blind, "seed": seed})
    return seed


class PairwiseReview:
    """One reviewer comparing answers; tags go through their ReviewService, so undo and the audit
    log are the review's own."""

    def __init__(self, service: ReviewService) -> None:
        self.service = service
        self.project = service.project

    # ------------------------------------------------------------------ settings

    @property
    def blind(self) -> bool:
        with self.project.sessions() as session:
            return bool(reviews.setting(session, BLIND_SETTING, False))

    def set_blind(self, blind: bool) -> None:
        set_blind(self.project, blind, self.service.reviewer)

    # ------------------------------------------------------------------ questions

    def questions(self) -> list[SharedQuestion]:
        """The questions two generators or more answered, in dataset order."""
        with self.project.sessions() as session:
            return shared_questions(session)

    def question_of(self, answer_id: str) -> SharedQuestion | None:
        return next((q for q in self.questions() if answer_id in q.answers.values()), None)

    def open(self, question: SharedQuestion, pair: tuple[str, str] | None = None) -> SideBySide:
        """The question's two answers side by side (the pair's, else the first two generators by
        name), each opened as the reviewer's own review."""
        names = sorted(question.answers)
        pairs = [(x, y) for i, x in enumerate(names) for y in names[i + 1 :]]
        first, second = pair or pairs[0]
        if first not in question.answers or second not in question.answers or first == second:
            raise AssayError(f"this question was not answered by both {first!r} and {second!r}")
        blind, seed = self._blind_and_seed()
        if blind:
            draw = random.Random(f"{seed}:{question.question_id}:{self.service.reviewer}")
            if draw.random() < 0.5:
                first, second = second, first
        states = [self.service.open(question.answers[g]) for g in (first, second)]
        labels = ("Answer A", "Answer B") if blind else (first, second)
        left, right = (Column(g, label, s) for g, label, s in zip((first, second), labels, states, strict=True))
        return SideBySide(
            question=question,
            left=left,
            right=right,
            rows=self._rows(left.state, right.state),
            blind=blind,
            seed=seed if blind else None,
            preference=self._preference(left.state.answer.id, right.state.answer.id),
            pairs=pairs,
        )

    def refresh(self, view: SideBySide) -> SideBySide:
        """The same view with what is stored now (after a tag or a preference)."""
        left, right = (
            Column(c.generator, c.label, self.service.state(c.state.answer.id)) for c in (view.left, view.right)
        )
        return SideBySide(
            question=view.question,
            left=left,
            right=right,
            rows=self._rows(left.state, right.state),
            blind=view.blind,
            seed=view.seed,
            preference=self._preference(*view.answer_ids),
            pairs=view.pairs,
        )

    # ------------------------------------------------------------------ the preference

    def prefer(self, view: SideBySide, choice: str, reason: str | None = None) -> SideBySide:
        """Record which answer the reviewer prefers: `left`, `right` or `tie` (one short transaction)."""
        if choice not in CHOICES:
            raise InvalidInput(repr(choice), f"a preference is one of {', '.join(CHOICES)}")
        first, second = view.answer_ids
        value = {
            "answers": [first, second],
            "preferred": {"left": first, "right": second, "tie": None}[choice],
            "reason": reason,
            "blind": view.blind,
            "seed": view.seed,
        }
        problem = preference_problem(value)
        if problem:
            raise InvalidInput("preference", problem)
        with self.project.sessions.begin() as session:
            record_preference(session, self.service.rater_id, self.service.reviewer, value)
        return self.refresh(view)

    # ------------------------------------------------------------------ parts

    def _blind_and_seed(self) -> tuple[bool, int | None]:
        with self.project.sessions() as session:
            return bool(reviews.setting(session, BLIND_SETTING, False)), reviews.setting(session, SEED_SETTING)

    def _preference(self, first: str, second: str) -> Preference | None:
        with self.project.sessions() as session:
            found = preferences(session, self.service.reviewer, [first, second])
        return found[0] if found else None

    @staticmethod
    def _rows(left: ReviewState, right: ReviewState) -> list[AlignedRow]:
        return align(
            [content(p.point.text, p.citations) for p in left.points],
            [content(p.point.text, p.citations) for p in right.points],
        )
