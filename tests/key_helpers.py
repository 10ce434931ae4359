"""What the tests of reviewer keys, sign-offs and signed reports share: a key folder of each test's own,
an in-memory keyring, and the command line run in-process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest
from keyring.backend import KeyringBackend

from app import keys
from app.cli import main
from app.project import Project


class MemoryKeyring(KeyringBackend):
    """Test double for the OS keyring (none runs on this machine): passwords in a dict."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.kept: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.kept.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.kept[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.kept.pop((service, username), None)


@pytest.fixture(autouse=True)
def key_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A key folder of this test's own, no keyring, nothing unlocked from another test."""
    folder = tmp_path / "keys"
    monkeypatch.setenv("ASSAY_KEY_DIR", str(folder))
    monkeypatch.setenv("ASSAY_KEY_PASSPHRASE", "correct horse")
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    keys._unlocked.clear()
    keys._unlocked_reports.clear()
    yield folder
    keyring.set_keyring(previous)
    keys._unlocked.clear()
    keys._unlocked_reports.clear()


def cli(capsys: pytest.CaptureFixture[str], project: Project, *argv: str) -> tuple[int, str]:
    """`assay --db PROJECT ARGV…` in-process: its exit status and everything it printed (never a traceback)."""
    capsys.readouterr()
    status = main(["--db", project.url, *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out + err
