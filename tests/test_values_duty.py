"""A value agrees only with the statement of the same duty (issue 63, issue 65): "resolve the dispute within
30 days" is not "found in the document" because a "30 days" about another duty stands in the same section;
the document's own value for that duty contradicts it, and the lawyer is shown both; two values that compete
in the statement of that duty leave the claim not confirmed; a date the contract writes "the 1st day of June,
2020" is June 1, 2020."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli import main
from app.ingest.datasets import import_dataset
from app.project import Project
from models.verifier import Document, Source, verify_claim

DISPUTES = (
    "4.6 Dispute Resolution. The parties shall attempt in good faith to resolve any dispute within 15 days of "
    "written notice of the dispute. If the dispute is not resolved in that time, either party may, within 30 "
    "days after the end of that period, submit the dispute to binding arbitration."
)
CONTRACT = f"""CLOUD SERVICE AGREEMENT

This Agreement is dated as of the 1st day of June, 2020 between Acme Inc. ("Provider") and Beta LLC ("Customer").

3.2 Payment. Customer shall pay each invoice within 30 days of receipt.

{DISPUTES}

5.1 Delivery. Provider shall deliver the Equipment within 10 days or 20 days of the order, as the parties agree.
"""


def _verdict(claim: str) -> tuple[str, str]:
    passages = [Source(f"par_{i}", p) for i, p in enumerate(CONTRACT.split("\n\n"), start=1)]
    document = Document(passages)
    result = verify_claim(claim, document, document.search(claim, 5), [])
    return result.verdict, result.summary


def test_a_value_of_another_duty_in_the_same_section_confirms_nothing() -> None:
    verdict, summary = _verdict("The parties must resolve the dispute within 30 days.")
    assert verdict == "incorrect"
    assert "'30 days'" in summary and "'15 days'" in summary  # both values, for the lawyer to compare
    assert _verdict("The parties must try to resolve a dispute within 15 days.")[0] == "supported"
    assert _verdict("Either party may submit the dispute to arbitration within 30 days after that period.")[0] == (
        "supported"
    )


def test_values_that_compete_in_the_statement_of_the_duty_leave_the_claim_not_confirmed() -> None:
    verdict, summary = _verdict("Provider must deliver the Equipment within 10 days of the order.")
    assert verdict == "needs_review"
    assert "competing_values" in summary and "20 days" in summary


def test_a_date_written_as_the_first_day_of_june_is_june_1() -> None:
    assert _verdict("The agreement is dated June 1, 2020.")[0] == "supported"
    verdict, summary = _verdict("The agreement is dated June 1, 2021.")
    assert verdict == "incorrect" and "1st day of June, 2020" in summary


@pytest.fixture
def cloud_project(project: Project, tmp_path: Path) -> Project:
    folder = tmp_path / "cloud"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "cloud.txt").write_text(CONTRACT)
    rows = [
        {"id": "wrong", "document": "cloud.txt", "question": "How long do the parties have to resolve a dispute?",
         "answer": "The parties must resolve the dispute within 30 days of written notice of the dispute."},
        {"id": "dated", "document": "cloud.txt", "question": "When was the agreement made?",
         "answer": "The agreement is dated June 1, 2020."},
    ]  # fmt: skip
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_dataset(project.sessions, folder)
    return project


def test_the_claim_checker_never_calls_a_wrong_value_found_in_the_document(
    cloud_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole cascade, the contract checker by meaning included: a value read in its duty's statement
    stands over a model's "supported"."""
    assert main(["--db", cloud_project.url, "verify", "--json"]) == 0
    answers = {a["answer_id"]: a["points"] for a in json.loads(capsys.readouterr().out)["answers"]}
    (wrong,) = answers["wrong"]
    assert wrong["verdict"] == "incorrect"
    assert wrong["reasons"][0]["check"] == "value_mismatch" and wrong["reasons"][0]["document"] == "15 days"
    (dated,) = answers["dated"]
    assert dated["verdict"] == "supported"  # read, not guessed: the date the contract gives


