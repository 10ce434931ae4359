"""The answer pane as a lawyer reads it: Markdown rendered, lead-ins greyed, answer text in no data
point marked, and a selection of the answer made a data point (pytest-qt, offscreen)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor

from app.project import Project
from app.review.service import ReviewService
from app.workspace import Workspace
from ui.review.answer_view import CONTEXT_COLOUR, UNCOVERED_COLOUR
from ui.review.window import ReviewWindow

SHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"
VERDICT = "cuad-004"  # "Yes. The Agreement contains an anti‑assignment clause.  Specifically, ...:" ‑ “MA may not…”
NOTE = "contractnli-004"  # bullets, "Quoted Provision:" / "Conclusion:" lead-ins, a **Note:** in bold


@pytest.fixture
def window(qtbot, sample_project: Project) -> ReviewWindow:
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.resize(1500, 950)
    window.show()
    return window


def _format_at(window: ReviewWindow, answer_offset: int) -> QTextCharFormat:
    """The format the reviewer sees on the answer's character at this offset."""
    view = window.answer_pane.answer_view
    position = next(
        doc + i for doc, length, start in view.rendered.runs for i in range(length) if start + i == answer_offset
    )
    cursor = QTextCursor(view.document())
    cursor.setPosition(position + 1)  # a cursor reports the format of the character before it
    return cursor.charFormat()


def test_text_in_no_data_point_is_marked_and_a_selection_becomes_a_point(
    qtbot, window: ReviewWindow, sample_project: Project
) -> None:
    window.open_answer(VERDICT)
    text = window.state.answer.text
    assert window.answer_pane.answer_view.uncovered == []  # every assertion is a data point
    last = len(window.state.points) - 1
    assert window.state.points[last].point.text.startswith("This prohibits")

    window.answer_pane.points.selectRow(last)
    window.answer_pane.points.setFocus()
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Delete)
    start = text.index("This prohibits")
    assert window.answer_pane.answer_view.uncovered == [(start, len(text))]
    shown = _format_at(window, start + 5)
    assert shown.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert shown.foreground().color() == QColor(UNCOVERED_COLOUR)
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "answer-uncovered.png"))

    window.answer_pane.answer_view.select_answer_text(start, start + 40)  # part of the sentence
    assert window.answer_pane.answer_view.selected_span() == (start, start + 40)
    window.answer_pane.answer_view.select_answer_text(start, len(text))
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    points = ReviewService(sample_project, "ana").state(VERDICT).points
    assert points[-1].point.text == text[start:] and points[-1].point.span_start == start
    assert window.answer_pane.answer_view.uncovered == []
    assert window.answer_pane.points.currentIndex().row() == len(points) - 1

    window.answer_pane.answer_view.select_answer_text(0, 10)  # "Yes." is a point already: said, nothing changes
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert "already a data point" in window.message.text()
    assert len(ReviewService(sample_project, "ana").state(VERDICT).points) == len(points)


def test_markdown_is_rendered_with_lead_ins_greyed_and_points_clickable(qtbot, window: ReviewWindow) -> None:
    window.open_answer(NOTE)
    text = window.state.answer.text
    shown = window.answer_pane.answer_view.toPlainText()
    assert "**" not in shown and "Note:" in shown  # the emphasis is rendered, not printed
    assert _format_at(window, text.index("Note:")).fontWeight() == QFont.Weight.Bold
    lead_in = _format_at(window, text.index("Quoted Provision:"))
    assert lead_in.foreground().color() == QColor(CONTEXT_COLOUR)
    assert "•" in shown  # the answer's own bullets stay

    row = next(i for i, p in enumerate(window.state.points) if p.point.text.startswith("Sharing is permitted"))
    view = window.answer_pane.answer_view
    view.select_answer_text(text.index("Sharing is permitted") + 3, text.index("Sharing is permitted") + 4)
    rect = view.cursorRect(view.textCursor())
    view.setTextCursor(QTextCursor(view.document()))  # a click, not a selection
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.answer_pane.points.currentIndex().row() == row

    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "answer-pane.png"))
