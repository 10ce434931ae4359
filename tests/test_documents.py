"""Documents become passages a lawyer can cite: ids, sections, headings, pages, footnotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.errors import InvalidInput
from app.ingest.documents import parse_document
from models.vocabulary import PassageKind

CONTRACT = """SERVICES AGREEMENT

ARTICLE IV
PAYMENT

4.1 Fees. The Customer shall pay the fees set out in the Order Form.

4.2 Late payment. Interest accrues at 1% per month on any amount
that remains unpaid after the due date, computed daily and compounded
monthly until paid in full.

(a) The Supplier may suspend the Services.

(b) The Supplier may terminate under Section 5.

Section 5 Termination

Either party may terminate this Agreement on 30 days' written notice.

6.3 Governing Law

This Agreement is governed by the laws of England.[^1]

[^1]: Without regard to its conflict of laws rules.
"""


def _by_text(passages, start: str):
    return next(p for p in passages if p.text.startswith(start))


def test_text_contract_gets_sections_headings_and_stable_ids(tmp_path: Path) -> None:
    path = tmp_path / "services.md"
    path.write_text(CONTRACT)
    doc = parse_document(path)

    assert [p.citation_id for p in doc.passages] == [f"par_{i}" for i in range(1, len(doc.passages) + 1)]
    fees = _by_text(doc.passages, "4.1 Fees")
    assert (fees.article, fees.section) == ("IV", "4.1")
    assert fees.heading_path.startswith("Article IV PAYMENT")
    # A hard-wrapped paragraph is one passage, not three.
    late = _by_text(doc.passages, "4.2 Late payment")
    assert late.text.endswith("until paid in full.")
    assert _by_text(doc.passages, "(b) The Supplier").section == "4.2(b)"
    assert _by_text(doc.passages, "Either party").section == "5"
    law = _by_text(doc.passages, "This Agreement is governed")
    assert law.section == "6.3" and "Governing Law" in law.heading_path
    # Headings shape the outline; they are not passages of their own.
    assert not any(p.text in ("PAYMENT", "Section 5 Termination", "6.3 Governing Law") for p in doc.passages)
    # Passage offsets point back into the original text.
    assert doc.text[late.char_start : late.char_end].startswith("4.2 Late payment")


def test_markdown_footnote_is_linked_to_the_passage_that_cites_it(tmp_path: Path) -> None:
    path = tmp_path / "services.md"
    path.write_text(CONTRACT)
    doc = parse_document(path)
    note = next(p for p in doc.passages if p.kind is PassageKind.FOOTNOTE)
    law = _by_text(doc.passages, "This Agreement is governed")
    assert note.footnote_label == "1"
    assert note.refers_to == law.citation_id
    assert note.section == "6.3"


def test_running_footers_and_page_numbers_are_not_passages(tmp_path: Path) -> None:
    clauses = ["Rent is due monthly.", "The tenant insures the goods.", "Notices are in writing.", "Law: Nevada."]
    pages = [f"{clause}\n\n{n}\n\nSource: ACME CORP, 10-Q, 5/20/2014\n" for n, clause in enumerate(clauses, 1)]
    path = tmp_path / "acme.txt"
    path.write_text("\n".join(pages))
    texts = [p.text for p in parse_document(path).passages]
    assert texts == clauses


def test_table_of_contents_is_kept_apart(tmp_path: Path) -> None:
    path = tmp_path / "nda.txt"
    path.write_text(
        "1 Eligibility ........................ 2\n10 Governing law ..................... 6\n\n"
        "10 Governing Law\nThis Agreement is governed by German law.\n"
    )
    doc = parse_document(path)
    assert [p.kind for p in doc.passages] == [PassageKind.TOC, PassageKind.TOC, PassageKind.PARAGRAPH]
    assert doc.passages[-1].section == "10"


def test_pdf_pages_headers_and_footnotes(tmp_path: Path) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = tmp_path / "lease.pdf"
    pdf = canvas.Canvas(str(path), pagesize=A4)
    width, height = A4
    for page in (1, 2, 3):
        pdf.setFont("Helvetica", 9)
        pdf.drawString(72, height - 40, "ACME LEASE - CONFIDENTIAL")
        pdf.drawString(width / 2, 30, f"Page {page} of 3")
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, height - 100, f"{page}.1 Rent. The tenant pays rent for period {page}.")
        if page == 2:
            pdf.drawString(72, height - 130, "2.2 Deposit. A deposit is held by the landlord")
            pdf.setFont("Helvetica", 6)
            pdf.drawString(72 + 232, height - 126, "7")
            pdf.setFont("Helvetica", 8)
            pdf.drawString(72, 80, "7 The deposit is held in a protected scheme.")
        pdf.showPage()
    pdf.save()

    doc = parse_document(path)
    texts = [p.text for p in doc.passages]
    assert not any("CONFIDENTIAL" in t or t.startswith("Page") for t in texts)
    rent2 = _by_text(doc.passages, "2.1 Rent")
    assert (rent2.page, rent2.section) == (2, "2.1")
    note = next(p for p in doc.passages if p.kind is PassageKind.FOOTNOTE)
    deposit = _by_text(doc.passages, "2.2 Deposit")
    assert note.footnote_label == "7" and note.refers_to == deposit.citation_id
    assert note.section == "2.2"


def test_pdf_without_text_layer_and_without_words_is_refused(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    path = tmp_path / "scan.pdf"
    pdf = canvas.Canvas(str(path))
    pdf.rect(100, 100, 200, 200, fill=1)  # an image-only page with no words for OCR to find
    pdf.showPage()
    pdf.save()
    with pytest.raises(InvalidInput, match=r"scan\.pdf: no text found in the document"):
        parse_document(path)


def test_docx_numbered_clauses(tmp_path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Confidentiality Agreement", level=1)
    document.add_paragraph("Each party keeps the other's information secret.", style="List Number")
    document.add_paragraph("The obligations survive termination for five years.", style="List Number")
    document.add_paragraph("Disclosure required by law is permitted.", style="List Number 2")
    path = tmp_path / "nda.docx"
    document.save(str(path))

    doc = parse_document(path)
    sections = {p.text: p.section for p in doc.passages}
    assert sections["1 Each party keeps the other's information secret."] == "1"
    assert sections["2 The obligations survive termination for five years."] == "2"
    assert sections["2.1 Disclosure required by law is permitted."] == "2.1"


def test_a_refusal_is_one_line_whatever_the_library_said() -> None:
    """pypdf quotes the byte it choked on ("Non-Ascii85 digit found: \\x1c"): the user still gets
    one line naming the file, not a message torn across lines (found by bench/fuzz_damaged.py)."""
    refused = InvalidInput("nda.pdf", "cannot read this pdf file (Non-Ascii85 digit found: \x1c\n\x0b)")
    assert str(refused).splitlines() == ["nda.pdf: cannot read this pdf file (Non-Ascii85 digit found: )"]


def test_unreadable_files_name_the_file(tmp_path: Path) -> None:
    latin = tmp_path / "old.txt"
    latin.write_bytes("Clause 1 - café".encode("latin-1"))
    with pytest.raises(InvalidInput, match=r"old\.txt: not UTF-8"):
        parse_document(latin)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4 this is not a pdf")
    with pytest.raises(InvalidInput, match=r"broken\.pdf: cannot read"):
        parse_document(broken)
    with pytest.raises(InvalidInput, match="unsupported document type"):
        parse_document(tmp_path / "contract.rtf")
