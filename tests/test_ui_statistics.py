"""The window's statistics: a random sample drawn from the Project menu, the least certain answers
first, and the dashboard's estimates and reliability diagram (saved as a screenshot)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction

from app.cli import main
from app.project import Project
from app.workspace import Workspace
from ui.review.sample_actions import draw_random_sample, least_certain_first
from ui.review.window import ReviewWindow

from .test_triage import overconfident_labels, two_generators
from .test_ui import SHOTS


def test_sample_certainty_and_the_dashboards_reliability_diagram(qtbot, sample_project: Project, tmp_path: Path):
    path, sample, _ = overconfident_labels(tmp_path)
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 0
    # j calls every point correct: near chance on ana's labels, so the lead must choose it for it to speak
    assert main(["--db", sample_project.url, "raters", "--default", "j"]) == 0
    window = ReviewWindow(Workspace(sample_project), "ben")
    qtbot.addWidget(window)
    sample_column = window.queue_pane.model.HEADERS.index("Sample")

    def column(index: int) -> list[str]:
        return [window.queue_pane.model.index(r, index).data() for r in range(window.queue_pane.model.rowCount())]

    assert column(sample_column).count("random #1") == len(sample)  # imported as sampled
    assert draw_random_sample(window.queue_pane, window.session, size=5, seed=3)
    assert "seed 3" in window.message.text() and column(sample_column).count("random #2") == 5
    assert not draw_random_sample(window.queue_pane, window.session, size=0)  # said in the message bar, not raised
    assert window.message.text().startswith("No sample drawn:")

    least_certain_first(window.queue_pane, window.session)
    certainty = [float(c) for c in column(window.queue_pane.model.CERTAINTY) if c != "—"]
    assert certainty == sorted(certainty) and certainty[0] < certainty[-1]
    first = window.queue_pane.model.answer_at(0).id
    assert window.state.answer.id == first  # "next answer" now walks from the least certain
    (next_answer,) = [a for a in window.findChildren(QAction) if a.text() == "Next answer"]
    next_answer.trigger()
    assert window.state.answer.id == window.queue_pane.model.answer_at(1).id

    with qtbot.waitSignal(window.dashboard.refreshed, timeout=300_000):  # computed in the background
        window.tabs.setCurrentWidget(window.dashboard)
    dashboard = window.dashboard
    assert dashboard.figure_choice.itemText(0).startswith("Reliability diagram")
    assert "expected calibration error" in dashboard.calibration.text()
    figures = {dashboard.estimates.item(r, 1).text() for r in range(dashboard.estimates.rowCount())}
    assert {"Correctness", "Share with an incorrect point"} <= figures
    assert dashboard.estimates.item(0, 3).text().count("[") == 1  # an estimate with its interval
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "dashboard-calibration.png"))


def test_the_dashboard_compares_two_generators_on_the_same_questions(qtbot, project: Project, tmp_path: Path, capsys):
    from app.figures import estimates, triage

    two_generators(project, tmp_path)
    window = ReviewWindow(Workspace(project), "ben")
    qtbot.addWidget(window)
    window.resize(1500, 1000)
    with qtbot.waitSignal(window.dashboard.refreshed, timeout=300_000):  # computed in the background
        window.tabs.setCurrentWidget(window.dashboard)
    (pair,) = estimates.comparisons(project)
    gap = pair["metrics"]["any_incorrect"]["ppi"]
    text = window.dashboard.comparison.text()
    assert "model-a minus model-b</b> on 153 shared questions" in text
    low, high = gap["ci"]
    assert f"Share with an incorrect point {gap['estimate']:+.2f} [{low:+.2f}, {high:+.2f}]" in text
    assert window.dashboard.figure_choice.itemText(0).startswith("Reliability diagram")
    rule = triage.triage(project)  # the window's rule: LeMAJ's default thresholds
    shown = window.dashboard.triage.text()
    assert f"clears {rule['cleared_count']} of 306 judged answers" in shown
    assert f"miss rate at most {rule['miss_rate_upper_95']:.1%} (95 %, over answers)" in shown
    groups = {window.dashboard.estimates.item(r, 0).text() for r in range(window.dashboard.estimates.rowCount())}
    assert groups == {"model-a", "model-b"}
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "dashboard-estimates.png"))
