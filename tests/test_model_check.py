"""Check this model: the embedded model judges a few of the sample's human-labelled answers, and the
check reports recall, false alarms and agreement with 95 % intervals, its time and an estimate for
the whole project; its run becomes the model's standing."""

from __future__ import annotations

import pytest

from app.errors import AssayError
from app.ingest.labels import import_labels
from app.judging.model_check import check_model
from app.judging.runs import JudgeSettings
from app.judging.sample_tour import SAMPLE_ANNOTATORS, SAMPLE_LABELS
from app.judging.standing import standing_of_model
from app.project import Project
from app.settings import ModelChoice
from app.workspace import Workspace


def test_the_check_reports_figures_with_intervals_and_becomes_the_models_standing(sample_project: Project) -> None:
    import_labels(sample_project, SAMPLE_LABELS, "sample", default_rater=SAMPLE_ANNOTATORS)
    result = check_model(sample_project, JudgeSettings(), size=3, long_timed=0)  # a long contract takes a minute
    assert (result.answers, result.labelled) == (3, 34)
    figures = result.figures
    assert figures is not None and figures["with_errors"] + figures["correct"] == 3
    for share, interval in (
        ("recall", "recall_ci"),
        ("false_alarm_rate", "false_alarm_ci"),
        ("agreement", "agreement_ci"),
    ):
        if figures[share] is not None:
            low, high = figures[interval]
            assert 0 <= low <= figures[share] <= high <= 1 and high - low > 0.2  # three answers: a wide interval
    text = "\n".join(result.lines())
    assert "95% CI" in text and f"agreement with the humans: {figures['agreed']} of 3 answers" in text
    # The estimate covers all the project's answers, most on contracts far longer than the checked NDAs.
    answers = len(sample_project.answers())
    assert f"judging all {answers} answers of the project here: about" in text
    assert result.estimate_seconds is not None and result.estimate_seconds > result.seconds / 3 * answers / 2
    standing = standing_of_model(sample_project.sessions, ModelChoice())  # the embedded model's
    assert standing.real is not None and standing.real["rater"] == result.run and standing.real["answers"] == 3
    again = check_model(
        sample_project, JudgeSettings(), size=3, long_timed=0
    )  # nothing new to judge: the timings are kept
    assert again.answers == 3 and again.estimate_seconds == pytest.approx(result.estimate_seconds, rel=0.01)


def test_a_project_without_human_labels_is_told_how_to_get_them(sample_project: Project) -> None:
    with pytest.raises(AssayError, match="no human-labelled answers to check a model against"):
        check_model(sample_project, JudgeSettings(), size=3, long_timed=0)


def test_the_pickers_button_checks_the_model_off_the_window_thread(qtbot, sample_project: Project) -> None:
    from ui.judge_dialog import JudgeDialog

    import_labels(sample_project, SAMPLE_LABELS, "sample", default_rater=SAMPLE_ANNOTATORS)
    dialog = JudgeDialog(
        workspace=Workspace(sample_project), standing=lambda choice: standing_of_model(sample_project.sessions, choice)
    )
    qtbot.addWidget(dialog)
    panel = dialog.picker.check
    assert panel is not None and "never measured" in dialog.standing.text()
    panel.size, panel.long_timed = 2, 0
    with qtbot.waitSignal(panel.checked, timeout=300_000):
        panel.button.click()
        assert not panel.button.isEnabled() and "judging labelled answers" in panel.result.text()
    assert "judged 2 human-labelled answers" in panel.result.text() and "95% CI" in panel.result.text()
    assert "human labels on 2 answers" in dialog.standing.text()  # the check is now the model's standing
