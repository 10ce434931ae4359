"""The guidelines beside the review window and sign-off from it, driven with the keyboard
(pytest-qt, offscreen), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QMenu

from app.project import DEFAULT_GUIDELINES, Project
from app.review.service import ReviewService
from app.workspace import Workspace
from models.vocabulary import Tag
from storage.audit import audit_entries
from ui.review.review_actions import reopen
from ui.review.window import ReviewWindow

pytestmark = pytest.mark.every_store

ANSWER = "contractnli-027"
SHIFT, CTRL = Qt.KeyboardModifier.ShiftModifier, Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def window(qtbot, sample_project: Project) -> ReviewWindow:
    sample_project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "lead")
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.resize(1600, 950)
    window.show()
    window.activateWindow()
    qtbot.waitActive(window)  # shortcuts go to the active window
    window.open_answer(ANSWER)
    window.answer_pane.points.setFocus()
    return window


def _top_line(window: ReviewWindow) -> str:
    """The first line the guidelines panel shows."""
    browser = window.guidelines_panel.browser
    return browser.cursorForPosition(QPoint(20, 8)).block().text()


def _tags(project: Project) -> list[Tag | None]:
    return [p.point.tag for p in ReviewService(project, "ana").state(ANSWER).points]


def test_shift_f1_opens_the_guidelines_at_the_tag_of_the_selected_point_and_follows(qtbot, window) -> None:
    panel = window.guidelines_panel
    assert not panel.isVisible()
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_2)  # point 1: incorrect, then on to point 2
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_K)
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_F1, SHIFT)
    assert panel.isVisible() and panel.section == "incorrect"
    qtbot.waitUntil(lambda: _top_line(window) == "Incorrect")
    assert panel.version.text().startswith("Version 1 · lead")
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_J)  # untagged point, no judge: the top
    assert panel.section == "top"
    qtbot.waitUntil(lambda: _top_line(window) == "Review guidelines")
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_3)  # irrelevant, then on; back to it
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_K)
    qtbot.waitUntil(lambda: _top_line(window) == "Irrelevant")
    assert window.width() <= 1600  # the panel took room inside the window, not beyond the screen's
    # The shortcut sheet (F1, as before) lists it.
    sheet = window.show_shortcuts()
    text = " ".join(label.text() for label in sheet.findChildren(QLabel))
    assert "Shift+F1" in text and "Review guidelines" in text and "Sign off this answer" in text
    sheet.close()
    assert window.queue_pane.isVisible()  # the answer list stays in view beside the guidelines
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_F1, SHIFT)  # Shift+F1 again closes them
    assert not panel.isVisible() and window.document_pane.isVisible()  # the contract back in its place


def test_submit_sign_off_and_reopen_from_the_window(qtbot, window, sample_project: Project) -> None:
    for _ in window.state.points:
        qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_1)
    window.queue_pane.select_answer(ANSWER)  # submitting moves on: stay on this answer
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Return, CTRL)
    assert ReviewService(sample_project, "ana").state(ANSWER).status.value == "submitted"
    with sample_project.sessions() as session:
        (submitted,) = [e for e in audit_entries(session) if e.action == "review.submitted"]
    assert submitted.payload["guideline_version"] == 1
    window.open_answer(ANSWER)
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Return, CTRL | SHIFT)  # sign off: asked first
    box = window.sign_off_box
    assert box.isVisible() and ANSWER in box.informativeText() and "your tags: " in box.informativeText()
    assert not sample_project.signoffs()  # nothing signed until the reviewer says so
    next(b for b in box.buttons() if b.text() == "Sign off").click()
    assert "Signed off under guideline version 1" in window.message.text()
    (check,) = sample_project.signoffs()
    assert check.matches and check.answer_id == ANSWER and check.reviewer == "ana"
    assert _queue_status(window) == "✔ signed off"  # the queue says which answers are locked
    window.queue_pane.move(1)
    window.open_answer(ANSWER)  # a signed answer says so as it opens
    assert window.message.text().startswith("Signed off by ana on ") and "Reopen signed review" in window.message.text()
    window.answer_pane.points.selectRow(0)
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_2)
    assert "signed off answer contractnli-027" in window.message.text() and "reopen it" in window.message.text()
    assert set(_tags(sample_project)) == {Tag.CORRECT}
    reopen(window, window.session, "point 1 is wrong")
    assert _queue_status(window) == "✔ reviewed"
    window.answer_pane.points.selectRow(0)
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_2)
    assert _tags(sample_project)[0] is Tag.INCORRECT
    with sample_project.sessions() as session:
        (reopened,) = [e for e in audit_entries(session) if e.action == "review.reopened"]
    assert reopened.actor == "ana" and reopened.payload["reason"] == "point 1 is wrong"


def test_a_project_without_guidelines_can_start_from_lemajs(qtbot, sample_project: Project) -> None:
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    (item,) = [a for m in window.menuBar().findChildren(QMenu) for a in m.actions() if a.text() == "Review guidelines"]
    item.trigger()  # Help ▸ Review guidelines
    panel = window.guidelines_panel
    assert "no review guidelines yet" in panel.version.text() and panel.start_button.isVisible()
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    guidelines = sample_project.guidelines()
    assert guidelines is not None and guidelines.version == 1 and guidelines.author == "ana"
    assert not panel.start_button.isVisible() and "## Missing" in guidelines.text
    assert "Missing" in panel.browser.toPlainText()
    qtbot.mouseClick(panel.edit_button, Qt.MouseButton.LeftButton)  # the firm's own rule, as version 2
    editor = panel.editor
    assert editor is not None and editor.isVisible() and editor.text.toPlainText() == guidelines.text
    editor.text.setPlainText(guidelines.text + "\n## Firm rule\n\nA cap without its carve-outs is incorrect.\n")
    editor.accept()
    changed = sample_project.guidelines()
    assert changed is not None and changed.version == 2 and "Firm rule" in changed.text
    assert panel.version.text().startswith("Version 2 · ana") and "carve-outs" in panel.browser.toPlainText()
    with sample_project.sessions() as session:
        assert [e.payload["version"] for e in audit_entries(session) if e.action == "guidelines.set"] == [1, 2]


def _queue_status(window) -> str:
    """The status the queue's Review column shows for ANSWER."""
    model = window.queue_pane.model
    row = model.row_of(ANSWER)
    assert row is not None
    return model.data(model.index(row, model.HEADERS.index("Review")))
