"""A project's (or one matter's) claim checker fitted to its own reviews: the human tags it learns from,
where the fitted model is kept, and the audit entries that pin it.

The fitted model is a setting of the project, keyed by its scope (`model_check.learned.project`, or
`model_check.learned.matter.<id>`): under `model_check.`, a key that holds a matter's data, so that on a
server a walled login never reads it (migration 0020) and a matter copied out does not carry it. Its SHA-256
is in the audit entry that adopted it; a model whose text no longer has that SHA-256 is refused
(app/judging/learning.py). Its audit entries are about the matter (entity `matter`), so a walled login does
not read them either; the project's are about `project`/`checker`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from storage.audit_chain import append_audit
from storage.schema import AnswerRow, AuditRow, DataPointRow, DocumentRow, LabelRow, QuestionRow, RaterRow, SettingRow

FITTED = "checker.fitted"
ADOPTED = "checker.adopted"
RESET = "checker.reset"


@dataclass(frozen=True, kw_only=True)
class HumanTag:
    """A person's tag on a point of an answer, with the point's span and the answer's document."""

    answer_id: str
    document: str
    document_id: int
    start: int
    end: int
    tag: str
    rater: str


def key_of(matter_id: int | None) -> str:
    return "model_check.learned.project" if matter_id is None else f"model_check.learned.matter.{matter_id}"


def fit_key_of(matter_id: int | None) -> str:
    """Where the last fit's standing is kept, adopted or not."""
    return "model_check.fit.project" if matter_id is None else f"model_check.fit.matter.{matter_id}"


def subject_of(matter_id: int | None) -> tuple[str, str]:
    """The audit entity of a scope: its matter's (walled with it), or the project's checker."""
    return ("project", "checker") if matter_id is None else ("matter", str(matter_id))


def human_tags(session: Session, matter_id: int | None) -> list[HumanTag]:
    """Every person's tag on a point with a span, of the matter's answers (None: the unassigned answers)."""
    where = AnswerRow.matter_id.is_(None) if matter_id is None else AnswerRow.matter_id == matter_id
    rows = session.execute(
        select(
            DataPointRow.answer_id,
            DocumentRow.name,
            DocumentRow.id,
            DataPointRow.span_start,
            DataPointRow.span_end,
            LabelRow.tag,
            RaterRow.name,
        )
        .join(LabelRow, LabelRow.data_point_id == DataPointRow.id)
        .join(RaterRow, RaterRow.id == LabelRow.rater_id)
        .join(AnswerRow, AnswerRow.id == DataPointRow.answer_id)
        .join(QuestionRow, QuestionRow.id == AnswerRow.question_id)
        .join(DocumentRow, DocumentRow.id == QuestionRow.document_id)
        .where(RaterRow.kind == "human", DataPointRow.span_start.is_not(None), where)
        .order_by(DataPointRow.answer_id, DataPointRow.span_start, RaterRow.name)
    )
    out = []
    for a, d, i, s, e, t, r in rows:
        if s is not None and e is not None:
            out.append(HumanTag(answer_id=a, document=d, document_id=i, start=s, end=e, tag=t, rater=r))
    return out


def document_matter(session: Session, document_id: int) -> int | None:
    return session.scalar(select(DocumentRow.matter_id).where(DocumentRow.id == document_id))


def stored(session: Session, matter_id: int | None) -> dict[str, Any] | None:
    row = session.get(SettingRow, key_of(matter_id))
    return None if row is None or row.value is None else dict(row.value)


def last_fit(session: Session, matter_id: int | None) -> dict[str, Any] | None:
    row = session.get(SettingRow, fit_key_of(matter_id))
    return None if row is None or row.value is None else dict(row.value)


def pinned_sha256(session: Session, matter_id: int | None) -> str | None:
    """The SHA-256 the newest adoption of this scope pinned; None where none, or a reset came after it."""
    entity, entity_id = subject_of(matter_id)
    payload, action = session.execute(
        select(AuditRow.payload, AuditRow.action)
        .where(AuditRow.action.in_((ADOPTED, RESET)), AuditRow.entity == entity, AuditRow.entity_id == entity_id)
        .order_by(AuditRow.id.desc())
        .limit(1)
    ).first() or (None, None)
    if action != ADOPTED or not isinstance(payload, dict):
        return None
    sha = payload.get("sha256")
    return str(sha) if sha else None


def record_fit(session: Session, matter_id: int | None, actor: str, fit: dict[str, Any]) -> None:
    """The fit's standing kept for `assay checker show`, and its audit entry."""
    session.merge(SettingRow(key=fit_key_of(matter_id), value=fit))
    entity, entity_id = subject_of(matter_id)
    append_audit(session, actor, FITTED, entity, entity_id, fit)


def adopt(
    session: Session, matter_id: int | None, actor: str, model: str, sha256: str, summary: dict[str, Any]
) -> None:
    """The fitted model speaks for the scope from now on, pinned by its SHA-256 in the audit entry."""
    kept = {"sha256": sha256, "model": model, "held_out": summary.get("held_out")}
    session.merge(SettingRow(key=key_of(matter_id), value=kept))
    entity, entity_id = subject_of(matter_id)
    append_audit(session, actor, ADOPTED, entity, entity_id, {"sha256": sha256} | summary)


def reset(session: Session, matter_id: int | None, actor: str) -> str | None:
    """The shipped checker speaks again; the SHA-256 of the model that no longer does (None: none did)."""
    was = stored(session, matter_id)
    session.execute(delete(SettingRow).where(SettingRow.key == key_of(matter_id)))
    entity, entity_id = subject_of(matter_id)
    sha = None if was is None else str(was.get("sha256"))
    append_audit(session, actor, RESET, entity, entity_id, {"sha256": sha})
    return sha


def held_out_counts(session: Session) -> dict[str, int] | None:
    """The fitted checkers' own held-out figures on this project's tags, summed over the scopes this session
    sees where one speaks (None: none does): what the verifier's standing rests on then, never its verdicts
    on the points it was fitted to."""
    totals = {"with_errors": 0, "caught": 0, "correct": 0, "alarms": 0}
    like = SettingRow.key.like("model\\_check.learned.%", escape="\\")
    for (kept,) in session.execute(select(SettingRow.value).where(like)):
        refit = (kept or {}).get("held_out", {}).get("refit") if isinstance(kept, dict) else None
        if not isinstance(refit, dict):
            continue
        totals["with_errors"] += refit["wrong"]
        totals["caught"] += refit["flagged_wrong"]
        totals["correct"] += refit["points"] - refit["wrong"]
        totals["alarms"] += refit["flagged_right"]
    return totals if totals["with_errors"] and totals["correct"] else None
