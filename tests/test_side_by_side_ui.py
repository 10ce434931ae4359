"""The side-by-side view of two generators' answers (issue 33), driven with the keyboard (offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.ingest.datasets import import_dataset
from app.judging.sample_tour import SAMPLE_SECOND_GENERATOR
from app.project import Project
from app.review.service import ReviewService
from app.workspace import Workspace
from models.identity import same_point
from models.point_alignment import content
from models.vocabulary import Tag
from storage.preferences import preferences
from ui.review.side_by_side import LEFT, RIGHT, SideBySideWindow
from ui.review.window import ReviewWindow

ANSWER = "cuad-000"  # the Cybergy affiliate agreement's expiration date: a long answer and a short one


@pytest.fixture
def window(qtbot, sample_project: Project) -> ReviewWindow:
    import_dataset(sample_project.sessions, SAMPLE_SECOND_GENERATOR)
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    window.open_answer(ANSWER)
    return window


def _side(qtbot, window: ReviewWindow) -> SideBySideWindow:
    (action,) = [a for a in window.findChildren(type(window.blind_action)) if a.text().startswith("Side by side")]
    action.trigger()  # Review → Side by side with another generator (Ctrl+Shift+B)
    side = window.side_by_side
    qtbot.waitExposed(side)
    return side


def test_two_answers_side_by_side_with_their_points_aligned(qtbot, window: ReviewWindow) -> None:
    side = _side(qtbot, window)
    view = side.view
    assert view is not None and view.answer_ids == (ANSWER, f"{ANSWER}-short")
    headers = side.model.headers
    assert headers == ["A: long-form", "tags", "B: short-form", "tags"]
    assert "What is the expiration date" in side.question.text()
    left, right = view.left.state.points, view.right.state.points
    assert side.model.rowCount() == len(view.rows) >= max(len(left), len(right))
    for n, row in enumerate(view.rows):  # each row: one point per side, or a mark where an answer has none
        for column, index, points in ((LEFT, row.left, left), (RIGHT, row.right, right)):
            shown = side.model.cell(n, column).text.removeprefix("≈ " if not row.same else "")
            assert shown == (points[index].point.text if index is not None else "— not in this answer")
        if row.aligned:  # the identity rule's match
            assert same_point(
                content(left[row.left].point.text, left[row.left].citations),
                content(right[row.right].point.text, right[row.right].citations),
            )
    alone = [n for n, row in enumerate(view.rows) if not row.aligned]
    assert alone and all(
        "Only this answer" in (side.model.cell(n, LEFT if view.rows[n].left is not None else RIGHT).tooltip or "")
        or not view.rows[n].same
        for n in alone
    )
    related = [n for n, row in enumerate(view.rows) if not row.same]
    assert all(side.model.cell(n, RIGHT).text.startswith("≈ ") for n in related)


def test_tags_in_either_column_and_a_preference_with_its_reason(qtbot, window: ReviewWindow, sample_project) -> None:
    side = _side(qtbot, window)
    view = side.view
    first_left = next(n for n, r in enumerate(view.rows) if r.left is not None)
    side.table.select_cell(first_left, LEFT)
    qtbot.keyClick(side.table, Qt.Key.Key_1)  # 1 = correct, on the long answer's point
    first_right = next(n for n, r in enumerate(side.view.rows) if r.right is not None)
    side.table.select_cell(first_right, RIGHT)
    qtbot.keyClick(side.table, Qt.Key.Key_2)  # 2 = incorrect, on the short answer's point
    service = ReviewService(sample_project, "ana")
    left_point = side.view.rows[first_left].left
    right_point = side.view.rows[first_right].right
    assert service.state(ANSWER).points[left_point].point.tag is Tag.CORRECT
    assert window.state.points[left_point].point.tag is Tag.CORRECT  # the review window shows it too
    assert service.state(f"{ANSWER}-short").points[right_point].point.tag is Tag.INCORRECT
    assert "you: ✗ incorrect" in side.model.cell(first_right, RIGHT + 1).text

    side.reason.setText("the short one misses the renewal")
    side.table.setFocus()
    qtbot.keyClick(side.table, Qt.Key.Key_A)  # A = the left answer is better
    with sample_project.sessions() as session:
        (stored,) = preferences(session, "ana")
    assert stored.preferred == ANSWER and stored.reason == "the short one misses the renewal"
    assert side.buttons["left"].isChecked() and side.preference.text() == "recorded: A is better"
    qtbot.keyClick(side.table, Qt.Key.Key_T)  # a tie instead
    with sample_project.sessions() as session:
        (stored,) = preferences(session, "ana")
    assert stored.preferred is None and side.buttons["tie"].isChecked()


def test_the_on_screen_hint_reason_enter_then_a_b_t_records_a_preference(
    qtbot, window: ReviewWindow, sample_project
) -> None:
    """Issue 56: the hint says "why (optional); Enter, then A, B or T". After Enter in the reason field the
    keys are the window's shortcuts (QActions), whose `triggered` passes `checked` first: each must
    record its preference, never "False: a preference is one of left, right, tie"."""
    side = _side(qtbot, window)
    assert "Enter, then A, B or T" in side.reason.placeholderText()
    side.reason.setFocus()
    qtbot.keyClicks(side.reason, "clearer")
    qtbot.keyClick(side.reason, Qt.Key.Key_Return)  # back to the keys
    shortcuts = {a.shortcut().toString(): a for a in side.actions()}
    for key, preferred in (("B", f"{ANSWER}-short"), ("T", None), ("A", ANSWER)):
        shortcuts[key].trigger()  # what pressing the key does wherever the focus is in the window
        with sample_project.sessions() as session:
            (stored,) = preferences(session, "ana")
        assert stored.preferred == preferred and stored.reason == "clearer", side.message.text()
        assert side.message.text() == "Preference saved."


def test_blind_comparison_hides_the_generators(qtbot, window: ReviewWindow) -> None:
    side = _side(qtbot, window)
    side.blind.setChecked(True)
    headers = [side.model.headers[c] for c in (0, 2)]
    assert headers == ["Answer A", "Answer B"]
    assert set(side.view.answer_ids) == {ANSWER, f"{ANSWER}-short"} and side.view.seed is not None
    assert "long-form" not in side.answers[0].toPlainText() + side.answers[1].toPlainText()
    assert side.pair.currentText() == "two answers, names hidden"


def test_the_dashboard_regression_opens_side_by_side(qtbot, window: ReviewWindow) -> None:
    window.dashboard.generators.regressionOpened.emit(f"{ANSWER}-short", "long-form", "short-form")
    side = window.side_by_side
    assert side.isVisible() and side.view.answer_ids == (ANSWER, f"{ANSWER}-short")


def test_the_dashboard_lists_each_pair_and_its_regressions(qtbot, sample_project: Project, tmp_path) -> None:
    """A judge finds every long answer right and every short answer wrong: B loses every question, and
    every question is a regression; the panel says so and opens each one."""
    import json

    from app.figures.comparison import comparison
    from app.ingest.labels import import_labels
    from models.segmentation import segment_answer
    from ui.generator_comparison import GeneratorComparison

    import_dataset(sample_project.sessions, SAMPLE_SECOND_GENERATOR)
    lines = []
    ids = {a.id for a in sample_project.answers()}
    for answer in sample_project.answers():
        if not (answer.id.endswith("-short") or f"{answer.id}-short" in ids):
            continue  # the 15 questions answered twice
        text = sample_project.answer(answer.id).text
        tag = "incorrect" if answer.id.endswith("-short") else "correct"
        points = [{"text": s.text, "tag": tag} for s in segment_answer(text)]
        lines.append({"answer_id": answer.id, "rater": "judge-x", "kind": "judge", "data_points": points})
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    import_labels(sample_project, path)
    result = comparison(sample_project, "long-form", "short-form")
    panel = GeneratorComparison()
    qtbot.addWidget(panel)
    panel.show_pairs([result])
    assert "B better 0 · tie 0 · A better 15" in panel.summary.text() and "15 regressions" in panel.summary.text()
    assert panel.regressions.rowCount() == len(result["regressions"]) == 15
    first = result["regressions"][0]
    assert panel.regressions.item(0, 2).text() == first["answer_b"]
    with qtbot.waitSignal(panel.regressionOpened) as opened:
        panel.regressions.cellDoubleClicked.emit(0, 0)
    assert opened.args == [first["answer_b"], "long-form", "short-form"]
    written = panel.export_to(tmp_path / "regressions.csv")  # what the Export regressions… button writes
    assert len(written.read_text(encoding="utf-8").splitlines()) == 1 + 15
