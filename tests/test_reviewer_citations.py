"""A reviewer's citations are the passages the reviewer cited: the judge's evidence a point came with is
shown beside it, never listed as the reviewer's (`assay show`, the exports, the sign-off), on a new
project and on one migrated from before (migration 0022), which says how many rows it changed."""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

import pytest

from app.cli import main
from app.export.formats import export_csv
from app.judging.runs import run_judge
from app.project import Project
from app.review.service import ReviewService
from models.judge import LemajJudge, Mode
from models.vocabulary import Tag
from storage import audit, signoffs

from .test_judge import ScriptedBackendStandIn

ANSWER = "contractnli-027"  # DoiT NDA


def _judged(project: Project) -> None:
    outputs = [json.dumps({"tag": "incorrect"})] * 50 + [json.dumps({"missing": []})]
    run_judge(
        project.sessions, LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE), "judge-run", answer_ids=[ANSWER]
    )


def _reviewed(project: Project) -> ReviewService:
    """ana opens the judged answer, overrides the judge on its first point, and adds one missing point,
    citing par_3 herself."""
    _judged(project)
    ana = ReviewService(project, "ana")
    state = ana.open(ANSWER)
    assert any(p.evidence for p in state.points)  # the judge's evidence is there to be shown
    ana.set_tag(ANSWER, state.points[0].point.id, Tag.CORRECT)
    ana.add_missing(ANSWER, "The NDA lasts two years.", ["par_3"])
    return ana


def _ana_citations_everywhere(project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> dict:
    """ana's citations as `show --json`, the CSV export and her sign-off's record list them."""
    ana = ReviewService(project, "ana")
    capsys.readouterr()
    assert main(["--db", project.url, "show", ANSWER, "--json"]) == 0
    shown = [p["citations"] for p in json.loads(capsys.readouterr().out)["raters"]["ana"]]
    export_csv(project, tmp_path / "points.csv")
    with (tmp_path / "points.csv").open(encoding="utf-8") as handle:
        exported = [row["citations"] for row in csv.DictReader(handle) if row["rater"] == "ana"]
    with project.sessions() as session:
        signed = [p["citations"] for p in signoffs.live_content(session, ANSWER, ana.rater_id)["points"]]
    return {"show": shown, "csv": exported, "signoff": signed}


def test_the_judges_evidence_is_never_the_reviewers_citation(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ana = _reviewed(sample_project)
    state = ana.state(ANSWER)
    overridden = state.points[0]
    assert overridden.point.tag is Tag.CORRECT and overridden.judge_tag is Tag.INCORRECT
    assert overridden.citations == () and overridden.evidence  # shown beside it, not hers
    assert state.points[-1].citations == ("par_3",)  # the one she cited
    found = _ana_citations_everywhere(sample_project, capsys, tmp_path)
    assert found["show"][:-1] == [[]] * (len(found["show"]) - 1) and found["show"][-1] == ["par_3"]
    assert found["csv"] == [""] * (len(found["csv"]) - 1) + ["par_3"]
    assert found["signoff"] == [[]] * (len(found["signoff"]) - 1) + [["par_3"]]
    # Undo puts the evidence back with the point, still not as hers.
    ana.restore(ANSWER, [p.point for p in state.points], "undo")
    assert ana.state(ANSWER).points[0].evidence == overridden.evidence


def test_migration_0022_takes_the_evidence_off_the_reviewers_citations(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _reviewed(sample_project)
    path = sample_project.url.removeprefix("sqlite:///")
    sample_project.close()
    with sqlite3.connect(path) as db:  # the project as Assay wrote it before: the evidence stored as hers
        carried = db.execute("UPDATE citations SET basis = NULL WHERE basis = 'carried'").rowcount
        db.execute("UPDATE alembic_version SET version_num = '0021'")
    assert carried > 0
    capsys.readouterr()
    project = Project.open(sample_project.url)
    try:
        said = capsys.readouterr().err
        assert f"{carried} citations that reviewers' points had carried over" in said
        with project.sessions() as session:
            entry = [e for e in audit.audit_entries(session) if e.action == "project.migrated"][-1]
            assert entry.payload["citations_no_longer_the_reviewers"] == carried
            assert audit.verify_audit(session)[1] == []  # the entry is chained like any other
        found = _ana_citations_everywhere(project, capsys, tmp_path)
        assert found["show"][-1] == ["par_3"] and not any(found["show"][:-1])
        assert found["signoff"][-1] == ["par_3"] and not any(found["signoff"][:-1])
    finally:
        project.close()
