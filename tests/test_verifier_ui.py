"""The verifier in the review window: a flagged point shows its badge and reason, the link shows the
evidence passage, and the judge's tags say how good the judge is."""

from __future__ import annotations

import pytest

from app.paired_stress import VerifierRater, paired_stress_test, remember
from app.project import Project
from app.verification import verify_project
from ui.review_window import ReviewWindow

ANSWER = "cuad-006"  # cites the excerpt's "¶1", which in the contract is its cover line


@pytest.fixture
def window(qtbot, sample_project: Project) -> ReviewWindow:
    verify_project(sample_project.sessions, [ANSWER])
    window = ReviewWindow(sample_project, "ana")
    qtbot.addWidget(window)
    window.resize(1500, 950)
    window.show()
    window.open_answer(ANSWER)
    return window


def _select_flagged(window: ReviewWindow) -> int:
    for row in range(len(window.state.points)):
        window.points.selectRow(row)
        if "Verifier flags" in window.verifier_flag.text():
            return row
    raise AssertionError("no point of the answer shows the verifier's flag")


def test_a_flagged_point_shows_the_reason_and_its_passage(qtbot, window: ReviewWindow) -> None:
    _select_flagged(window)
    text = window.verifier_flag.text()
    assert "bad citation" in text and "the answer says" in text
    link = text.split('href="')[1].split('"')[0]
    window.verifier_flag.linkActivated.emit(link)
    assert window.document.focused == link.removeprefix("passage:")


def test_the_judge_is_called_a_demonstration_model_until_measured(
    qtbot, window: ReviewWindow, sample_project: Project
) -> None:
    _select_flagged(window)
    assert "demonstration model: not stress-tested" in window.rationale.text()
    result = paired_stress_test(sample_project.sessions, [VerifierRater(sample_project.sessions)], limit=6, seed=2)
    remember(sample_project.sessions, result)
    window.points.selectRow(0)
    _select_flagged(window)
    assert "of planted errors" in window.rationale.text()
    assert "not stress-tested" not in window.rationale.text()
