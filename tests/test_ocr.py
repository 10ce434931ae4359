"""A scanned contract (an image-only PDF of a real LegalBench-RAG contract) is read by OCR on import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli import main
from app.errors import InvalidInput
from app.ingest.documents import parse_document
from app.ingest.ocr import LOW_CONFIDENCE
from app.project import Project
from storage.db import url_for_path

DATASET = Path("/work/shared/datasets/legalbench_rag_qa")
if not DATASET.is_dir():
    DATASET = Path(__file__).resolve().parent.parent / "resources" / "sample"
CONTRACT = "DoiT-ICN-NonDisclosure-Agreement.txt"


def scan_of(text: str, path: Path, dpi: int = 200) -> Path:
    """Typeset `text`, then keep only a picture of each page: a PDF with no text layer, as a scanner makes."""
    from xml.sax.saxutils import escape

    import pdfplumber
    from reportlab.lib.pagesizes import LETTER
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    typed = path.with_suffix(".typed.pdf")
    style = getSampleStyleSheet()["BodyText"]
    paragraphs = [Paragraph(escape(line), style) for line in text.splitlines() if line.strip()]
    SimpleDocTemplate(str(typed), pagesize=LETTER).build(paragraphs)
    with pdfplumber.open(typed) as pdf:
        pages = [page.to_image(resolution=dpi).original.convert("L") for page in pdf.pages]
    pages[0].save(path, save_all=True, append_images=pages[1:], resolution=dpi)
    typed.unlink()
    return path


@pytest.fixture(scope="module")
def scanned_dataset(tmp_path_factory) -> Path:
    """The NDA's opening and clauses 1-2 as a one-page scan, with the real question whose answer cites Section 2."""
    folder = tmp_path_factory.mktemp("scanned")
    (folder / "documents").mkdir()
    text = (DATASET / "documents" / CONTRACT).read_text()
    scan_of(text[: text.index("\n3.")], folder / "documents" / "DoiT-NDA-scan.pdf")
    rows = [json.loads(line) for line in (DATASET / "qa.jsonl").read_text().splitlines()]
    row = next(r for r in rows if r["id"] == "contractnli-028")
    (folder / "qa.jsonl").write_text(json.dumps({**row, "document": "DoiT-NDA-scan.pdf"}) + "\n")
    return folder


def test_scanned_page_is_read_and_its_clause_cited(scanned_dataset: Path, tmp_path: Path, capsys) -> None:
    project = ["--project", str(tmp_path / "p.assay")]
    assert main([*project, "import", str(scanned_dataset)]) == 0
    assert "Traceback" not in capsys.readouterr().err  # its progress bar is drawn on a terminal only
    assert main([*project, "citations", "contractnli-028", "--json"]) == 0
    citations = json.loads(capsys.readouterr().out)
    section_2 = next(c for c in citations if c["target"] == "2")
    assert section_2["passages"], "Section 2 of the scan was not found"

    stored = Project.open(url_for_path(tmp_path / "p.assay"))
    try:
        passages = stored.passages(stored.answer("contractnli-028").document_id)
    finally:
        stored.close()
    clause = next(p for p in passages if p.citation_id == section_2["passages"][0])
    assert clause.section == "2"
    assert "No license under any trademark, patent, copyright" in clause.text
    # Every passage keeps OCR's confidence; a clean scan reads well above the warning line.
    assert all(p.ocr_confidence is not None and LOW_CONFIDENCE < p.ocr_confidence <= 1 for p in passages)


def test_scan_without_ocr_installed_says_how_to_get_it(scanned_dataset: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a machine without tesseract
    with pytest.raises(InvalidInput, match=r"DoiT-NDA-scan\.pdf: this PDF is a scan .* OCR is not installed"):
        parse_document(scanned_dataset / "documents" / "DoiT-NDA-scan.pdf")


def _tesseract_tsv(lines: list[str]) -> str:
    """Tesseract's TSV for one block and paragraph holding these lines, every word read at 90 %."""
    rows = ["level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"]
    rows.append("1\t1\t0\t0\t0\t0\t0\t0\t2550\t3300\t-1\t")
    for number, line in enumerate(lines, start=1):
        for word_number, word in enumerate(line.split(), start=1):
            rows.append(
                f"5\t1\t1\t1\t{number}\t{word_number}\t{100 * word_number}\t{400 + 60 * number}\t80\t40\t90\t{word}"
            )
    return "\n".join(rows) + "\n"


def test_a_numbered_section_starting_a_line_of_a_scan_starts_its_passage() -> None:
    """Tesseract puts a section and the lines above it in one paragraph; read as a text PDF is, each
    numbered section starting a line is a passage of its own, while "Section 4.2" wrapped onto a line
    of its own in mid-sentence stays where it is."""
    from app.ingest.documents import outline
    from app.ingest.ocr import _paragraphs
    from app.ingest.pdf_reading import _ocr_units

    tsv = _tesseract_tsv(
        [
            "7. Termination",
            "7.1 Either party may end this Agreement on thirty days notice, as set out in",
            "Section 4.2 of this Agreement.",
            "7.2 The Licensee shall return all copies on termination and the Licensor shall",
            "refund the fees paid in advance.",
            "8. Governing Law",
        ]
    )
    text, units = _ocr_units(_paragraphs(tsv, 1))
    passages = outline(text, units)
    starts = {p.section: p.text for p in passages}
    assert starts["7.1"].startswith("7.1 Either party") and starts["7.1"].endswith("Section 4.2 of this Agreement.")
    assert starts["7.2"].startswith("7.2 The Licensee") and starts["7.2"].endswith("paid in advance.")
    assert "8" in starts and "Governing Law" in starts["8"]
    assert all(p.ocr_confidence == 0.9 for p in passages)
