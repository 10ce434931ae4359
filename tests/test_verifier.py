"""The model-free verifier on real sentences of the sample contracts: what it must flag, and what it
must leave alone (a number written two ways, a quotation with an ellipsis, a correct paraphrase)."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.judging.paired_stress import VerifierRater, paired_stress_test, remember
from app.judging.standing import latest_figures
from app.judging.verification import VERIFIER, Verifier, stored_report
from app.project import Project
from models.checker.report import PointReport
from models.perturbations import TYPES
from models.verifier import Document, Source, verify_claim
from models.verifier.values import read_values
from models.vocabulary import Tag
from storage import judgements, raters


def check(project: Project, answer_id: str, claim: str) -> PointReport:
    """The verifier's verdict on one claim about the document of `answer_id`."""
    answer = project.answer(answer_id)
    assert answer is not None
    with project.sessions() as session:
        return Verifier(project.sessions).check(session, answer.document_id, claim, [(0, len(claim))])[0]


def checks_of(report: PointReport) -> list[str]:
    return [r["check"] for r in report.reasons]


def test_a_number_written_two_ways_agrees_and_a_changed_one_is_flagged(sample_project: Project) -> None:
    # Cybergy affiliate agreement: "upon thirty (30) days written notice to the other party".
    same = check(
        sample_project, "cuad-002", "Either party may terminate upon 30 days written notice to the other party."
    )
    assert same.verdict != "incorrect"
    changed = check(
        sample_project, "cuad-002", "Either party may terminate upon 60 days written notice to the other party."
    )
    assert changed.verdict == "incorrect"
    reason = changed.reasons[0]
    assert reason["check"] == "value_mismatch"
    assert reason["claim"] == "60 days"
    assert "30" in reason["document"]
    assert any("text2num" in n or "one number" in n for n in reason["normalisations"])


def test_a_changed_number_in_one_clause_of_a_compound_claim_is_flagged() -> None:
    # No passage holds half of the whole claim's words; the changed clause is about passage 2 alone.
    document = Document(
        [
            Source("p1", "To season a cast-iron pan, wash it in warm soapy water and dry it on the stove."),
            Source("p2", "Put the pan upside down in an oven heated to 450 degrees and bake it for one hour."),
            Source("p3", "Never soak a cast-iron pan or put it in the dishwasher, because it will rust."),
        ]
    )

    def verdict(claim: str):  # type: ignore[no-untyped-def]
        return verify_claim(claim, document, document.search(claim), [])

    right = verdict(
        "Wash the pan in soapy water and dry it on the stove, then bake it upside down at 450 degrees for one hour."
    )
    changed = verdict(
        "Wash the pan in soapy water and dry it on the stove, then bake it upside down at 450 degrees for two hours."
    )
    assert right.verdict != "incorrect"
    assert changed.verdict == "incorrect" and changed.passage == "p2"
    assert [(r.check, r.claim, r.document) for r in changed.reasons] == [("value_mismatch", "2 hours", "1 hour")]


def test_values_are_read_with_their_units() -> None:
    values = read_values(
        "a fee of $1.5 million within thirty (30) days, and fifteen percent (15%) from December 31, 2014"
    )
    assert {(v.kind, v.amount) for v in values.values} == {
        ("money", "1500000"),
        ("duration:days", "30"),
        ("percent", "15"),
        ("date", "2014-12-31"),
    }


def test_a_quotation_with_an_ellipsis_is_found_and_an_altered_one_is_a_misquote(sample_project: Project) -> None:
    faithful = (
        "“Any and all proprietary rights … in and to any Confidential Information shall be and remain with the "
        "Participants respectively”"
    )
    assert "misquote" not in checks_of(check(sample_project, "contractnli-000", faithful))
    altered = faithful.replace("remain with the Participants", "remain with the Mentor")
    report = check(sample_project, "contractnli-000", altered)
    assert report.verdict == "incorrect"
    assert checks_of(report) == ["misquote"]
    assert ["mentor", "participants"] in report.reasons[0]["differences"]


