"""Values: an amount, date, period or number in a claim must be among the same kind of values in the
passages it is about. Reading values from text is models/verifier/values.py's work."""

from __future__ import annotations

from models.verifier.checks import Outcome, Reason
from models.verifier.document import Document
from models.verifier.values import Value, read_values


def _agrees(value: Value, other: Value) -> bool:
    if value.kind != other.kind:
        return False
    if value.amount == other.amount:
        return True
    if value.kind == "date":  # "December 31" agrees with "December 31, 2014"
        a, b = sorted((value.amount, other.amount), key=len)
        return (a.startswith("--") and b.endswith(a[1:])) or (len(a) == 7 and b.startswith(a))
    return False


def _comparable(value: Value, other: Value) -> bool:
    if value.kind != other.kind:
        return False
    if value.kind != "number":
        return True
    mine, theirs = value.context.split("|"), other.context.split("|")
    return any(a and a == b for a, b in zip(mine, theirs, strict=True))


def check_values(
    claim: str, passages: list[str], document: Document, out: Outcome, decided: frozenset[str] = frozenset()
) -> set[str]:
    """A value in the claim must be among the same kind of values in the matched passages. Returns the
    values it decided (agreed or flagged), by their surface; those in `decided` are left alone."""
    reading = read_values(claim)
    done: set[str] = set()
    values = [v for v in reading.values if v.surface not in decided]
    if not values:
        return done
    theirs: list[tuple[str, Value, tuple[str, ...]]] = []
    for pid in passages:
        r = document.values(pid)
        theirs += [(pid, v, tuple(r.normalisations)) for v in r.values]
    agreeing = [v for v in values if any(_agrees(v, t) for _, t, _ in theirs)]
    for value in values:
        if value in agreeing:
            out.checked.append(f"{value.surface} agrees with the document")
            done.add(value.surface)
            continue
        rivals = [(pid, v, notes) for pid, v, notes in theirs if _comparable(value, v)]
        if not rivals and agreeing and value.kind == "number":
            # The claim's other values are this passage's (a table row): its numbers are the rivals.
            rivals = [(pid, v, notes) for pid, v, notes in theirs if v.kind == "number"]
        if not rivals:
            continue  # nothing to compare it with: unchecked, never called verified
        pid = rivals[0][0]
        notes = tuple(dict.fromkeys(reading.normalisations + [n for _, _, ns in rivals for n in ns]))
        shown = ", ".join(dict.fromkeys(v.surface for _, v, _ in rivals))
        out.flags.append(Reason("value_mismatch", value.surface, shown, pid, notes))
        done.add(value.surface)
    return done
