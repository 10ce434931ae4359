"""The tree of errors Assay expects and explains (STYLE.md §4); every layer raises from here."""

from __future__ import annotations


class AssayError(Exception):
    """An expected failure, worded as one clear sentence for the user."""


class JudgeError(AssayError):
    """The judge could not give a verdict."""


class JudgeUnavailable(JudgeError):
    """The model cannot be loaded or the server cannot be reached (after retries)."""


class JudgeOutputInvalid(JudgeError):
    """The model's output is not a usable verdict; `raw` keeps what it returned."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class NetworkNotAllowed(JudgeUnavailable):
    """An API judge would send confidential text to a host the user has not allowed."""
