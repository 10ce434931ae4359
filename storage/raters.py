"""Raters: the judge runs, juries, reviewers, imports and the verifier whose tags a project holds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from models.vocabulary import RaterKind
from storage.audit import append_audit
from storage.schema import RaterRow


@dataclass(frozen=True, kw_only=True)
class Rater:
    id: int
    name: str
    kind: RaterKind
    config: dict[str, Any]


def rater_named(session: Session, name: str) -> Rater | None:
    row = session.scalar(select(RaterRow).where(RaterRow.name == name))
    return None if row is None else Rater(id=row.id, name=row.name, kind=RaterKind(row.kind), config=row.config or {})


def raters(session: Session) -> list[Rater]:
    rows = session.scalars(select(RaterRow).order_by(RaterRow.id))
    return [Rater(id=row.id, name=row.name, kind=RaterKind(row.kind), config=row.config or {}) for row in rows]


def add_rater(session: Session, name: str, kind: RaterKind, config: dict[str, Any], actor: str) -> Rater:
    row = RaterRow(name=name, kind=kind.value, config=config)
    session.add(row)
    session.flush()
    append_audit(session, actor, "rater.created", "rater", str(row.id), {"name": name, "kind": kind.value})
    return Rater(id=row.id, name=name, kind=kind, config=config)
