"""The first window: a reviewer sees the answers, filters them, and reads one against its contract."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.project import Project
from ui.answers_window import AnswersWindow


def test_window_lists_the_sample_and_shows_the_selected_answer(qtbot, sample_project: Project, tmp_path) -> None:
    window = AnswersWindow(sample_project)
    qtbot.addWidget(window)
    window.show()
    assert window.proxy.rowCount() == 119
    first = min(a.id for a in sample_project.answers())  # sorted by id
    assert window.answer.toPlainText() == sample_project.answer(first).text
    assert window.passages.count() > 50

    qtbot.keyClicks(window.filter, "Keep.txt")
    assert window.proxy.rowCount() == 31
    window.table.setFocus()
    window.table.selectRow(0)
    qtbot.keyClick(window.table, Qt.Key.Key_Down)
    shown = window.model.answers[window.proxy.mapToSource(window.table.currentIndex()).row()]
    assert shown.document == "Keep.txt"
    assert window.answer.toPlainText() == sample_project.answer(shown.id).text
    assert window.passages.item(0).text().startswith("[par_1]")

    shot = tmp_path / "answers.png"
    assert window.grab().save(str(shot))
    assert shot.stat().st_size > 10_000


def test_gui_command_screenshot_opens_the_sample(tmp_path: Path) -> None:
    """`assay gui --sample --screenshot` as `make run` starts it, but saving a picture and exiting."""
    from ui.main import main

    shot = tmp_path / "window.png"
    assert main(["--project", str(tmp_path / "s.assay"), "gui", "--sample", "--screenshot", str(shot)]) == 0
    assert shot.stat().st_size > 10_000
