"""Backups in the window: one made on open, listed under Project → Backups…, restored in place;
a damaged project opened from the welcome window is offered its newest backup."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from app import backups
from app.project import Project
from app.review.service import ReviewService
from app.settings import Settings
from app.workspace import Workspace
from models.vocabulary import Tag
from storage.db import sqlite_path
from ui.backups_dialog import BackupsDialog
from ui.review.window import ReviewWindow
from ui.welcome import WelcomeWindow

ANSWER = "contractnli-027"


def _first_tag(project: Project) -> Tag | None:
    points = ReviewService(project, "ana").state(ANSWER).points
    return points[0].point.tag if points else None


def test_backup_on_open_then_restore_from_the_dialog(qtbot, sample_project: Project, tmp_path: Path, monkeypatch):
    monkeypatch.setenv(backups.BACKUP_DIR_ENV, str(tmp_path / "backups"))
    path = sqlite_path(sample_project.url)
    window = ReviewWindow(Workspace(sample_project), "ana", Settings())
    qtbot.addWidget(window)
    window.backup_keeper.wait()
    assert len(backups.list_backups(path)) == 1  # made when the project opened, and checked
    qtbot.waitUntil(lambda: "Backed up (and checked)" in window.message.text())

    service = ReviewService(sample_project, "ana")  # review work made after the backup
    service.set_tag(ANSWER, service.open(ANSWER).points[0].point.id, Tag.INCORRECT)
    assert _first_tag(sample_project) is Tag.INCORRECT

    dialog = BackupsDialog(window, window.backup_keeper, window.session)
    qtbot.addWidget(dialog)
    assert dialog.list.count() == 1
    aside = dialog.restore(backups.list_backups(path)[0].path, confirm=False)
    assert aside is not None, f"not restored: {window.message.text()}"  # the sentence the window said why

    assert _first_tag(sample_project) is None  # the window's project is the restored file now
    assert str(aside) in window.message.text()
    kept = Project.open(f"sqlite:///{aside}")
    assert _first_tag(kept) is Tag.INCORRECT  # the later work is kept aside, not lost
    kept.close()


def test_a_damaged_project_is_offered_its_newest_backup(qtbot, sample_project: Project, tmp_path, monkeypatch):
    monkeypatch.setenv(backups.BACKUP_DIR_ENV, str(tmp_path / "backups"))
    path = sqlite_path(sample_project.url)
    backups.make_backup(path)
    sample_project.close()
    path.write_bytes(path.read_bytes()[:20_000])  # a copy cut short
    shown: list[str] = []

    def answer(box: QMessageBox) -> None:
        shown.append(box.text())
        next(b for b in box.buttons() if b.text() == "Restore the newest backup").click()

    monkeypatch.setattr(QMessageBox, "exec", answer)
    monkeypatch.setattr(QMessageBox, "information", lambda *args: shown.append(args[2]))
    welcome = WelcomeWindow(Settings(), lambda *_: None)
    qtbot.addWidget(welcome)
    opened = welcome.open_path(path)

    assert f"{path} is damaged: it is cut short" in shown[0] and "the newest good backup is from" in shown[0]
    assert "the damaged file is kept as" in shown[1]
    assert opened is not None and opened.project.counts()["answers"] > 0
    opened.close()
