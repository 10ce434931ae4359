"""What the document pane tells a reviewer about where a passage came from: a weak OCR, a transcript line."""

from __future__ import annotations

from app.project import Passage
from models.vocabulary import PassageKind
from ui.review.document_view import DocumentView


def _passage(n: int, text: str, section: str | None = None, ocr: float | None = None) -> Passage:
    return Passage(
        id=n,
        document_id=1,
        citation_id=f"par_{n}",
        kind=PassageKind.PARAGRAPH,
        article=None,
        section=section,
        heading_path="",
        text=text,
        page=1,
        char_start=None,
        char_end=None,
        footnote_label=None,
        refers_to_id=None,
        ocr_confidence=ocr,
    )


def test_low_ocr_confidence_and_page_line_citations_are_shown(qtbot) -> None:
    view = DocumentView()
    qtbot.addWidget(view)
    view.show_document(
        1,
        [
            _passage(1, "The Tenant shall pay rent monthly.", "4", ocr=0.62),
            _passage(2, "The Landlord repairs the roof.", "5", ocr=0.95),
            _passage(3, "The above-entitled matter came on for oral argument.", "1:12-14"),
        ],
    )
    lines = view.toPlainText().splitlines()
    assert lines[0].startswith("[par_1] §4 p.1 ⚠ OCR 62%: check the scan")
    assert "OCR" not in lines[1]  # read well: nothing to warn about
    assert lines[2].startswith("[par_3] 1:12-14 p.1 ")  # a transcript's page:line, no section sign
