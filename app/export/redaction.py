"""Redaction of personal data in exports: e-mail addresses, phone numbers and names the user lists.

Reviewed sets leave the firm (to a vendor, into a training set); the project itself keeps the
original text. Phone numbers are found with libphonenumber (`phonenumbers`), which tells a phone
number from a year range, an amount or a clause number far better than a regular expression can.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import phonenumbers

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
EMAIL_MARK, PHONE_MARK, NAME_MARK = "[EMAIL]", "[PHONE]", "[NAME]"
_SEPARATORS = r"[\s_.\-]*"  # between a name's words: "Jane Doe", "Jane_Doe", "jane.doe", "JaneDoe"


@dataclass(frozen=True)
class Redaction:
    """What to hide. `names` are matched case-insensitively, longest first, wherever they occur: inside
    a longer word or a file name too ("GopageCorp_10-K.txt"), their words apart by spaces, `_`, `-` or
    `.` or run together ("Jane_Doe", "JaneDoe"): a redacted export must not show the name in any form."""

    names: tuple[str, ...] = ()
    phone_region: str = "US"  # how to read numbers written without a country code
    _names: re.Pattern[str] | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        names = sorted({n.strip() for n in self.names if n.strip()}, key=len, reverse=True)
        if names:
            pattern = "|".join(_SEPARATORS.join(re.escape(word) for word in n.split()) for n in names)
            object.__setattr__(self, "_names", re.compile(pattern, re.IGNORECASE))

    def text(self, text: str) -> str:
        text = EMAIL.sub(EMAIL_MARK, text)  # before phones: digits inside an address are not a phone
        found = phonenumbers.PhoneNumberMatcher(text, self.phone_region, leniency=phonenumbers.Leniency.VALID)
        for match in reversed(list(found)):
            text = text[: match.start] + PHONE_MARK + text[match.end :]
        if self._names is not None:
            text = self._names.sub(NAME_MARK, text)
        return text

    def __call__(self, value: Any) -> Any:
        """Every string inside rows, records or messages; numbers and keys stay as they are."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self(item) for item in value)
        return value


def keep_everything(value: Any) -> Any:
    return value
