"""The window's statistics: a random sample drawn from the Project menu, the least certain answers
first, and the dashboard's estimates and reliability diagram (saved as a screenshot)."""

from __future__ import annotations

from pathlib import Path

from app.cli import main
from app.project import Project
from ui.review_window import ReviewWindow
from ui.sample_actions import draw_random_sample, least_certain_first

from .test_triage import overconfident_labels
from .test_ui import SHOTS


def test_sample_certainty_and_the_dashboards_reliability_diagram(qtbot, sample_project: Project, tmp_path: Path):
    path, sample, _ = overconfident_labels(tmp_path)
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 0
    window = ReviewWindow(sample_project, "ben")
    qtbot.addWidget(window)
    sample_column = window.queue_model.HEADERS.index("Sample")

    def column(index: int) -> list[str]:
        return [window.proxy.index(r, index).data() for r in range(window.proxy.rowCount())]

    assert column(sample_column).count("random #1") == len(sample)  # imported as sampled
    assert draw_random_sample(window, size=5, seed=3)
    assert "seed 3" in window.message.text() and column(sample_column).count("random #2") == 5
    assert not draw_random_sample(window, size=0)  # said in the message bar, not raised
    assert window.message.text().startswith("No sample drawn:")

    least_certain_first(window)
    certainty = [float(c) for c in column(window.queue_model.CERTAINTY) if c != "—"]
    assert certainty == sorted(certainty) and certainty[0] < certainty[-1]
    first = window.proxy.index(0, 0).data()
    assert window.state.answer.id == first  # "next answer" now walks from the least certain

    window.tabs.setCurrentWidget(window.dashboard)
    dashboard = window.dashboard
    assert dashboard.figure_choice.itemText(0).startswith("Reliability diagram")
    assert "expected calibration error" in dashboard.calibration.text()
    figures = {dashboard.estimates.item(r, 1).text() for r in range(dashboard.estimates.rowCount())}
    assert {"Correctness", "Share with an incorrect point"} <= figures
    assert dashboard.estimates.item(0, 3).text().count("[") == 1  # an estimate with its interval
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "dashboard-calibration.png"))
