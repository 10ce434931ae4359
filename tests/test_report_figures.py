"""The report's figures say what they count and over how many answers, and never score a rater on tags it
cannot give (issue 56, item 7)."""

from __future__ import annotations

from app.export.redaction import keep_everything
from app.export.report.gather import gather
from app.export.report.tables import CANNOT_TAG
from app.judging.verification import verify_project
from app.project import Project

CHECKED = ["contractnli-027", "contractnli-028", "contractnli-029", "cuad-006", "maud-005", "privacyqa-025"]


def test_the_checkers_headline_counts_the_answers_it_rated_and_is_not_an_error_rate() -> None:
    from app.export.report.gather import _headlines

    judge_only = {"estimate": 0.39, "ci": [0.31, 0.48]}
    metrics = {
        m: {"reviewed": 0, "judged": 126, "ppi": None, "judge_only": judge_only}
        for m in ("any_incorrect", "correctness")
    }
    headlines = _headlines({"groups": [{"metrics": metrics}]}, "the claim checker", 168)
    assert [h.words for h in headlines] == [  # with its article (issue 63 §7)
        "Answers in which the claim checker flagged a point",
        "Share of points the claim checker found correct",
    ]
    for h in headlines:
        said = "".join(p if isinstance(p, str) else p.text for p in h.basis)
        assert said.startswith("The claim checker alone, over the 126 answers it rated of the 168")
        assert "not an error rate" in said and not h.whole_set


def test_no_rater_is_scored_on_tags_it_cannot_give(sample_project: Project) -> None:
    verify_project(sample_project.sessions, CHECKED)
    report = gather(sample_project, keep_everything)
    rows = {row[0]: row for row in report.scores["rater"].rows}
    checker = rows["Claim checker"]
    assert checker[4] == CANNOT_TAG and checker[-1] == CANNOT_TAG  # relevance and missing: not its tags
    assert checker[1] == str(len(CHECKED)) and report.scores["rater"].caption
