"""Page 1 says what is true (issue 63 §7): the data points counted once, not once a rater's record of
them; no 95 % interval of no width from two answers; the claim checker given no relevance, precision or
recall for tags it never gives; and named with its article, one colon a sentence."""

from __future__ import annotations

import re
from pathlib import Path

from app.export.report.gather import _reviewer_headlines
from app.export.report.tables import CANNOT_TAG, TOO_FEW, appendix_tables, interval_text, mean_interval
from app.figures import analytics as stats
from app.figures.triage import triage
from app.project import Project
from storage.db import url_for_path

from .reading import Rendered, cli_json


def _plain(text: str) -> str:
    return " ".join(text.split())


def test_the_data_points_are_counted_once(reviewed: Rendered, capsys) -> None:
    info = cli_json(reviewed.url, "info", capsys)
    # the judge's records, the reviewer's copies and the claim checker's of the same claims: more than once
    assert info["data_points"] > info["claims"] > 0
    said = re.search(r"“data points”, (\S+) in all", _plain(reviewed.text))
    assert said is not None and int(said.group(1).replace(",", "")) == info["claims"]


def test_no_interval_of_no_width_from_two_answers() -> None:
    assert mean_interval([1.0, 1.0]) == (None, None) and interval_text([1.0, 1.0]) == TOO_FEW
    low, high = mean_interval([1.0] * 5)  # five answers all 1.00: some room below, not a point
    assert low is not None and 0.4 < low < 0.9 and high == 1.0
    rows = [{"rater": "ana", "correctness": 1.0, "f1": 1.0, "answers": 2}]
    per_answer = [{"rater": "ana", "answer_id": a, "correctness": 1.0, "f1": 1.0} for a in ("a", "b")]
    shown = _reviewer_headlines(rows, per_answer, {"ana": "human"}, lambda text: text)
    assert [(h.low, h.high, h.no_interval) for h in shown] == [(None, None, TOO_FEW)] * 2


def test_the_claim_checker_has_no_relevance_figures(checked: Rendered, checked_file: Path, tmp_path: Path) -> None:
    project = Project.open(url_for_path(checked_file))
    try:
        table = appendix_tables(project, stats.scores(project), triage(project), lambda text: text)[
            "Scores of every answer, by rater"
        ]
    finally:
        project.close()
    mine = [row for row in table.rows if row[1] == "Claim checker"]
    assert mine and all(row[4] == row[5] == row[7] == CANNOT_TAG for row in mine)  # irrelevant, missing, F1
    assert "cannot tag a point irrelevant or missing" in table.caption
    assert "1.00" not in {row[7] for row in mine}


def test_the_rater_that_speaks_is_named_with_its_article(checked: Rendered) -> None:
    text = _plain(checked.text)
    assert "The automatic figures come from the claim checker," in text
    assert "Answers in which the claim checker flagged a point" in text and "of the claim checker, which" in text
    assert "The claim checker speaks for the project. It is trusted; it caught" in text
    assert not re.search(r"\w: (trusted|near chance|not measured)\b", text)  # no "project: trusted: caught"


def test_a_rater_in_a_sentence_has_its_article_and_no_colon() -> None:
    from app.figures.rater_names import rater_phrase

    assert rater_phrase("verifier") == "the claim checker"
    assert rater_phrase("judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard") == "the judge SmolLM2-135M (two-stage)"
    jury = rater_phrase("jury:roles:verifier+judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard")
    assert jury == "the jury by role of the claim checker and the judge SmolLM2-135M (two-stage)" and ":" not in jury
