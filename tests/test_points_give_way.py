"""A lawyer's laptop (1366 × 768): the points table never scrolls sideways for a juror's column. When
the point's text would be narrower than readable, the jurors' columns (a judge run's tags, not the
jury's, the reviewer's, the citations or the claim checker's) are hidden, widest first, the header says
so, and they come back when the window is wide again; the header's menu still shows one."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.project import Project
from ui.review.point_table import READABLE
from ui.review.window import ReviewWindow

from .test_readable_window import ANSWER, JUDGE, judged_window

SHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"


@pytest.fixture
def laptop(qtbot, sample_project: Project) -> ReviewWindow:
    return judged_window(qtbot, sample_project, 1366, 768)


def _juror_column(window: ReviewWindow) -> int:
    return window.answer_pane.points_model.HEADERS.index(JUDGE)


def test_at_1366_a_juror_column_gives_way_and_the_text_stays_readable(qtbot, laptop: ReviewWindow) -> None:
    table = laptop.answer_pane.points
    header, model = table.horizontalHeader(), laptop.answer_pane.points_model
    qtbot.waitUntil(lambda: header.isSectionHidden(_juror_column(laptop)))
    for answer in ("contractnli-028", ANSWER):  # the next answers: the same
        laptop.open_answer(answer)
        qtbot.waitUntil(lambda: header.sectionSize(1) >= READABLE)
        assert header.isSectionHidden(_juror_column(laptop))
        kept = [model.JUDGE, model.HEADERS.index("Yours"), model.CITED, model.HEADERS.index("verifier")]
        assert not any(header.isSectionHidden(c) for c in kept)  # the jury's, yours, the citations, the checker's
    assert header.toolTip() == "1 juror column hidden for width; right-click the header to show"
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert laptop.grab().save(str(SHOTS / "points-1366-juror-gives-way.png"))


@pytest.mark.xfail(
    strict=True,
    reason="left to the lead: without the juror the columns still need 612 px (#, the text's 240, the jury's 100, "
    "Yours 75, Cited 72, the claim checker's 99) of the 513 px the pane's table has beside the queue (487 px) and "
    "the document (320 px)",
)
def test_at_1366_the_points_table_never_scrolls_sideways(qtbot, laptop: ReviewWindow) -> None:
    table = laptop.answer_pane.points
    header = table.horizontalHeader()
    qtbot.waitUntil(lambda: header.isSectionHidden(_juror_column(laptop)))
    assert header.sectionSize(1) >= READABLE
    assert header.length() <= table.viewport().width() and not table.horizontalScrollBar().isVisible()


def test_a_juror_column_comes_back_when_there_is_room_and_from_the_header_s_menu(qtbot, laptop: ReviewWindow) -> None:
    pane = laptop.answer_pane
    header = pane.points.horizontalHeader()
    juror = _juror_column(laptop)
    qtbot.waitUntil(lambda: header.isSectionHidden(juror))
    laptop.resize(1920, 1080)
    qtbot.waitUntil(lambda: not header.isSectionHidden(juror))
    assert header.toolTip() == ""
    assert header.sectionSize(1) >= READABLE
    laptop.resize(1366, 768)
    qtbot.waitUntil(lambda: header.isSectionHidden(juror))
    menu = pane.column_menu()
    labels = [action.text() for action in menu.actions()]
    shown = " ".join(str(pane.points_model.headerData(juror, Qt.Orientation.Horizontal)).split())
    entry = labels.index(f"{shown}  (hidden for width)")
    menu.actions()[entry].setChecked(True)  # the reviewer wants it: it stays, and the table scrolls
    qtbot.wait(50)
    assert not header.isSectionHidden(juror)
    laptop.open_answer("contractnli-028")
    qtbot.wait(50)
    assert not header.isSectionHidden(_juror_column(laptop))
    assert header.sectionSize(1) >= READABLE
