"""Where a reviewer was: the answer open when the window closed, reopened at the next launch. Kept in the
user's settings (never in the project: it is one person's place, not a fact of the review), keyed by a
digest of the project's address and the reviewer, so that a server's address with its password is not
written there."""

from __future__ import annotations

import hashlib

from app.settings import Settings

MOST = 50  # projects remembered; the oldest is forgotten first


def _key(project_url: str, reviewer: str) -> str:
    return hashlib.sha256(f"{project_url}\n{reviewer}".encode()).hexdigest()[:24]


def remembered_answer(settings: Settings, project_url: str, reviewer: str) -> str | None:
    """The answer this reviewer had open in this project when they last closed it; None if none."""
    return settings.last_answers.get(_key(project_url, reviewer))


def remember_answer(settings: Settings, project_url: str, reviewer: str, answer_id: str | None) -> None:
    """Keep the answer open now (the caller saves the settings)."""
    key = _key(project_url, reviewer)
    settings.last_answers.pop(key, None)
    if answer_id:
        settings.last_answers[key] = answer_id  # the newest last: a dict keeps its order
    while len(settings.last_answers) > MOST:
        settings.last_answers.pop(next(iter(settings.last_answers)))
