"""The smaller things of issue 63 §9, as a reviewer meets them: side by side closes with Escape and Ctrl+W and
leaves the review in view; the export dialog remembers its format and folder; the answer's comment takes
lines; a relaunch reopens the answer one was on; the queue's heading counts what a filter shows; counts
read in the right number; `assay compare` says "assay:" once; DoiT's vendor is a blank in the contract,
not a name Assay failed to read."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from app.cli import main
from app.ingest.contract_terms import contract_reading
from app.plain_text import counted
from app.project import Project
from app.settings import Settings, load_settings, save_settings
from app.workspace import Workspace
from ui.export_dialog import ExportDialog, export_from_dialog
from ui.review.document_pane import parties_html
from ui.review.window import ReviewWindow

from .test_side_by_side_ui import _side
from .test_side_by_side_ui import window as window

NDA = "DoiT-ICN-NonDisclosure-Agreement.txt"


def test_side_by_side_closes_with_escape_and_ctrl_w_and_leaves_the_review_in_view(qtbot, window) -> None:
    side = _side(qtbot, window)
    room = side.screen().availableGeometry()
    assert side.frameGeometry().width() < room.width() and side.frameGeometry().height() < room.height()
    side.table.setFocus()
    qtbot.keyClick(side.table, Qt.Key.Key_Escape)
    assert not side.isVisible()
    side = _side(qtbot, window)
    shortcuts = {a.shortcut().toString(): a for a in side.actions()}
    assert {"Esc", "Ctrl+W"} <= set(shortcuts)  # wherever the focus is in the window, the reason field too
    shortcuts["Ctrl+W"].trigger()
    assert not side.isVisible()
    assert "<b>Esc / Ctrl+W</b>&nbsp;=&nbsp;close" in side.legend.text()  # said where the keys are listed


def _answer_export_dialog(act) -> None:
    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        assert isinstance(dialog, ExportDialog)
        act(dialog)

    QTimer.singleShot(0, answer)


def test_the_export_dialog_remembers_the_format_and_the_folder(qtbot, sample_project: Project, tmp_path: Path) -> None:
    before = load_settings()
    folder = tmp_path / "exports"
    folder.mkdir()
    said: list[str] = []

    def choose(dialog: ExportDialog) -> None:
        dialog.format.setCurrentIndex(dialog.format.findData("csv"))
        dialog.path.setText(str(folder / "points.csv"))
        dialog.accept()

    seen: list[tuple[str, Path]] = []

    def look(dialog: ExportDialog) -> None:
        seen.append((dialog.fmt, dialog.out().parent))
        dialog.reject()

    try:
        _answer_export_dialog(choose)
        export_from_dialog(None, Workspace(sample_project), said.append)
        assert said == [f"Exported to {folder / 'points.csv'}"]
        _answer_export_dialog(look)
        export_from_dialog(None, Workspace(sample_project), said.append)
        assert seen == [("csv", folder)]  # the next export starts where the last one went
    finally:
        save_settings(before)


def test_the_comment_on_an_answer_takes_several_lines(qtbot, window) -> None:
    box = window.answer_pane.comment
    assert box.height() >= 2 * box.fontMetrics().lineSpacing()  # lines shown, not one
    box.setFocus()
    qtbot.keyClicks(box, "The term is wrong.")
    qtbot.keyClick(box, Qt.Key.Key_Return)  # a new line, not the end of the comment
    qtbot.keyClicks(box, "See clause 4.")
    window.answer_pane.points.setFocus()  # leaving the box saves it
    qtbot.waitUntil(lambda: window.session.state.comment is not None)
    assert window.session.state.comment == "The term is wrong.\nSee clause 4."
    ctrl_enter = QKeyEvent(QEvent.Type.ShortcutOverride, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    box.event(ctrl_enter)
    assert not ctrl_enter.isAccepted()  # Ctrl+Enter is left to the window's Submit, not taken as a new line


def test_a_relaunch_reopens_the_answer_one_was_on(qtbot, sample_project: Project) -> None:
    settings = Settings()
    first = ReviewWindow(Workspace(sample_project), "ana", settings)
    qtbot.addWidget(first)
    opened = first.queue_pane.model.answer_at(7).id
    first.open_answer(opened)
    first.close()
    again = ReviewWindow(Workspace(sample_project), "ana", load_settings())  # the settings as saved at closing
    qtbot.addWidget(again)
    assert again.session.answer_id == opened != again.queue_pane.model.answer_at(0).id
    other = ReviewWindow(Workspace(sample_project), "bea", load_settings())  # another reviewer's place is theirs
    qtbot.addWidget(other)
    assert other.session.answer_id == other.queue_pane.model.answer_at(0).id


def test_the_queue_heading_counts_the_answers_a_filter_shows(qtbot, sample_project: Project) -> None:
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    queue = window.queue_pane
    every = len(queue.model.rows)
    assert queue.heading.text() == f"<b>Answers</b> · {every}"
    queue.model.set_document(NDA)
    shown = queue.model.rowCount()
    assert 0 < shown < every and queue.heading.text() == f"<b>Answers</b> · {shown} of {every} shown"


def test_counts_read_in_the_right_number() -> None:
    assert counted(1, "new document") == "1 new document" and counted(2, "new document") == "2 new documents"
    assert counted(0, "new answer") == "0 new answers"


def test_compare_says_assay_once(sample_project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--db", sample_project.url, "compare"]) != 0
    said = capsys.readouterr().err
    assert said.startswith("assay: compare: name the baseline") and "assay: assay" not in said


def test_a_party_left_blank_in_the_contract_is_said_to_be(sample_project: Project) -> None:
    card = parties_html(contract_reading(sample_project, NDA).parties)
    assert "State of Illinois" in card
    assert "(name left blank in the contract)" in card and "(name not read)" not in card  # "and (“Vendor”)"
