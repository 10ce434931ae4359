"""Citations written in answers resolve to passages of the answer's document, and the claim checker reads a
cited section as the section with its heading and every clause under it (issue 63)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.ingest.citations import find_citations
from app.ingest.datasets import import_dataset
from app.ingest.documents import parse_document
from app.judging.verification import Verifier
from app.project import Project
from storage.documents import Passage

from .test_documents import CONTRACT


def _passages(tmp_path: Path) -> list[Passage]:
    path = tmp_path / "services.md"
    path.write_text(CONTRACT)
    return [
        Passage(
            id=i,
            document_id=1,
            citation_id=p.citation_id,
            kind=p.kind,
            article=p.article,
            section=p.section,
            heading_path=p.heading_path,
            text=p.text,
            page=p.page,
            char_start=p.char_start,
            char_end=p.char_end,
            footnote_label=p.footnote_label,
            refers_to_id=None,
        )
        for i, p in enumerate(parse_document(path).passages)
    ]


@pytest.mark.parametrize(
    ("written", "first"),
    [
        ("[par_2]", "par_2"),
        ("see ¶ 4.1", "4.1 Fees"),
        ("Section 4.2(b) says", "(b) The Supplier may terminate"),
        ("Section 4.2(z) says", "4.2 Late payment"),  # no such sub-clause: the clause around it
        ("under § 6.3", "This Agreement is governed"),
        ("payable (4.1).", "4.1 Fees"),
        ("Article IV", "4.1 Fees"),
        ("Section\u00a05", "Either party"),
    ],
)
def test_each_written_form_resolves(tmp_path: Path, written: str, first: str) -> None:
    passages = _passages(tmp_path)
    by_id = {p.citation_id: p for p in passages}
    [citation] = find_citations(f"The answer says so {written}", passages)
    if first.startswith("par_"):
        assert citation.passages == (first,)
    else:
        assert by_id[citation.passages[0]].text.startswith(first)


def test_citation_to_a_clause_the_document_lacks_is_reported_unresolved(tmp_path: Path) -> None:
    [citation] = find_citations("As Section 9.9 provides", _passages(tmp_path))
    assert citation.target == "9.9" and not citation.resolved


def test_sample_answers_citations_resolve(sample_project: Project) -> None:
    """Over the real answers: every citation to a clause the contract has is found."""
    resolved = unresolved = 0
    for summary in sample_project.answers():
        answer = sample_project.answer(summary.id)
        passages = sample_project.passages(answer.document_id)
        for citation in find_citations(answer.text, passages):
            if citation.resolved:
                resolved += 1
                continue
            unresolved += 1
            # Answers were written from excerpts: an unresolved number must be absent from the contract.
            number = citation.target.split("(")[0]
            assert not any(p.section and p.section.split("(")[0] == number for p in passages), citation
    assert resolved > 100
    assert unresolved < resolved / 4


# ---------------------------------------------------------------- what the claim checker makes of a citation

# A cloud service agreement laid out as such contracts are: a section's heading on a line of its own
# ("10. Confidentiality", no full stop), its clauses each with a caption of their own.
SERVICE_TERMS = """Cloud Service Terms

1. Service

1.1. Access and Use. During a Subscription Period, Customer may access and use the Cloud Service.

1.2. Support. Provider will provide Support for the Cloud Service as the Order Form describes.

10. Confidentiality

10.1. Use and Nondisclosure. Recipient will use Discloser's Confidential Information only to exercise its
rights and fulfil its obligations under the Agreement, and will not disclose it to anyone else except its
Users who need to know it.

10.2. Exceptions. Confidential Information does not include information that Recipient already knew
without a duty of confidentiality, or that is or becomes public through no fault of Recipient.

10.3. Protection. Recipient will protect Discloser's Confidential Information using at least the same
protections it uses for its own similar information, and no less than a reasonable standard of care.

11. Term and Termination

11.1. Agreement Term. The Agreement starts on the Effective Date and continues until the end of all
Subscription Periods.

11.2. Termination for Cause. Either party may terminate the Agreement if the other party materially
breaches it and does not cure the breach within 30 days after notice.
"""


@pytest.fixture
def service_terms(project: Project, tmp_path: Path) -> Project:
    folder = tmp_path / "terms"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "terms.txt").write_text(SERVICE_TERMS)
    row = {"id": "csa-1", "document": "terms.txt", "question": "What must Recipient do?", "answer": "See the terms."}
    (folder / "qa.jsonl").write_text(json.dumps(row) + "\n")
    import_dataset(project.sessions, folder)
    return project


def _checks(project: Project, claim: str) -> list[str]:
    answer = project.answer("csa-1")
    assert answer is not None
    with project.sessions() as session:
        [report] = Verifier(project.sessions).check(session, answer.document_id, claim, [(0, len(claim))])
    return [r["check"] for r in report.reasons] + ([report.verdict] if report.verdict == "incorrect" else [])


def test_a_section_is_named_by_its_own_heading_not_only_its_clauses(service_terms: Project) -> None:
    # Issue 63: "Section 10 (Confidentiality)" was compared with 10.1-10.3's captions alone, and flagged.
    claim = (
        "Section 10 (Confidentiality) requires Recipient to protect Discloser's Confidential Information with "
        "no less than a reasonable standard of care."
    )
    assert "bad_citation" not in _checks(service_terms, claim)
    assert "bad_citation" not in _checks(service_terms, claim.replace("(Confidentiality)", "(Protection)"))
    # The same title given to a section headed otherwise is still a bad citation.
    assert "bad_citation" in _checks(service_terms, claim.replace("Section 10", "Section 11"))
    assert "bad_citation" in _checks(service_terms, claim.replace("Section 10", "Section 1"))


def test_a_label_or_an_example_in_quotation_marks_is_no_misquote(service_terms: Project) -> None:
    # Issue 63: the answer's own name for a rule, and an example, set off by quotation marks.
    label = (
        "Confidential Information excludes what Recipient already knew without a duty of confidentiality "
        "(the “Prior Knowledge” exception)."
    )
    assert "misquote" not in _checks(service_terms, label)
    example = (
        "The Agreement continues until the end of all Subscription Periods, so its end date (e.g. "
        "“December 31, 2024”) depends on the Order Form."
    )
    assert "misquote" not in _checks(service_terms, example)
    # A quotation of the contract with one word changed is still a misquote, short or long.
    quoted = "Recipient must use “no less than a reasonable standard of care” (Section 10.3)."
    assert "misquote" not in _checks(service_terms, quoted)
    assert "misquote" in _checks(service_terms, quoted.replace("reasonable standard", "commercial standard"))
    assert "misquote" in _checks(service_terms, "Either party may end it for a “Termination for Convenience”.")
