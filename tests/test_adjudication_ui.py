"""The adjudication window, opened from the review window's menu, driven with the review's keys; the
lead's table of reviewers against gold; training mode's gold tags after a submitted gold answer
(pytest-qt, offscreen; SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.ingest.labels import import_labels
from app.project import Project
from app.review import adjudication, qualification
from app.workspace import Workspace
from models.segmentation import segment_answer
from models.vocabulary import Tag
from ui.review.window import ReviewWindow

pytestmark = pytest.mark.every_store


def _labels(project: Project, tmp_path: Path, rows: list[tuple[str, str, list[str]]]) -> None:
    lines = []
    for answer, rater, tags in rows:
        segments = segment_answer(project.answer(answer).text)
        points = [{"text": s.text, "tag": tags[i % len(tags)]} for i, s in enumerate(segments)]
        lines.append({"answer_id": answer, "rater": rater, "data_points": points})
    path = tmp_path / f"labels-{len(list(tmp_path.glob('*.jsonl')))}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_labels(project, path)


@pytest.fixture
def disputed(sample_project: Project, tmp_path: Path) -> tuple[Project, str]:
    answer = sample_project.answers()[0].id
    _labels(sample_project, tmp_path, [(answer, "ana", ["correct"]), (answer, "ben", ["correct", "incorrect"])])
    return sample_project, answer


def test_the_adjudicator_decides_with_one_key_and_the_consensus_is_written(qtbot, disputed) -> None:
    project, answer = disputed
    window = ReviewWindow(Workspace(project), "lead")
    qtbot.addWidget(window)
    view = window.open_adjudication()
    assert view.queue.count() == 1 and answer in view.queue.item(0).toolTip()
    headers = view.model.headers
    assert headers == ["#", "Data point", "Reviewer A", "Reviewer B", "Decision"]  # names hidden
    assert view.points.current_row() == 1  # the first disputed point is selected
    assert view.model.cell(1, 2).text.startswith("✓ correct")
    assert view.model.cell(1, 3).text.startswith("✗ incorrect")
    assert view.model.cell(0, 4).text == "agreed: correct"
    view.names.setChecked(True)
    assert view.model.headers[2] == "ana"

    qtbot.keyClick(view.points, Qt.Key.Key_E)  # reason: reviewer error
    assert view.reason.currentData() == "reviewer error"
    qtbot.keyClick(view.points, Qt.Key.Key_2)  # incorrect
    assert "Consensus written" in view.message.text()
    assert view.queue.count() == 0
    assert [p.tag for p in project.data_points(answer)["consensus"]] == [Tag.CORRECT, Tag.INCORRECT]
    (decision,) = [d for d in adjudication.case(project, answer).points if d.decision]
    assert decision.decision.reason == "reviewer error" and decision.decision.adjudicator == "lead"


def test_a_reviewer_who_is_not_an_adjudicator_is_refused_in_the_window(qtbot, disputed) -> None:
    project, answer = disputed
    adjudication.set_adjudicators(project, ["lead"], "owner")
    window = ReviewWindow(Workspace(project), "ben")
    qtbot.addWidget(window)
    view = window.open_adjudication()
    assert "ben is not an adjudicator of this project" in view.message.text()
    qtbot.keyClick(view.points, Qt.Key.Key_1)
    assert "ben is not an adjudicator of this project" in view.message.text()
    assert "consensus" not in project.data_points(answer)
    assert view.queue.count() == 1


def test_the_lead_sees_reviewers_against_gold_and_training_shows_the_gold_tags(
    qtbot, sample_project: Project, tmp_path: Path
) -> None:
    answers = [a.id for a in sample_project.answers()[:4]]
    _labels(sample_project, tmp_path, [(a, "firm", ["correct", "incorrect"]) for a in answers])
    _labels(sample_project, tmp_path, [(a, "cy", ["correct"]) for a in answers[:3]])
    qualification.configure(sample_project, "lead", gold=["firm"], training=True, gold_share=0.5)

    window = ReviewWindow(Workspace(sample_project), "dee")
    qtbot.addWidget(window)
    window.show()
    dialog = window.open_qualification()
    assert dialog.table.rowCount() == 1 and dialog.table.item(0, 0).text() == "cy"
    (cy,) = qualification.agreement_with_gold(sample_project)
    assert dialog.table.item(0, 3).text().startswith(f"{cy['kappa']:.2f}")
    dialog.close()

    gold_in_queue = [r.id for r in window.queue_pane.model.rows if r.id == answers[3]]
    assert gold_in_queue  # dee's queue holds gold answers, unannounced
    window.open_answer(answers[3])
    qtbot.waitUntil(lambda: window.state is not None and window.state.answer.id == answers[3])
    window.finish_opening()
    for row in range(len(window.state.points)):
        window.answer_pane.points.selectRow(row)
        qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_1)
    window.submit()
    boxes = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert boxes and "gold item" in boxes[0].text()
    assert "incorrect" in boxes[0].text()  # the gold tag dee missed
