"""The verifier's flags where a lawyer reads the results outside the window: `assay show`, the CSV, XLSX
and JSONL exports, and the report, which says how good each judge is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.export.formats import export
from app.figures.rater_names import rater_name
from app.ingest.labels import import_labels
from app.judging.paired_stress import remember
from app.judging.verification import VERIFIER, verify_project
from app.project import Project
from models.perturbations import TYPES

ANSWER = "cuad-006"  # its first list item cites "¶1", which in the contract is the cover line
FLAGGED = "License to advertise, market and sell the Technology"


def _judge_tags(project: Project, tmp_path: Path) -> str:
    """A judge's tag on the answer's cited list item, as `assay import-labels` brings in."""
    answer = project.answer(ANSWER)
    assert answer is not None
    start = answer.text.index(FLAGGED)
    end = answer.text.index("(¶1).", start) + len("(¶1).")
    point = {"text": answer.text[start:end], "tag": "correct", "span": [start, end]}
    path = tmp_path / "judge.jsonl"
    path.write_text(json.dumps({"answer_id": ANSWER, "rater": "smol", "kind": "judge", "data_points": [point]}) + "\n")
    import_labels(project, path)
    return point["text"]


def test_show_puts_the_verifiers_flag_under_the_point_it_is_about(
    sample_project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _judge_tags(sample_project, tmp_path)
    assert main(["--db", sample_project.url, "show", ANSWER]) == 0
    out = capsys.readouterr().out
    checker = rater_name(VERIFIER)  # the claim checker, stored as the rater `verifier`
    judged = out[out.index("\nsmol") : out.index(f"\n{checker}")]
    assert "correct" in judged and "⚑ claim checker incorrect: bad_citation: the answer says '¶1'" in judged
    assert f"{checker} (checked now, not stored" in out

    verify_project(sample_project.sessions, [ANSWER])  # stored: shown as stored, once
    assert main(["--db", sample_project.url, "show", ANSWER, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    verdicts = {p["verdict"] for p in data["verifier"]["points"]}
    assert "incorrect" in verdicts
    assert verdicts <= {"supported", "quoted", "unconfirmed", "incorrect", "needs_review", "unverifiable"}
    assert main(["--db", sample_project.url, "show", ANSWER]) == 0
    out = capsys.readouterr().out
    assert out.count(f"\n{checker}") == 1 and "checked now" not in out


def test_exports_carry_the_verifiers_verdict_and_reasons(sample_project: Project, tmp_path: Path) -> None:
    import pandas as pd

    _judge_tags(sample_project, tmp_path)
    frame = pd.read_csv(export(sample_project, "csv", tmp_path / "points.csv"))
    row = frame[frame["rater"] == "smol"].iloc[0]
    # a spreadsheet names the claim checker and its checks in words; the JSONL keeps the ids
    assert row["claim_checker_verdict"] == "incorrect" and "does not say this" in row["claim_checker_reasons"]
    sheet = pd.read_excel(export(sample_project, "xlsx", tmp_path / "points.xlsx"), sheet_name="data_points")
    assert list(sheet[sheet["rater"] == "smol"]["claim_checker_verdict"]) == ["incorrect"]
    lines = export(sample_project, "jsonl", tmp_path / "points.jsonl").read_text().splitlines()
    point = json.loads(lines[0])["data_points"][0]
    assert point["verifier_verdict"] == "incorrect" and "¶1" in point["verifier_reasons"]


def test_the_report_names_a_near_chance_judge_a_demonstration_model(sample_project: Project, tmp_path: Path) -> None:
    _judge_tags(sample_project, tmp_path)
    report = export(sample_project, "report", tmp_path / "r.html").read_text()
    assert "smol: demonstration model." in report and "not stress-tested" in report
    by_type = {t: {"trials": 0, "caught": 0, "recall": None, "ci": None} for t in TYPES}
    by_type["misquote"] = {"trials": 40, "caught": 2, "recall": 0.05, "ci": [0.014, 0.165]}
    figures = {"by_type": by_type, "unperturbed": 50, "false_alarms": 1, "false_alarm_rate": 0.02}
    remember(sample_project.sessions, {"answers": 9, "seed": 1, "raters": {"smol": figures}})
    report = export(sample_project, "report", tmp_path / "r.html").read_text()
    judges = report.split('id="judges"')[1].split("<section")[0]
    assert "smol: demonstration model." in judges and '<td class="num">5 %</td>' in judges  # caught 5 %
    assert '<td>misquote</td><td class="num">2 of 40 (5 %; 1 % – 16 %)</td>' in judges
    assert "Run the judge…" in report  # where the capable model is chosen


def test_a_jury_of_the_verifier_and_a_model_is_incorrect_where_the_verifier_flags(sample_project: Project) -> None:
    from app.judging.jury import run_jury
    from app.review.service import ReviewService
    from models.judge import LemajJudge, Mode
    from models.vocabulary import Tag

    from .test_judge import ScriptedBackendStandIn

    n_points = len(ReviewService(sample_project, "probe").open(ANSWER).points)
    says_correct = [json.dumps({"tag": "correct"})] * n_points + [json.dumps({"missing": []})]
    model = LemajJudge(ScriptedBackendStandIn(says_correct), Mode.TWO_STAGE)  # a model that passes everything
    summary = run_jury(sample_project.sessions, [("model", model), ("verifier", None)], "jury", answer_ids=[ANSWER])
    assert [j.rater for j in summary.jurors] == ["model", "verifier"] and summary.combined == 1
    points = sample_project.data_points(ANSWER)
    flagged = {(p.span_start, p.span_end) for p in points["verifier"] if p.tag is Tag.INCORRECT}
    assert flagged  # the "¶1" citation
    for p in points["jury"]:
        assert p.tag is (Tag.INCORRECT if (p.span_start, p.span_end) in flagged else Tag.CORRECT)


def test_the_stress_test_takes_the_answers_named(sample_project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--db", sample_project.url, "stress-test", "--raters", "verifier", "--answers", "cuad-002,cuad-003"]
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["answers"] == 2 and result["raters"]["verifier"]["unperturbed"] == result["qualifying_points"] > 0
    assert main(args) == 0  # the table: one column per rater, one row per kind of planted error
    table = capsys.readouterr().out.splitlines()
    assert table[1].split() == ["planted", "error", "verifier"] and table[-1].startswith("false alarms")
    bad = result["raters"]["verifier"]["by_type"]["bad_citation"]
    assert any(line.split()[:2] == ["bad_citation", f"{bad['caught']}/{bad['trials']}"] for line in table)
    assert main(["--db", sample_project.url, "stress-test", "--raters", "verifier", "--answers", "nope"]) != 0
    assert "no answer with id nope" in capsys.readouterr().err


def test_a_planted_citation_never_names_the_section_that_holds_the_point(sample_project: Project) -> None:
    from app.judging.paired_stress import _facts, _unrelated_section
    from storage import documents

    answer = sample_project.answer("cuad-036")  # the assignment clause: 11.7, inside "11. Miscellaneous"
    assert answer is not None
    with sample_project.sessions() as session:
        facts = _facts(documents.passages_of(session, answer.document_id))
    point = next(line for line in answer.text.splitlines() if "shall not assign" in line)
    planted = _unrelated_section(point, facts)
    assert planted is not None and planted.startswith("Section ") and planted != "Section 11"
    cited = facts.index.resolve_whole("section", planted.removeprefix("Section "))
    assert not any("shall not assign" in facts.text_of[c] for c in cited)
