"""A judge's standing against human labels grows with the project, not with its square.

Along the labels' index on (rater_id, tag, data_point_id) (migration 0024) SQLite once joined each
review to every label of its rater with an error's tag: twice the reviews, four times the work, and
90 s at 10,000 reviews, so the dashboard never finished. SQLite counts the steps of its virtual
machine (a progress handler called every 1,000): a count, unlike a time, does not depend on the
machine's load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.project import Project
from bench.analytics_scale import build
from storage.db import url_for_path
from storage.statistics import real_label_figures

STEPS_PER_CALL = 1_000


def _standing_steps(path: Path, answers: int) -> tuple[int, dict[str, Any]]:
    """The steps SQLite took for the judge's standing on a project of `answers` answers, each with 10
    judge points and the reviewer's copies, both tagged, every answer reviewed; and the standing."""
    url = url_for_path(path)
    build(url, answers=answers, points=10)
    project = Project.open(url)
    try:
        with project.sessions() as session:
            calls = [0]

            def count() -> int:
                calls[0] += 1
                return 0  # go on

            sqlite = session.connection().connection.dbapi_connection
            assert sqlite is not None
            sqlite.set_progress_handler(count, STEPS_PER_CALL)
            try:
                figures = real_label_figures(session, "judge")
            finally:
                sqlite.set_progress_handler(None, STEPS_PER_CALL)
    finally:
        project.close()
    assert figures is not None
    return calls[0] * STEPS_PER_CALL, figures


def test_a_judges_standing_takes_twice_the_steps_for_twice_the_reviews(tmp_path: Path) -> None:
    small, small_figures = _standing_steps(tmp_path / "small.assay", 400)
    large, large_figures = _standing_steps(tmp_path / "large.assay", 800)
    assert small_figures["answers"] == 400 and large_figures["answers"] == 800  # every answer reviewed
    assert 0 < large_figures["caught"] <= large_figures["with_errors"]
    assert large < 2.5 * small, f"{small:,} steps for 400 reviews, {large:,} for 800: not linear"
