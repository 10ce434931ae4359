"""The review window prepares the next answer while the reviewer reads: a move then shows it at once.
What it shows must be what opening the answer shows, never older, and is saved as opened right after."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.project import Project
from app.review.service import ReviewService
from app.workspace import Workspace
from models.vocabulary import ReviewStatus, Tag
from ui.review.window import ReviewWindow

from .test_ui import ANSWER, _judge

NEXT = "contractnli-028"  # the answer after ANSWER in the queue
pytestmark = pytest.mark.every_store  # a preview is open's writes rolled back: on the team's server too


@pytest.fixture
def ben(sample_project: Project) -> ReviewService:
    """Another reviewer, in this process."""
    return ReviewService(sample_project, "ben")


@pytest.fixture
def window(qtbot, sample_project: Project, ben: ReviewService) -> ReviewWindow:
    _judge(sample_project, [ANSWER, NEXT])
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    window.open_answer(ANSWER)
    window.answer_pane.points.setFocus()
    qtbot.waitUntil(lambda: window.session.prepared is not None)  # the reviewer reads; the next answer is read ahead
    assert window.session.prepared.state.answer.id == NEXT
    return window


def _next_answer(qtbot, window: ReviewWindow) -> None:
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    assert window.state.answer.id == NEXT


def _tag_of(window: ReviewWindow, rater: str) -> str | None:
    """A rater's tag on the first point, in its column of the points table (None: no such column)."""
    model = window.answer_pane.points_model
    return model.index(0, model.HEADERS.index(rater)).data() if rater in model.HEADERS else None


def _shown(window: ReviewWindow) -> list[tuple[str, str, str]]:
    """The points table as the reviewer sees it: text, the judge's tag, their own."""
    model = window.answer_pane.points_model
    return [tuple(model.index(row, column).data() for column in (1, 2, 4)) for row in range(model.rowCount())]


def test_the_prepared_answer_is_what_opening_it_shows_and_is_saved_as_opened(
    qtbot, window: ReviewWindow, sample_project: Project
) -> None:
    other = ReviewService(sample_project, "ana")  # another handle on the same reviewer's work
    assert other.queue_row(NEXT).status is ReviewStatus.UNREVIEWED  # reading ahead saved nothing
    _next_answer(qtbot, window)
    qtbot.waitUntil(lambda: not window.session.previewing)  # opened (its points saved) after the frame
    assert window.state == other.state(NEXT)  # what is shown is what was saved, point ids included
    assert _shown(window)[0][1] == "✗ incorrect"
    row = window.queue_pane.model.rows[window.queue_pane.table.currentIndex().row()]
    assert row.status is ReviewStatus.UNREVIEWED is other.queue_row(NEXT).status  # started only by a first tag


def test_a_key_pressed_before_the_frame_tags_the_saved_point(
    qtbot, window: ReviewWindow, sample_project: Project
) -> None:
    _next_answer(qtbot, window)
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_1)  # no event loop turn in between: the answer is opened first
    tags = [p.point.tag for p in ReviewService(sample_project, "ana").state(NEXT).points]
    assert tags[0] is Tag.CORRECT and tags[1:] == [None] * (len(tags) - 1)


def test_a_tag_another_reviewer_saved_after_reading_ahead_is_shown(
    qtbot, window: ReviewWindow, sample_project: Project, ben: ReviewService
) -> None:
    ben.set_tag(NEXT, ben.open(NEXT).points[0].point.id, Tag.IRRELEVANT)
    _next_answer(qtbot, window)  # what the frame of the move shows, before the event loop turns:
    assert (
        window.answer_pane.points_model.index(0, window.answer_pane.points_model.HEADERS.index("ben")).data()
        == "∅ irrelevant"
    )
    assert window.state.points == ReviewService(sample_project, "ana").state(NEXT).points


def test_a_judge_run_finished_after_reading_ahead_is_shown(
    qtbot, window: ReviewWindow, sample_project: Project
) -> None:
    _judge(sample_project, [NEXT], tag="correct", run="judge-run-2")  # a newer run, in this process
    _next_answer(qtbot, window)
    assert _shown(window)[0][1] == "✓ correct"  # the newest run speaks now: the judge column is its
    assert window.state.points == ReviewService(sample_project, "ana").state(NEXT).points


def test_a_save_by_another_process_is_shown_by_the_frame_after(
    qtbot, window: ReviewWindow, sample_project: Project
) -> None:
    elsewhere = Project.open(sample_project.url)  # its own engine: this process cannot count its saves
    try:
        _judge(elsewhere, [NEXT], tag="correct", run="judge-run-2")
    finally:
        elsewhere.close()
    _next_answer(qtbot, window)
    qtbot.waitUntil(lambda: _tag_of(window, "judge-run-2") == "✓ correct")  # opened after the frame, shown again
    assert window.state == window.session.state_of(NEXT)  # what was saved (the rater that speaks: read on a run)


def test_blind_review_chosen_after_reading_ahead_hides_the_judge_on_the_next_answer(
    qtbot, window: ReviewWindow
) -> None:
    window.blind_action.trigger()  # saved for every answer: what was read ahead shows the judge
    _next_answer(qtbot, window)
    assert {row[1] for row in _shown(window)} == {"—"}
