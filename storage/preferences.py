"""Pairwise preferences between two answers to one question: record one (audited), read them, and
write or read them in the portable form that exports, label imports and team bundles carry.

A preference is portable as `{"answers": [shown first, shown second], "preferred": an answer id or
null for a tie, "reason": text or null, "blind": bool, "seed": int or null}`: answer ids are the
dataset's ids, the same in every project made from the dataset."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, aliased

from storage.audit import append_audit
from storage.schema import AnswerRow, PairwisePreferenceRow, RaterRow

SEED_LIMIT = 2**31  # a seed fits the Integer column on every store


@dataclass(frozen=True, kw_only=True)
class Preference:
    """One reviewer's preference between two answers, as shown to them (left first)."""

    rater: str
    first: str  # the answer shown on the left
    second: str
    preferred: str | None  # None: a tie
    reason: str | None
    blind: bool
    seed: int | None

    def portable(self) -> dict[str, Any]:
        return {
            "answers": [self.first, self.second],
            "preferred": self.preferred,
            "reason": self.reason,
            "blind": self.blind,
            "seed": self.seed,
        }


def preference_problem(value: object) -> str | None:
    """What is wrong with a portable preference, checked before anything is written (None: nothing)."""
    if not isinstance(value, dict):
        return "'preference' must be an object"
    pair = value.get("answers")
    if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(a, str) and a for a in pair)):
        return "'answers' must be the two answer ids compared, the one shown first first"
    if pair[0] == pair[1]:
        return "'answers' names the same answer twice"
    if value.get("preferred") is not None and value["preferred"] not in pair:
        return "'preferred' must be one of the two answers, or null for a tie"
    if value.get("reason") is not None and not isinstance(value["reason"], str):
        return "'reason' must be text"
    if not isinstance(value.get("blind", False), bool):
        return "'blind' must be true or false"
    seed = value.get("seed")
    if seed is not None and (type(seed) is not int or not 0 <= seed < SEED_LIMIT):
        return f"'seed' must be a whole number from 0 to {SEED_LIMIT - 1}"
    return None


def record_preference(session: Session, rater_id: int, actor: str, value: dict[str, Any]) -> Preference:
    """Store a rater's preference between two answers (a portable value, checked by
    preference_problem), replacing the one they gave before on that pair, and audit it."""
    first, second = value["answers"]
    a, b = sorted((first, second))
    row = session.scalar(
        select(PairwisePreferenceRow).where(
            PairwisePreferenceRow.rater_id == rater_id,
            PairwisePreferenceRow.answer_a_id == a,
            PairwisePreferenceRow.answer_b_id == b,
        )
    )
    if row is None:
        row = PairwisePreferenceRow(rater_id=rater_id, answer_a_id=a, answer_b_id=b)
        session.add(row)
    row.preferred_id = value.get("preferred")
    reason = value.get("reason")
    row.reason = reason.strip() or None if isinstance(reason, str) else None
    row.shown_first_id = first
    row.blind = bool(value.get("blind", False))
    row.seed = value.get("seed")
    session.flush()
    rater = session.get(RaterRow, rater_id)
    assert rater is not None
    recorded = Preference(
        rater=rater.name,
        first=first,
        second=second,
        preferred=row.preferred_id,
        reason=row.reason,
        blind=row.blind,
        seed=row.seed,
    )
    append_audit(session, actor, "preference.recorded", "answer_pair", f"{a}|{b}", recorded.portable())
    return recorded


def preferences(
    session: Session, rater: str | None = None, answer_ids: Sequence[str] | None = None
) -> list[Preference]:
    """Every preference (or one rater's, or those on pairs among these answers), in the order given."""
    statement = (
        select(PairwisePreferenceRow, RaterRow.name)
        .join(RaterRow, RaterRow.id == PairwisePreferenceRow.rater_id)
        .order_by(PairwisePreferenceRow.id)
    )
    if rater is not None:
        statement = statement.where(RaterRow.name == rater)
    if answer_ids is not None:
        wanted = list(answer_ids)
        statement = statement.where(
            PairwisePreferenceRow.answer_a_id.in_(wanted), PairwisePreferenceRow.answer_b_id.in_(wanted)
        )
    found = []
    for row, name in session.execute(statement).all():
        second = row.answer_b_id if row.shown_first_id == row.answer_a_id else row.answer_a_id
        found.append(
            Preference(
                rater=name,
                first=row.shown_first_id,
                second=second,
                preferred=row.preferred_id,
                reason=row.reason,
                blind=row.blind,
                seed=row.seed,
            )
        )
    return found


def same_question(session: Session, first: str, second: str) -> bool:
    """Whether two answers answer one question (a preference compares nothing else)."""
    other = aliased(AnswerRow)
    return (
        session.scalar(
            select(AnswerRow.id)
            .join(other, other.question_id == AnswerRow.question_id)
            .where(AnswerRow.id == first, other.id == second)
        )
        is not None
    )
