"""One name for the claim checker wherever a person reads (issue 63 §6): the answer queue's column header,
the points table's cells where it read a point without tagging it (never "—", which says "not checked"),
and the text of `assay triage` and `assay raters`; the JSON keeps the stored id."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt

from app.cli import main
from app.judging.verification import VERIFIER, verify_project
from app.project import Project
from app.review.service import ReviewPoint
from app.workspace import Workspace
from models.vocabulary import Tag
from storage.reviews import PointSnapshot
from ui.point_model import DataPointTableModel
from ui.review.window import ReviewWindow

ANSWER = "contractnli-027"  # a DoiT NDA answer


def _point(tag: Tag | None, rationale: str) -> ReviewPoint:
    snapshot = PointSnapshot(
        id=1, ordinal=0, text="x", span_start=0, span_end=1, source_id=None, comment=None, tag=None, passage_ids=()
    )
    return ReviewPoint(
        point=snapshot, citations=(), judge_tag=tag, judge_confidence=None, judge_rationale=rationale, judge=VERIFIER
    )


def test_a_point_the_checker_read_but_did_not_tag_says_what_it_found(qapp) -> None:
    model = DataPointTableModel()
    model.set_points(
        [
            _point(None, "verifier quoted: the quotation is the document's words; the rest is not checked"),
            _point(None, "verifier needs_review: two values compete in par_4"),
            _point(None, "verifier unconfirmed: nothing close enough"),
            _point(Tag.INCORRECT, "verifier incorrect: value_mismatch: 30 days against 15 days"),
        ]
    )
    cells = [model.data(model.index(row, model.JUDGE)) for row in range(4)]
    assert cells == ["❝ quotation confirmed", "⚠ needs review", "○ not confirmed", "✗ incorrect"]  # were "—" thrice


def test_the_queue_calls_the_claim_checker_by_its_name(qtbot, sample_project: Project) -> None:
    verify_project(sample_project.sessions, [ANSWER])  # the claim checker speaks for the project out of the box
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    model = window.queue_pane.model
    header = model.headerData(1, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole)
    tip = model.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert header == "Claim\nchecker" and tip.startswith("The claim checker's correctness")
    window.open_answer(ANSWER)
    table = window.answer_pane.points_model
    cells = [table.data(table.index(row, table.JUDGE)) for row in range(table.rowCount())]
    assert cells and "—" not in cells  # every point was read: its verdict, tagged or not, is said
    assert "○ not confirmed" in cells  # a point it left untagged (its verdict read back from its report)


def test_triage_and_raters_name_the_claim_checker_and_cut_no_name(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    verify_project(sample_project.sessions, [ANSWER])
    capsys.readouterr()
    assert main(["--db", sample_project.url, "triage"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("rater: Claim checker (") and "verifier" not in said
    assert main(["--db", sample_project.url, "raters"]) == 0
    said = capsys.readouterr().out
    assert "* Claim checker " in said and "default rater: Claim checker" in said and "verifier" not in said
    assert main(["--db", sample_project.url, "scores", "--by", "rater"]) == 0
    said = capsys.readouterr().out
    (line,) = [line for line in said.splitlines() if line.startswith("Claim checker ")]
    assert "verifier" not in said and line.endswith("precision —  recall —  F1 —")  # never 1.00 on tags it cannot give
    assert main(["--db", sample_project.url, "raters", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["default"] == VERIFIER  # what scripts read keeps the id
    assert main(["--db", sample_project.url, "raters", "--default", "Claim checker"]) == 0  # the name shown chooses
    assert "chosen by the lead" in capsys.readouterr().out


def test_the_workbook_names_the_claim_checker_and_gives_it_no_relevance(sample_project: Project, tmp_path) -> None:
    import pandas as pd

    from app.export.formats import export

    verify_project(sample_project.sessions, [ANSWER])
    sheets = pd.read_excel(export(sample_project, "xlsx", tmp_path / "set.xlsx"), sheet_name=None)
    mine = sheets["answers"][sheets["answers"]["rater"] == "Claim checker"]
    assert len(mine) == 1 and "verifier" not in set(sheets["answers"]["rater"])
    assert mine[["irrelevant", "missing", "precision", "recall", "f1"]].isna().all(axis=None)  # never 0 and 1.00
    triage = dict(zip(sheets["triage"]["measure"], sheets["triage"]["value"], strict=False))
    assert triage["rater"] == "Claim checker"


def test_side_by_side_calls_the_claim_checker_by_its_name(qapp) -> None:
    from ui.review.side_by_side import _cells

    _text, tags = _cells(_point(Tag.CORRECT, "verifier supported: found in par_3"), False, True)
    assert tags.text.endswith("claim checker: ✓ correct") and "judge" not in tags.text