def test_a_dropped_negation_is_flagged(sample_project: Project) -> None:
    right = "Mentor shall not have any right, license, title or interest in or to any Confidential Information."
    assert check(sample_project, "contractnli-000", right).verdict != "incorrect"
    wrong = check(sample_project, "contractnli-000", right.replace("shall not have", "shall have"))
    assert wrong.verdict == "incorrect"
    assert checks_of(wrong) == ["negation"]


def test_a_correct_paraphrase_is_supported(sample_project: Project) -> None:
    report = check(sample_project, "cuad-025", "The Agreement is governed by the laws of the State of Florida.")
    assert report.verdict == "supported"
    assert report.passage is not None


def test_exclusive_for_non_exclusive_is_flagged(sample_project: Project) -> None:
    claim = (
        "Producer agrees that ConvergTV has the exclusive right to exercise the rights granted under this Agreement."
    )
    assert check(sample_project, "cuad-026", claim).verdict != "incorrect"
    flipped = check(sample_project, "cuad-026", claim.replace("exclusive", "non-exclusive"))
    assert "exclusivity" in checks_of(flipped)


def test_licensor_for_licensee_is_flagged(sample_project: Project) -> None:
    claim = "The license lets Licensee distribute the Licensed Content on the Licensee Site and Related Media."
    assert check(sample_project, "cuad-038", claim).verdict != "incorrect"
    swapped = check(sample_project, "cuad-038", claim.replace("Licensee Site", "Licensor Site"))
    assert "swapped_roles" in checks_of(swapped)


def test_a_missing_or_unrelated_section_is_a_bad_citation(sample_project: Project) -> None:
    claim = "The Agreement is governed by the laws of the State of Florida"
    missing = check(sample_project, "cuad-025", claim + " (Section 47.3).")
    assert checks_of(missing) == ["bad_citation"]
    unrelated = check(sample_project, "cuad-025", claim + " (Section 1).")
    assert checks_of(unrelated) == ["bad_citation"]


def test_a_section_cited_by_its_number_is_the_whole_section(sample_project: Project) -> None:
    # The merger agreement's Section 2.01 has no passage of its own; its clauses (a), (b)... hold the offer.
    quote = (
        "Merger Subsidiary shall “commence (within the meaning of Rule 14d-2 promulgated by the SEC under the 1934"
        " Act) the Offer to purchase any (subject to the Minimum Tender Condition) and all of the Shares”"
    )
    assert "bad_citation" not in checks_of(check(sample_project, "maud-000", quote + " (Section 2.01)."))
    # Section 10.01 (Termination) is named in the offer clause, but the quotation is not in it.
    wrong = check(sample_project, "maud-000", quote + " (Section 10.01).")
    assert checks_of(wrong) == ["bad_citation"]
    assert "not in the cited section" in wrong.reasons[0]["document"]


def test_a_title_the_cited_section_does_not_have_is_a_bad_citation(sample_project: Project) -> None:
    grant = "says “Licensor grants to Licensee an exclusive (save for rights reserved to Licensor hereunder)…license”"
    assert "bad_citation" not in checks_of(check(sample_project, "cuad-034", "Section 3.1 (Content License) " + grant))
    misnamed = check(sample_project, "cuad-034", "Section 11 (License Grant) " + grant)
    assert checks_of(misnamed)[0] == "bad_citation"
    assert "Miscellaneous" in misnamed.reasons[0]["document"]
    # The dataset's own answer cites 3.2 for words of 3.1: a real slip, caught.
    assert "bad_citation" in checks_of(check(sample_project, "cuad-034", "Section 3.2 (License Grant) " + grant))


def test_an_exception_in_the_passage_needs_review(sample_project: Project) -> None:
    claim = "Company grants MA the right to advertise, market and sell to corporate users and government agencies."
    report = check(sample_project, "cuad-000", claim)  # "Subject to the terms and conditions of this Agreement, ..."
    assert report.verdict == "needs_review"
    assert report.reasons[0]["check"] == "exception"


