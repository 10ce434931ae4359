"""Exceptions: a passage that makes an exception ("unless", "subject to") the claim does not mention.
Not a flag: the claim may still be right, so the verdict is needs_review."""

from __future__ import annotations

import re

_EXCEPTION = re.compile(r"\b(except|unless|notwithstanding|subject to|provided that|provided, however)\b", re.I)
# "unless sooner terminated", "unless either party gives notice of non-renewal": whether the term runs its course,
# never what date or length the contract gives it
_OF_THE_TERM = re.compile(r"\W+(?:\w+\W+){0,12}?(?:terminat|renew|extend|extension|expir)", re.I)


def exception_in(passage: str, claim: str, values_read: bool = False) -> str | None:
    """An exception the passage makes that the claim does not mention. For a claim whose values were each read
    from the statement of their duty (`values_read`), an exception about whether the term ends early or renews
    does not touch those values."""
    if _EXCEPTION.search(claim):
        return None
    for found in _EXCEPTION.finditer(passage):
        if not (values_read and _OF_THE_TERM.match(passage, found.end())):
            return found.group(0)
    return None


def hedges(statement: str) -> bool:
    """A claim's own exception ("…, unless renewed or terminated earlier"): it weakens what the claim says, so
    the claim holds wherever the rest of it does."""
    return _EXCEPTION.match(statement.strip()) is not None
