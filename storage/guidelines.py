"""The project's review guidelines, versioned: setting new text adds a version (number, text, author,
time, SHA-256) and an audit entry; no version is ever changed. Each function takes a session and never
commits it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from storage.audit_chain import append_audit
from storage.schema import GuidelineVersionRow


@dataclass(frozen=True)
class Guidelines:
    """One version of the review guidelines."""

    version: int
    text: str
    sha256: str
    author: str
    created_at: datetime


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _of(row: GuidelineVersionRow) -> Guidelines:
    return Guidelines(row.version, row.text, row.sha256, row.author, row.created_at)


def current_guidelines(session: Session) -> Guidelines | None:
    """The newest version, or None when the project has no guidelines."""
    row = session.scalar(select(GuidelineVersionRow).order_by(GuidelineVersionRow.version.desc()).limit(1))
    return None if row is None else _of(row)


def guideline_version(session: Session, version: int) -> Guidelines | None:
    row = session.scalar(select(GuidelineVersionRow).where(GuidelineVersionRow.version == version))
    return None if row is None else _of(row)


def guideline_versions(session: Session) -> list[Guidelines]:
    return [_of(row) for row in session.scalars(select(GuidelineVersionRow).order_by(GuidelineVersionRow.version))]


def set_guidelines(session: Session, text: str, author: str, version: int | None = None) -> tuple[Guidelines, bool]:
    """Make `text` the current guidelines: a new version unless it is the current text already
    (False then: nothing added). `version`: the number to give it (a bundle brings its own)."""
    current = current_guidelines(session)
    digest = text_sha256(text)
    if current is not None and current.sha256 == digest and version is None:
        return current, False
    newest = session.scalar(select(func.max(GuidelineVersionRow.version))) or 0
    number = version if version is not None else newest + 1
    row = GuidelineVersionRow(version=number, text=text, sha256=digest, author=author)
    session.add(row)
    session.flush()
    append_audit(
        session,
        author,
        "guidelines.set",
        "guidelines",
        str(number),
        {"version": number, "sha256": digest, "previous": current.version if current else None},
    )
    return _of(row), True


def guideline_problems(session: Session) -> list[str]:
    """Each version whose text no longer matches its SHA-256 (edited with its hash left as it was), or
    whose SHA-256 is not the one the audit log recorded when it was set (edited with its hash)."""
    from storage.schema import AuditRow

    audited: dict[str, str] = {}
    for entity_id, payload in session.execute(
        select(AuditRow.entity_id, AuditRow.payload).where(AuditRow.action == "guidelines.set")
    ):
        audited[str(entity_id)] = str((payload or {}).get("sha256"))
    problems = []
    for row in guideline_versions(session):
        name = f"guideline version {row.version}"
        if text_sha256(row.text) != row.sha256:
            problems.append(f"{name}: its text no longer matches its SHA-256 (the text was edited)")
        elif str(row.version) not in audited:
            problems.append(f"{name}: no audit entry records it (it was added behind Assay's back)")
        elif audited[str(row.version)] != row.sha256:
            problems.append(f"{name}: its SHA-256 is not the one the audit log recorded (the text was edited)")
    return problems
