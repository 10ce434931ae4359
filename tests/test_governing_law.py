"""Governing law is read as a value (issue 65): the jurisdiction an answer names against the one the
contract's governing-law clause chooses; another is contradicted with the contract's shown, the same one is
confirmed from that clause, and where the clauses choose two the claim is not confirmed."""

from __future__ import annotations

from collections.abc import Callable

from models.verifier import Document, Source, verify_claim


def _contract(*passages: str) -> Callable[[str], tuple[str, str]]:
    document = Document([Source(f"par_{i}", text) for i, text in enumerate(passages, start=1)])

    def verdict(claim: str) -> tuple[str, str]:
        result = verify_claim(claim, document, document.search(claim, 5), [])
        return result.verdict, result.summary

    return verdict


SUPPLY = _contract(
    "SUPPLY AGREEMENT between Acme Inc. and Beta LLC.",
    "12. Governing Law. This Agreement shall be governed by and construed in accordance with the laws of the State"
    " of New York, without regard to its conflict of laws principles.",
    "13. Notices. Notices shall be given in writing to the addresses above.",
)


def test_another_jurisdiction_is_contradicted_and_the_contracts_is_shown() -> None:
    verdict, summary = SUPPLY("The agreement is subject to the laws of California.")
    assert verdict == "incorrect"
    assert "California" in summary and "New York" in summary


def test_the_chosen_jurisdiction_is_confirmed_however_it_is_written() -> None:
    assert SUPPLY("The agreement is governed by the laws of the State of New York.")[0] == "supported"
    assert SUPPLY("Questions about the agreement are decided under New York law.")[0] == "supported"


def test_two_chosen_jurisdictions_leave_one_of_them_not_confirmed() -> None:
    both = _contract(
        "DISTRIBUTOR AGREEMENT between Principal and Distributor.",
        "15.1 This Distributor Agreement shall be exclusively governed, construed, enforced and controlled by the"
        " laws of the United States of America and of the State of Texas.",
    )
    assert both("The agreement is subject to the laws of Texas.")[0] == "needs_review"
    assert both("The agreement is subject to the laws of California.")[0] == "incorrect"


def test_a_jurisdiction_within_the_one_chosen_and_a_contract_that_chooses_none() -> None:
    english = _contract("This Agreement is governed by the laws of England and Wales.", "2. Term. One year.")
    assert english("The agreement is to be interpreted under the laws of England.")[0] == "supported"
    silent = _contract("SERVICES AGREEMENT between Acme Inc. and Beta LLC.", "2. Term. The term is one year.")
    assert silent("The agreement is subject to the laws of Delaware.")[0] != "supported"
