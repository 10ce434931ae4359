"""The errors a user can meet, each one clear sentence; the UI and CLI show them as they are."""

from __future__ import annotations

from models.errors import AssayError, JudgeError, JudgeOutputInvalid, JudgeUnavailable, NetworkNotAllowed
from storage.db import NotAProject, PassphraseNeeded, ProjectDamaged, ProjectTooNew, StorageError, WrongPassphrase

__all__ = [
    "AssayError",
    "InvalidInput",
    "JudgeError",
    "JudgeOutputInvalid",
    "JudgeUnavailable",
    "NetworkNotAllowed",
    "NotAProject",
    "PassphraseNeeded",
    "PasswordRequired",
    "ProjectDamaged",
    "ProjectTooNew",
    "StorageError",
    "WrongPassphrase",
    "file_problem",
]


class InvalidInput(AssayError):
    """A file the user gave is malformed; the message names the file, line or row, and field."""

    def __init__(self, place: str, problem: str) -> None:
        # One line, whatever a library's message holds (a PDF parser quotes the bad byte, newline included).
        problem = " ".join("".join(c if c.isprintable() else " " for c in problem).split())
        super().__init__(f"{place}: {problem}")
        self.place = place
        self.problem = problem


class PasswordRequired(InvalidInput):
    """An encrypted PDF given without its password, or with a wrong one; `name` is its file name."""

    def __init__(self, path: str, name: str, *, wrong: bool) -> None:
        problem = "the PDF password is wrong" if wrong else "this PDF is password-protected: give its password"
        super().__init__(path, problem)
        self.name = name
        self.wrong = wrong


def file_problem(exc: OSError) -> str:
    """What an operating-system error says about a path, in words: no errno, no repeated path."""
    if isinstance(exc, IsADirectoryError):
        return "it is a folder, not a file"
    if isinstance(exc, NotADirectoryError | FileExistsError):  # FileExistsError: a file where a folder must be made
        return "a part of its path is a file, not a folder"
    if isinstance(exc, FileNotFoundError):
        return "no such file or folder"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return (exc.strerror or str(exc)).rstrip(".").lower()
