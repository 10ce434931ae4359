"""The verifier in the review window: a flagged point shows its badge and reason, the link shows the
evidence passage, and the judge's tags say how good the judge is."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from app.ingest.labels import import_labels
from app.judging.paired_stress import VerifierRater, paired_stress_test, remember
from app.judging.standing import standing_of_model
from app.judging.verification import verify_project
from app.project import Project
from app.settings import ModelChoice
from app.workspace import Workspace
from models.checker.report import AnswerReport, PointReport, finding_at
from models.perturbations import TYPES
from ui.judge_dialog import JudgeDialog
from ui.review.verifier_flags import VerifierFlagLabel
from ui.review.window import ReviewWindow

ANSWER = "cuad-006"  # cites the excerpt's "¶1", which in the contract is its cover line


@pytest.fixture
def window(qtbot, sample_project: Project) -> ReviewWindow:
    verify_project(sample_project.sessions, [ANSWER])
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.resize(1500, 950)
    window.show()
    window.open_answer(ANSWER)
    qtbot.wait(400)  # the first finding is read once the window's first frame is painted
    return window


def _select_flagged(window: ReviewWindow) -> int:
    """The point the rules flag as a bad citation (the answer's "¶1"); the kind reader flags another point of it."""
    for row in range(len(window.state.points)):
        window.answer_pane.points.selectRow(row)
        shown = window.answer_pane.verifier_flag.text()
        if "Claim checker: incorrect" in shown and "bad citation" in shown:
            return row
    raise AssertionError("no point of the answer shows the verifier's flag for its bad citation")


def test_a_flagged_point_shows_the_reason_and_its_passage(qtbot, window: ReviewWindow) -> None:
    _select_flagged(window)
    text = window.answer_pane.verifier_flag.text()
    assert "bad citation" in text and "the answer says" in text
    link = text.split('href="')[1].split('"')[0]
    window.answer_pane.verifier_flag.linkActivated.emit(link)
    assert window.document_pane.view.focused == link.removeprefix("passage:")


def test_the_judge_is_called_a_demonstration_model_until_measured(
    qtbot, window: ReviewWindow, sample_project: Project
) -> None:
    _select_flagged(window)
    assert "held-out, from its data card" in window.answer_pane.rationale.text()  # no human label here yet
    assert "demonstration model" not in window.answer_pane.rationale.text()  # the verifier is no model
    result = paired_stress_test(sample_project.sessions, [VerifierRater(sample_project.sessions)], limit=6, seed=2)
    remember(sample_project.sessions, result)
    window.open_answer(ANSWER)  # figures are read when an answer opens
    _select_flagged(window)
    assert "of planted errors" in window.answer_pane.rationale.text()


def _judge_tags(project: Project, tmp_path, answer: str = ANSWER) -> None:
    """A judge's tags on the answer, as `assay import-labels` brings in a judge run made elsewhere."""
    text = project.answer(answer).text
    point = text.split(". ")[0]
    record = {
        "answer_id": answer,
        "rater": "smol",
        "kind": "judge",
        "data_points": [{"text": point, "tag": "incorrect"}],
    }
    path = tmp_path / "judge.jsonl"
    path.write_text(json.dumps(record) + "\n")
    import_labels(project, path)


def _figures(caught: int, trials: int) -> dict:
    by_type = {t: {"trials": 0, "caught": 0, "recall": None, "ci": None} for t in TYPES}
    by_type["change_value"] = {"trials": trials, "caught": caught, "recall": caught / trials, "ci": [0.01, 0.2]}
    figures = {"by_type": by_type, "unperturbed": 50, "false_alarms": 1, "false_alarm_rate": 0.02}
    return {"answers": 12, "seed": 1, "points": 0, "qualifying_points": 50, "raters": {"smol": figures}}


def test_the_judge_column_says_how_good_the_judge_is_and_offers_a_capable_model(
    qtbot, sample_project: Project, tmp_path, monkeypatch
) -> None:
    _judge_tags(sample_project, tmp_path)
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.open_answer(ANSWER)
    header = window.answer_pane.points_model.headerData(2, Qt.Orientation.Horizontal)
    tip = window.answer_pane.points_model.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert header == "Judge ⚠ demo" and "smol: demonstration model: not stress-tested" in tip
    window.answer_pane.points.selectRow(0)
    assert 'href="judge"' in window.answer_pane.rationale.text()
    opened = []
    monkeypatch.setattr(window, "open_judge_dialog", lambda: opened.append(True))
    window.answer_pane.rationale.linkActivated.emit("judge")
    assert opened  # one click to the model picker

    remember(sample_project.sessions, _figures(3, 100))  # near chance: still a demonstration model
    window.open_answer("cuad-007")
    window.open_answer(ANSWER)
    tip = window.answer_pane.points_model.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "demonstration model: caught 3% of planted errors" in tip and "change_value: caught 3 of 100" in tip

    remember(sample_project.sessions, _figures(90, 100))
    window.open_answer("cuad-007")
    window.open_answer(ANSWER)
    header = window.answer_pane.points_model.headerData(2, Qt.Orientation.Horizontal)
    assert " ".join(header.split()) == "Judge (caught 90%)"  # over two lines: the column stays narrow
    window.answer_pane.points.selectRow(0)
    assert (
        "demonstration" not in window.answer_pane.rationale.text() and "href" not in window.answer_pane.rationale.text()
    )


def test_the_judge_dialog_shows_the_models_figures_and_the_way_to_a_capable_one(
    qtbot, sample_project: Project, monkeypatch
) -> None:
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    dialog = JudgeDialog(
        choice=ModelChoice(kind="embedded"), standing=lambda c: standing_of_model(sample_project.sessions, c)
    )
    qtbot.addWidget(dialog)
    dialog.show()
    assert "demonstration model: not stress-tested" in dialog.standing.text()
    assert dialog.use_file.isVisible() and dialog.use_api.isVisible()
    dialog.use_api.click()
    assert dialog.picker.kind == "openai"
    assert "not stress-tested" in dialog.standing.text() and dialog.picker.base_url.isEnabled()
    browsed = []
    monkeypatch.setattr(dialog.picker, "browse", lambda: browsed.append(dialog.picker.kind))
    dialog.use_file.click()
    assert browsed == ["gguf"]


def test_a_point_that_only_grazes_a_flagged_one_is_not_shown_flagged(qtbot) -> None:
    """The window reads the verifier's finding on a reviewer's point by the rule the exports use: the
    verifier point covering most of it, and only if it covers more than half of the shorter one."""
    flagged = PointReport(0, 50, "x" * 50, "incorrect", [], None, "flagged")
    supported = PointReport(50, 120, "y" * 70, "supported", [], None, "found")
    label = VerifierFlagLabel(lambda _passage: None)
    qtbot.addWidget(label)
    label._cache["a1"] = AnswerReport("a1", [flagged, supported])  # as if the verifier had run

    shown = {}
    for span in ((0, 50), (45, 110), (46, 54), (10, 40)):
        label.show_point("a1", *span)
        shown[span] = label.text()
        exported = _exported_verdict(AnswerReport("a1", [flagged, supported]), span)
        assert ("Claim checker: incorrect" in shown[span]) is (exported == "incorrect"), span
    assert "Claim checker: incorrect" in shown[(0, 50)] and "Claim checker: incorrect" in shown[(10, 40)]
    assert "found in the document" in shown[(45, 110)]  # mostly the supported point
    assert shown[(46, 54)] == ""  # touches both, covers neither


def _exported_verdict(report: AnswerReport, span: tuple[int, int]) -> str:
    """The verdict the CSV/XLSX/JSONL exports write for a point with this span (app.export.formats)."""
    found = finding_at(report, *span)
    return found.verdict if found else ""
