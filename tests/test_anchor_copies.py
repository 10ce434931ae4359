"""Issue 62 §10: a copy of a project worked on on another computer, checked on the lead's computer,
and then copied back over the lead's file, is a legitimate copy: `audit verify` stays green. (It showed
one false problem for each place the lead had worked on the project, and once copied back the file was
"rewritten from there" for good.) A log cut in place, or an older copy, is still named."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.cli import main
from app.project import Project
from storage.db import url_for_path


@pytest.fixture
def on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Move to a computer by name: its own key folder, where its anchors are kept."""

    def move(computer: str) -> None:
        monkeypatch.setenv("ASSAY_KEY_DIR", str(tmp_path / f"keys-{computer}"))

    return move


def _work(path: Path, count: int, who: str) -> None:
    project = Project.open(url_for_path(path))
    for n in range(count):
        project.set_host_allowed(f"{who}{n}.example", True, who)
    project.close()


def _verify(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["--project", str(path), "audit", "verify"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out + err


def test_a_copy_worked_on_elsewhere_is_green_here_and_copied_back(
    tmp_path: Path, on, capsys: pytest.CaptureFixture[str]
) -> None:
    lead = tmp_path / "lead"
    lead.mkdir()
    mine, fork = lead / "review.assay", lead / "fork.assay"
    on("lead")
    _work(mine, 3, "lead")
    shutil.copy(mine, fork)
    reviewers = tmp_path / "reviewer" / "review.assay"
    reviewers.parent.mkdir()
    shutil.copy(mine, reviewers)

    on("reviewer")
    _work(reviewers, 8, "ana")  # on her laptop
    on("lead")
    _work(mine, 2, "lead-again")  # the lead works on meanwhile, in two places
    _work(fork, 4, "lead-fork")

    brought = lead / "from-ana.assay"
    shutil.copy(reviewers, brought)
    status, out = _verify(capsys, brought)
    assert status == 0, out  # compared with neither of the lead's files: it went its own way

    shutil.copy(brought, mine)  # the lead takes ana's copy as the project
    status, out = _verify(capsys, mine)
    assert status == 0, out
    _work(mine, 1, "lead-after")
    status, out = _verify(capsys, mine)
    assert status == 0, out

    older = lead / "older.assay"
    shutil.copy(mine, older)
    _work(mine, 1, "lead-later")
    status, out = _verify(capsys, older)  # an older copy of the lead's file is still named
    assert status == 1 and "entries were cut off this copy, or it is an older copy" in out

    from .test_audit_tail import _cut_newest

    _cut_newest(url_for_path(mine))  # and the lead's file, cut in place then written to, is still named
    _work(mine, 1, "after-the-cut")
    status, out = _verify(capsys, mine)
    assert status == 1 and "is not the entry this computer recorded: the log was rewritten from there" in out