def test_an_exception_of_early_termination_does_not_hold_back_a_term_read_from_its_clause(
    sample_project: Project,
) -> None:
    # "... renewed for successive one (1) year periods unless otherwise terminated according to ... paragraph 18":
    # whether the term ends early never changes the length the clause gives it
    claim = "The agreement shall be automatically renewed for successive one (1) year periods, per the term clause."
    assert check(sample_project, "cuad-000", claim).verdict == "supported"
    two_years = check(sample_project, "cuad-000", claim.replace("one (1) year", "two (2) year"))
    assert two_years.verdict == "incorrect"


def test_verify_prints_the_issue_json_and_stores_a_rater(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", sample_project.url, "verify", "--answers", "cuad-002,contractnli-000", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [a["answer_id"] for a in data["answers"]] == ["cuad-002", "contractnli-000"]
    answer = sample_project.answer("cuad-002")
    assert answer is not None
    for point in data["answers"][0]["points"]:
        assert answer.text[point["start"] : point["end"]] == point["text"]
        assert point["verdict"] in ("supported", "quoted", "incorrect", "needs_review", "unconfirmed", "unverifiable")
        assert point["passage"] or point["verdict"] == "unverifiable"  # every other verdict shows its evidence
        for reason in point["reasons"]:
            assert {"check", "claim", "document", "passage", "normalisations"} <= set(reason)
    with sample_project.sessions() as session:
        rater = raters.rater_named(session, VERIFIER)
        assert rater is not None and rater.config["backend"] == "verifier"
        stored = judgements.data_points_of(session, "cuad-002", rater.id)
        report = stored_report(session, "cuad-002")
    flagged = [p for p in data["answers"][0]["points"] if p["verdict"] == "incorrect"]
    confirmed = [p for p in data["answers"][0]["points"] if p["verdict"] == "supported"]
    # and the quotations confirmed word for word that say nothing besides (issue 56)
    points = data["answers"][0]["points"]
    confirmed += [p for p in points if p["verdict"] == "quoted" and not p["quote"]["rest"] and not p["reasons"]]
    assert len([p for p in stored if p.tag is Tag.INCORRECT]) == len(flagged)
    assert len([p for p in stored if p.tag is Tag.CORRECT]) == len(confirmed)  # only the checker's sure ones
    assert len([p for p in stored if p.tag is None]) == len(stored) - len(flagged) - len(confirmed)
    assert report is not None and [p.verdict for p in report.points] == [
        p["verdict"] for p in data["answers"][0]["points"]
    ]


def test_verify_s_summary_counts_every_point_quotations_too(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """The summary line's counts add up to the points checked: a quotation confirmed word for word is a verdict
    too (contractnli-000 quotes its NDA)."""
    answers = ["--answers", "contractnli-000,cuad-002"]
    assert main(["--db", sample_project.url, "verify", *answers, "--json"]) == 0
    verdicts = [p["verdict"] for a in json.loads(capsys.readouterr().out)["answers"] for p in a["points"]]
    assert "quoted" in verdicts
    assert main(["--db", sample_project.url, "verify", *answers]) == 0
    summary = capsys.readouterr().out.strip().splitlines()[-2]
    counted = {verdict: int(n) for n, verdict in (part.split(" ") for part in summary.split(", "))}
    assert counted == {v: verdicts.count(v) for v in counted} and sum(counted.values()) == len(verdicts)


def test_the_paired_stress_test_reports_every_type_with_wilson_intervals(sample_project: Project) -> None:
    result = paired_stress_test(sample_project.sessions, [VerifierRater(sample_project.sessions)], limit=12, seed=3)
    figures = result["raters"][VERIFIER]
    assert set(figures["by_type"]) == set(TYPES)
    assert result["qualifying_points"] == figures["unperturbed"] > 0
    for kind, f in figures["by_type"].items():
        assert 0 <= f["caught"] <= f["trials"], kind
        if f["trials"]:
            lo, hi = f["ci"]
            assert lo <= f["recall"] <= hi
    assert figures["by_type"]["remove_point"]["caught"] == 0  # the verifier never proposes missing points
    remember(sample_project.sessions, result)
    with sample_project.sessions() as session:
        kept = latest_figures(session, VERIFIER)
    assert kept is not None and kept["unperturbed"] == figures["unperturbed"]
