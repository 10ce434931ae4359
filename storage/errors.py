"""The project store's errors: a small tree under models.errors.AssayError (STYLE.md §4).

Apart from storage/db.py so that every storage module (integrity's checks among them) can raise them
without importing the engine's module, which imports those modules back.
"""

from __future__ import annotations

from pathlib import Path

from models.errors import AssayError

__all__ = [
    "FileBusy",
    "NotAProject",
    "PassphraseNeeded",
    "ProjectDamaged",
    "ProjectTooNew",
    "StorageError",
    "WrongPassphrase",
]


class StorageError(AssayError):
    """The project store cannot be opened or written."""


class ProjectTooNew(StorageError):
    """The project was written by a newer Assay whose schema this version does not know."""


class PassphraseNeeded(StorageError):
    """The project file is encrypted and no passphrase was given."""


class WrongPassphrase(StorageError):
    """The passphrase does not open the encrypted project."""


class FileBusy(StorageError):
    """The project file stayed in use while a backup waited to take its place: nothing was replaced."""


class ProjectDamaged(StorageError):
    """The project file is damaged (cut short, or pages that do not read back); the message says how."""

    def __init__(self, path: Path | str, problem: str, advice: str = "") -> None:
        super().__init__(f"{path} is damaged: {problem}" + (f"; {advice}" if advice else ""))
        self.path = Path(path)
        self.problem = problem


class NotAProject(StorageError):
    """The file is neither an Assay project nor an encrypted one."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(message)
        self.path = Path(path)
