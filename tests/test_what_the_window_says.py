"""What the window says is true (issue 63 §2, §6): no perfect score for an answer whose points were not
all checked, and one name for the claim checker wherever a person reads (the judge column, the
rationale, the status bar while it runs, the spreadsheets); the stored id stays in the JSONL."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from PySide6.QtCore import Qt

from app.export.formats import export_csv, export_jsonl
from app.figures.rater_names import rationale_words
from app.judging.sample_tour import sample_tour
from app.judging.verification import verify_project
from app.project import Project
from app.review.service import QueueRow, ReviewPoint
from app.workspace import Workspace
from models.vocabulary import ReviewStatus, Tag
from storage.reviews import PointSnapshot
from ui.item_models import CLEARED, UNCONFIRMED, AnswerQueueModel
from ui.point_model import DataPointTableModel
from ui.review.answer_html import rationale_html
from ui.review.judge_runner import JudgeRunner
from ui.sample_tour import SampleCheckWorker

ANSWER = "contractnli-027"


def _queue(counts: tuple[int, int, int, int, int]) -> list[str]:
    row = QueueRow(id="a", document="nda.txt", question="Does it?", status=ReviewStatus.UNREVIEWED, reviewers_done=0)
    model = AnswerQueueModel([row], lambda _ids: {"a": counts})
    return [model.data(model.index(0, column)) for column in (1, 2, 3)]


def test_the_queue_never_scores_an_answer_whose_points_were_not_all_checked(qapp) -> None:
    assert _queue((5, 0, 0, 0, 0)) == [CLEARED, "1.00", "1.00"]  # every point confirmed
    assert _queue((2, 0, 0, 0, 3)) == [UNCONFIRMED, "2 of 5", "—"]  # was 1.00 and 1.00
    assert _queue((0, 0, 0, 0, 4)) == [UNCONFIRMED, "0 of 4", "—"]  # nothing confirmed: to read
    assert _queue((1, 1, 0, 0, 2))[1:] == ["1 of 4", "—"]


def _point(judge: str, tag: Tag, rationale: str) -> ReviewPoint:
    snapshot = PointSnapshot(
        id=1,
        ordinal=0,
        text="30 days",
        span_start=0,
        span_end=7,
        source_id=None,
        comment=None,
        tag=None,
        passage_ids=(),
    )
    return ReviewPoint(
        point=snapshot,
        citations=(),
        judge_tag=tag,
        judge_confidence=None,
        judge_rationale=rationale,
        judge=judge,
    )


def test_the_claim_checker_has_one_name_in_the_points_table_and_its_rationale(qapp) -> None:
    point = _point("verifier", Tag.INCORRECT, "verifier incorrect: value_mismatch: the answer says '30 days' (par_3)")
    model = DataPointTableModel()
    model.set_points([point])
    header = model.headerData(model.JUDGE, Qt.Orientation.Horizontal)
    assert "Claim checker" in str(header) and "Judge" not in str(header)
    said = rationale_html(point, None)
    assert said.startswith("<i>Claim checker: flagged — a different value: the answer says")
    assert "verifier" not in said and "value_mismatch" not in said
    judged = _point("judge:SmolLM2:two-stage:standard", Tag.CORRECT, "the clause says so")
    assert rationale_html(judged, None).startswith("<i>Judge: the clause says so")
    assert rationale_words("verifier needs_review: two values compete") == "needs review — two values compete"


def test_the_status_bar_never_calls_the_claim_checker_a_judge_run(qtbot, sample_project: Project) -> None:
    from PySide6.QtWidgets import QMainWindow

    window = QMainWindow()
    qtbot.addWidget(window)
    said: list[str] = []
    runner = JudgeRunner(Workspace(sample_project), None, said.append, window)  # type: ignore[arg-type]
    tour = sample_tour(sample_project)
    assert tour is not None
    worker = SampleCheckWorker(Workspace(sample_project), tour)
    worker.cancel.set()  # stops at once: the label is what is looked at
    with qtbot.waitSignal(worker.signals.finished, timeout=None):  # the event, however slow the machine
        runner.start(worker, worker.settings)
        assert runner.cancel_button.text() == "Cancel claim check"
        runner.cancel()
    assert "Stopping the claim checker after the answer in flight…" in said


def test_spreadsheets_name_the_claim_checker_and_the_jsonl_keeps_its_id(
    sample_project: Project, tmp_path: Path
) -> None:
    verify_project(sample_project.sessions, [ANSWER])
    export_csv(sample_project, tmp_path / "points.csv")
    text = (tmp_path / "points.csv").read_text(encoding="utf-8")
    with (tmp_path / "points.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert "claim_checker_verdict" in rows[0] and "verifier_verdict" not in rows[0]
    assert any(r["rater"] == "Claim checker" for r in rows)
    assert "verifier" not in text and "value_mismatch" not in text
    export_jsonl(sample_project, tmp_path / "labels.jsonl")
    lines = [json.loads(line) for line in (tmp_path / "labels.jsonl").read_text().splitlines()]
    assert any(line.get("rater") == "verifier" for line in lines)  # what `import-labels` reads back
