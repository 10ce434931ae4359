"""Citations written in answers resolve to passages of the answer's document."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.ingest.citations import find_citations
from app.ingest.documents import parse_document
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
