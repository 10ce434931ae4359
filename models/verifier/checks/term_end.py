"""When a contract's term ends, where it says how long the term runs from when rather than the date itself:
"for twenty (20) years, commencing on January 1, 2016" ends on January 1, 2036 (or the day before, as
"through December 31, 2035" would say it); "continue for five (5) years following the Effective Date" ends
five years after the date the contract takes effect. Read, not guessed: dateutil's calendar arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

from models.verifier.values import Value

START = "start"  # the concept of the words that say when something begins (values.py folds them)
TERM_WORDS = frozenset({"term", START})


def term_ends(
    statements: Sequence[tuple[str, frozenset[str], Sequence[tuple[Value, frozenset[str]]]]], effective: date | None
) -> dict[date, tuple[str, str]]:
    """Every end date a statement of the term implies (each statement: its passage, its words, and its values
    with the words around each), with the length it was read from and its passage. `effective`: when the
    contract takes effect, for a term that runs from it."""
    ends: dict[date, tuple[str, str]] = {}
    for passage, words, values in statements:
        if not words & TERM_WORDS:
            continue
        lengths = [v for v, _ in values if v.kind == "duration:months"]
        starts = [iso(v.amount) for v, near in values if v.kind == "date" and START in near]
        begin = next((d for d in starts if d is not None), None) or effective
        if begin is None:
            continue
        for length in lengths:
            months = int(float(length.amount))
            end = begin + relativedelta(months=months)
            ends.setdefault(end, (length.surface, passage))
            ends.setdefault(end - timedelta(days=1), (length.surface, passage))
    return ends


def iso(amount: str) -> date | None:
    """A full ISO date of values.py ("2016-01-01"); None for a month or a day without a year."""
    try:
        return date.fromisoformat(amount)
    except ValueError:
        return None
