"""Exceptions: a passage that makes an exception ("unless", "subject to") the claim does not mention.
Not a flag: the claim may still be right, so the verdict is needs_review."""

from __future__ import annotations

import re

_EXCEPTION = re.compile(r"\b(except|unless|notwithstanding|subject to|provided that|provided, however)\b", re.I)


def exception_in(passage: str, claim: str) -> str | None:
    """An exception the passage makes that the claim does not mention."""
    found = _EXCEPTION.search(passage)
    if found and not _EXCEPTION.search(claim):
        return found.group(0)
    return None
