"""The checks: each compares one kind of thing a claim says with the passage it is about, records the
reasons for a flag (none when the claim passed) and what it compared and found to agree in an `Outcome`.

What lives where:
- `quotations`: every quotation in the claim must occur in the document (ellipses as gaps, one-letter
  slips forgiven);
- `values`: amounts, dates, periods and numbers must be those of the statement of the same duty (the
  values themselves are read by models/verifier/values.py); competing values are a doubt, not a flag;
- `polarity`: negation and modality of verbs ("shall not" for "shall", "may" for "shall"), and the
  paired opposites: exclusivity, revocability, transferability, sublicensability, consent;
- `roles`: a party where the passage names its counterpart (Licensor for Licensee);
- `citations`: a cited section must exist, be related to the claim, carry the title the claim gives
  it and hold the quotations attributed to it;
- `exceptions`: an exception the passage makes that the claim leaves out (needs review, not a flag);
- `governing_law`: the jurisdiction a claim names must be the one the governing-law clause chooses.

This module holds what they share: `Reason`, `Outcome` and `differences`.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from models.verifier.text import words


@dataclass(frozen=True)
class Reason:
    check: str  # misquote | value_mismatch | negation | modality | exclusivity | ... | exception
    claim: str  # what the claim says
    document: str  # what the document says instead
    passage: str | None  # citation id of the evidence passage
    normalisations: tuple[str, ...] = ()
    differences: tuple[tuple[str, str], ...] = ()  # (claim words, document words) that differ

    def as_dict(self) -> dict[str, object]:
        return {
            "check": self.check,
            "claim": self.claim,
            "document": self.document,
            "passage": self.passage,
            "normalisations": list(self.normalisations),
            "differences": [list(d) for d in self.differences],
        }


@dataclass
class Outcome:
    flags: list[Reason] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what was compared and found to agree
    doubts: list[Reason] = field(default_factory=list)  # what keeps a claim from being confirmed, not a flag
    # (value, passage, statement): a value the same as the one its duty's statement gives
    read: list[tuple[str, str, str]] = field(default_factory=list)


def differences(claim: str, document: str) -> tuple[tuple[str, str], ...]:
    a, b = words(claim), words(document)
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    return tuple((" ".join(a[i1:i2]), " ".join(b[j1:j2])) for op, i1, i2, j1, j2 in ops if op != "equal")