def test_the_pane_says_the_contracts_value_first_and_which_reading_decided(
    cloud_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    from models.checker.report import PointReport
    from ui.review.verifier_flags import describe

    assert main(["--db", cloud_project.url, "verify", "--json"]) == 0
    answers = {a["answer_id"]: a["points"] for a in json.loads(capsys.readouterr().out)["answers"]}
    wrong = describe(PointReport.from_dict(answers["wrong"][0]))
    assert "The document says “15 days”; the answer says “30 days”" in wrong
    assert "Decided by the contract&#x27;s values, read" in wrong
    dated = describe(PointReport.from_dict(answers["dated"][0]))
    assert "found in the document" in dated and "June 1, 2020 agrees with the document" in dated


def test_a_term_given_by_its_length_ends_where_the_calendar_says() -> None:
    """'for twenty (20) years, commencing on January 1, 2016' ends on January 1, 2036 (or the day before);
    no statement writes that date, so it is computed (dateutil), and another end date is contradicted."""
    franchise = [
        Source("par_1", "FRANCHISE AGREEMENT made as of the 17th day of November, 2015 between Acme and Beta."),
        Source(
            "par_2", "2. TERM. The term of the Franchise shall be twenty (20) years, commencing on January 1, 2016."
        ),
        Source("par_3", "3. FEES. Franchisee shall pay a fee of $5,000 within 30 days of each anniversary."),
    ]
    document = Document(franchise)

    def verdict(claim: str) -> tuple[str, str]:
        result = verify_claim(claim, document, document.search(claim, 5), [])
        return result.verdict, result.summary

    assert verdict("The agreement expires on 1 January 2036.") == (
        "supported",
        "every check passed: 1 January 2036 is when the term of 20 years ends (par_2)",
    )
    assert verdict("The franchise term runs until December 31, 2035.")[0] == "supported"
    wrong, summary = verdict("The agreement expires on the 2nd day of January, 2036.")
    assert wrong == "incorrect" and "January 1, 2036 (the end of the term of" in summary


def test_a_rate_in_a_table_is_read_in_its_own_row() -> None:
    """A royalty schedule gives one rate a tier (CUAD's GoPage licence, as the shared set's answer reads
    it): 7.00% is the rate of 7,501 - 10,000 subscribers, not a rival of the tiers around it."""
    schedule = Source(
        "par_1",
        '5.2 Licensee shall pay a royalty to Licensor according to the following schedule ("Royalty Schedule"): '
        "Subscribers Royalty Payable as Percentage of Gross Revenue 0 - 5000 6.25% 5001 - 7500 6.75% "
        "7501 - 10,000 7.00% 10,001 - 15,000 8.00% 15,001 - 20,000 8.50%",
    )
    document = Document([schedule, Source("par_2", "5.3 Reports. Licensee shall report Gross Revenue quarterly.")])

    def verdict(claim: str) -> str:
        return verify_claim(claim, document, document.search(claim, 5), []).verdict

    assert verdict("7,501 – 10,000 subscribers: 7.00% of gross revenue") != "incorrect"
    assert verdict("10,001 – 15,000 subscribers: 8.00% of gross revenue") != "incorrect"
    assert verdict("7,501 – 10,000 subscribers: 8.50% of gross revenue") == "incorrect"
    assert verdict("5,001 – 7,501 subscribers: 6.75% of gross revenue") == "incorrect"  # the tier's bound, read


def test_a_date_the_contract_also_gives_for_the_same_event_is_no_contradiction() -> None:
    """A preamble's "made as of November 1, 2015" and the signatures' "Dated: December 14, 2015" both date the
    making: the preamble's dates the agreement; a claim of the signatures' is not confirmed (the values compete),
    never called wrong; a third date is."""
    pipeline = Document(
        [
            Source("par_1", "FIRM TRANSPORTATION AGREEMENT made as of November 1, 2015 between Acme and Beta."),
            Source("par_2", "1. SERVICE. Transporter shall receive and deliver up to 50,000 Dth a day."),
            Source("par_3", "ACME PIPELINE LLC By: /s/ J. Smith Dated: December 14, 2015"),
        ]
    )

    def verdict(claim: str) -> str:
        return verify_claim(claim, pipeline, pipeline.search(claim, 5), []).verdict

    assert verdict("The agreement is dated December 14, 2015.") == "needs_review"
    assert verdict("The agreement is dated March 3, 2016.") == "incorrect"
    assert verdict("The agreement was made on November 1, 2015.") == "supported"


def test_a_date_under_its_label_is_read_with_the_label() -> None:
    """'Termination Date: December 31, 2023' gives when the agreement ends: a claim of that date is confirmed
    from it, another end date is contradicted, and the effective date above it confirms nothing of the end."""
    purchase = Document(
        [
            Source("par_1", "SUPPLY CONTRACT between Buyer Corp. and Seller GmbH."),
            Source(
                "par_2", "AGREEMENT PERIOD\n\nEffective Date: January 1, 2019\n\nTermination Date: December 31, 2023"
            ),
            Source("par_3", "PAYMENT TERMS. Buyer shall pay each invoice by electronic funds transfer."),
        ]
    )

    def verdict(claim: str) -> str:
        return verify_claim(claim, purchase, purchase.search(claim, 5), []).verdict

    assert verdict("The initial term of the agreement ends on the 31st day of December, 2023.") == "supported"
    assert verdict("The agreement terminates on December 31, 2024.") == "incorrect"
    assert verdict("The agreement ends on January 1, 2019.") != "supported"


def _one(*passages: str) -> Callable[[str], str]:
    document = Document([Source(f"par_{i}", text) for i, text in enumerate(passages, start=1)])
    return lambda claim: verify_claim(claim, document, document.search(claim, 5), []).verdict


def test_a_month_the_document_gives_never_confirms_a_day_it_does_not() -> None:
    verdict = _one("SUPPLY AGREEMENT made in January 2018 between Acme Inc. and Beta LLC.", "1. Supply of goods.")
    assert verdict("The agreement was made in January 2018.") == "supported"
    assert verdict("The agreement was made on January 16, 2018.") not in ("supported", "incorrect")


def test_an_ordinal_a_scan_split_is_read_whole() -> None:
    verdict = _one("ODM SUPPLY AGREEMENT THIS AGREEMENT is made on the 15t h day of January 2018. BETWEEN: Acme Inc.")
    assert verdict("The agreement was made on January 15, 2018.") == "supported"
    assert verdict("The agreement was made on January 16, 2018.") == "incorrect"


def test_the_preamble_dates_the_agreement_not_another_contract_it_names() -> None:
    verdict = _one(
        'THIS NETWORK AFFILIATE AGREEMENT (this "Agreement") is made as of this 14th day of March, 2011 by and '
        "between National CineMedia, LLC and Digital Cinema Destinations Corp.",
        "Promotional activities arising under the Beverage Agreement with Pepsi dated January 1, 2011.",
    )
    assert verdict("The parties entered into the agreement on 03/14/2011.") == "supported"
    assert verdict("The parties entered into the agreement on 03/15/2011.") == "incorrect"


def test_a_claims_own_hedge_and_the_clauses_early_termination_leave_a_date_read() -> None:
    """A claim's "…, unless renewed or terminated earlier" weakens it; "subject to early termination" never changes
    the date the term clause gives: the date decides."""
    verdict = _one(
        "SERVICES AGREEMENT between Acme Inc. and Beta LLC.",
        '3. Term. The "Term" shall begin on the date hereof and shall expire December 31, 2023, subject to early '
        "termination pursuant to the terms of Section 19.",
    )
    assert verdict("The contract will expire on 2023-12-31, unless renewed or terminated earlier.") == "supported"
    assert verdict("The contract will expire on 2024-12-31, unless renewed or terminated earlier.") == "incorrect"


def test_a_date_alone_after_an_abbreviation_keeps_its_label() -> None:
    verdict = _one("TRANSPORTATION CONTRACT Date Bogota D.C. January 30, 2012 Contract No. VIT-005-2012")
    assert verdict("The agreement is dated January 30, 2012.") == "supported"
    assert verdict("The agreement is dated January 31, 2012.") == "incorrect"


def test_a_term_beginning_on_one_date_and_ending_on_another_is_read_as_its_start_and_end() -> None:
    """ "beginning" and "ending" name the start and the end of the term as "begins" and "ends" do."""
    verdict = _one(
        "HOSTING AGREEMENT between AstroNutrition.com and Deep Systems.",
        "2. Term. The effective term is 12 months beginning March 1, 2005 and ending February 28, 2006.",
    )
    assert verdict("The contract will expire on the 28th day of February, 2006.") == "supported"
    assert verdict("The contract will expire on the 28th day of February, 2007.") == "incorrect"
    assert verdict("The agreement's term begins on March 1, 2005.") == "supported"


def test_the_preamble_contradicts_an_effective_date_no_other_statement_gives() -> None:
    verdict = _one(
        'THIS LICENSE AND HOSTING AGREEMENT ("Agreement") is made effective as of the 17t h day of October, 2007'
        ' ("Effective Date"), by and between Transaction Applications Group, Inc. and Legacy Marketing Group, Inc.',
        "The first invoice shall be delivered within five (5) days after the Effective Date.",
    )
    assert verdict("The agreement became effective on 17 October 2008.") == "incorrect"
    assert verdict("The agreement became effective on 17 October 2007.") == "supported"


def test_a_date_the_contract_writes_elsewhere_is_doubted_not_called_wrong() -> None:
    """Which event a date is, the rules read from the words around it: "effective from its signature" does not
    say the date above it is the effective one. A claim of a date the contract writes is not confirmed nor called
    contradicted (the lawyer is shown the values that compete); a date it never writes is contradicted."""
    verdict = _one(
        "SERVICES AGREEMENT dated February 28, 2019 between Acme Inc. and Beta LLC.",
        "2.1 Term. This Agreement is effective from its signature and shall remain in effect until December 31, 2023.",
        "9. Notices. Notices shall be sent to Acme Inc., 1 Main Street.",
    )
    assert verdict("The contract is effective as of 02/28/2019.") == "needs_review"
    assert verdict("The agreement expires on February 28, 2019.") == "needs_review"
    assert verdict("The contract is effective as of 03/28/2019.") == "incorrect"
    assert verdict("The agreement expires on February 28, 2020.") == "incorrect"
    assert verdict("The agreement expires on December 31, 2023.") == "supported"
