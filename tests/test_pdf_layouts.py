"""Real PDFs from pdfplumber's test suite (tests/fixtures/pdfs/README.md): columns, transcripts, passwords."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.errors import InvalidInput, PasswordRequired
from app.ingest.citations import find_citations
from app.ingest.documents import parse_document
from storage.documents import Passage

PDFS = Path(__file__).parent / "fixtures" / "pdfs"


@pytest.fixture(scope="module")
def federal_register():
    return parse_document(PDFS / "federal-register-2020-17221.pdf")


def test_three_columns_read_column_by_column(federal_register) -> None:
    text = " ".join(federal_register.text.split())
    # Column one's notice, read down its column rather than across the page.
    assert (
        "This section of the FEDERAL REGISTER contains notices to the public of the proposed issuance "
        "of rules and regulations." in text
    )
    # A paragraph running from the foot of column one to the top of column two stays one passage.
    comments = next(p for p in federal_register.passages if p.text.startswith("The FAA invites you"))
    assert "reference a specific portion of the proposal, explain the reason for any recommended change" in (
        comments.text
    )
    # Tightly set bold type keeps its spaces.
    assert "FOR FURTHER INFORMATION CONTACT:" in text and "FORFURTHER" not in text


def test_running_heads_page_numbers_and_rotated_margin_text_are_gone(federal_register) -> None:
    text = federal_register.text
    assert "Federal Register / Vol. 85" not in text  # the running head of every page
    assert "47699" not in text and "47700" not in text  # page numbers
    assert "VerDate" not in text  # the printer's slug in the bottom margin
    assert "jbell" not in text and "htiw" not in text  # rotated margin text, either way round
    assert federal_register.passages[-1].page == 15


def test_footnotes_follow_their_page_and_point_at_their_marker(federal_register) -> None:
    notes = [p for p in federal_register.passages if p.footnote_label]
    assert [p.footnote_label for p in notes[:9]] == [str(n) for n in range(1, 10)]
    note_5 = notes[4]
    assert note_5.text.startswith("5 Stall warning indication")
    marker = next(p for p in federal_register.passages if p.citation_id == note_5.refers_to)
    assert "airspeed disagree alert, and altitude disagree alert,5" in marker.text


def test_transcript_lines_are_cited_by_page_and_line() -> None:
    doc = parse_document(PDFS / "scotus-transcript-p1.pdf")
    opening = next(p for p in doc.passages if p.text.startswith("The above-entitled matter"))
    # Three numbered lines merged into one passage, cited the way lawyers cite a transcript.
    assert opening.text == (
        "The above-entitled matter came on for oral argument before the Supreme Court of the United States at 1:01 p.m."
    )
    assert opening.section == "1:12-14"
    # The margin numbers are line numbers, not sections; the header and footer are not text.
    assert all(p.section and ":" in p.section for p in doc.passages)
    assert "Alderson Reporting" not in doc.text and "Official - Subject" not in doc.text
    passages = [
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
            char_start=None,
            char_end=None,
            footnote_label=None,
            refers_to_id=None,
        )
        for i, p in enumerate(doc.passages)
    ]
    [citation] = find_citations("Argument began at 1:01 p.m. (Tr. 1:13).", passages)
    assert citation.passages == (opening.citation_id,)


def test_password_protected_pdf_asks_for_its_password() -> None:
    path = PDFS / "password-example.pdf"
    with pytest.raises(PasswordRequired, match=r"password-example\.pdf: this PDF is password-protected"):
        parse_document(path)
    with pytest.raises(PasswordRequired, match="the PDF password is wrong"):
        parse_document(path, password="guess")
    assert "Backup4all" in parse_document(path, password="test").text


def test_cli_import_names_the_protected_pdf_and_takes_its_password(tmp_path: Path, capsys) -> None:
    from app.cli import main

    dataset = tmp_path / "set"
    (dataset / "documents").mkdir(parents=True)
    (dataset / "documents" / "manual.pdf").write_bytes((PDFS / "password-example.pdf").read_bytes())
    row = {"id": "a1", "document": "manual.pdf", "question": "What is it?", "answer": "A backup tool."}
    (dataset / "qa.jsonl").write_text(json.dumps(row) + "\n")
    project = ["--project", str(tmp_path / "p.assay")]
    assert main([*project, "import", str(dataset)]) != 0
    assert "manual.pdf: this PDF is password-protected: give its password (--pdf-password manual.pdf=" in (
        capsys.readouterr().err
    )
    assert main([*project, "import", str(dataset), "--pdf-password", "manual.pdf=test"]) == 0
    assert "1 new document," in capsys.readouterr().out


def test_damaged_pdf_still_names_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 not really")
    with pytest.raises(InvalidInput, match=r"broken\.pdf: cannot read"):
        parse_document(broken)
