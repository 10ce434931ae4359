"""Inputs that reach outside what they name, or never end (issue 57): a dataset's document path that
leaves its folder, PDF bombs, and packaging/verify_signoff.py given /dev/zero, a pipe or deep JSON.

Each is refused with one sentence. A PDF bomb is refused by a limit the code sets (pages, what a page
draws); the tests run it in a child process only so that a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from app.errors import InvalidInput
from app.ingest import pdf_reading
from app.ingest.datasets import read_dataset

ROOT = Path(__file__).resolve().parent.parent
VERIFY = ROOT / "packaging" / "verify_signoff.py"
HANG = 240  # seconds: only a bound on a hang; the limits refuse these files in moments


# ---------------------------------------------------------------- a dataset's document paths


def _dataset(folder: Path, document: str) -> Path:
    (folder / "documents").mkdir(parents=True, exist_ok=True)
    (folder / "documents" / "nda.txt").write_text("1. The parties agree.\n", encoding="utf-8")
    lines = [
        {"id": "a1", "document": "nda.txt", "question": "Who agrees?", "answer": "The parties."},
        {"id": "a2", "document": document, "question": "What is it?", "answer": "A secret."},
    ]
    (folder / "qa.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "document",
    ["/etc/passwd", "../secret.txt", "sub/../../secret.txt", "..\\secret.txt", "C:\\Windows\\win.ini", "//host/share"],
)
def test_a_document_path_outside_the_dataset_folder_is_refused_with_its_line(tmp_path: Path, document: str) -> None:
    dataset = _dataset(tmp_path / "dataset", document)
    (dataset / "secret.txt").write_text("the firm's secret\n", encoding="utf-8")  # what `..` reaches
    with pytest.raises(InvalidInput) as refused:
        read_dataset(dataset)
    assert str(refused.value) == (
        f"qa.jsonl line 2: field 'document': {document!r} is not a file name inside {dataset / 'documents'}"
    )


def test_a_link_to_a_file_outside_the_dataset_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the firm's secret\n", encoding="utf-8")
    dataset = _dataset(tmp_path / "dataset", "linked.txt")
    (dataset / "documents" / "linked.txt").symlink_to(secret)
    with pytest.raises(
        InvalidInput, match=r"qa.jsonl line 2: field 'document': 'linked.txt' is a link to a file outside"
    ):
        read_dataset(dataset)


def test_a_document_in_a_subfolder_or_linked_inside_is_still_read(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path / "dataset", "exhibits/a.txt")
    (dataset / "documents" / "exhibits").mkdir()
    (dataset / "documents" / "exhibits" / "a.txt").write_text("Exhibit A.\n", encoding="utf-8")
    (dataset / "documents" / "same.txt").symlink_to(dataset / "documents" / "nda.txt")
    rows, folder = read_dataset(dataset)
    assert [r.document for r in rows] == ["nda.txt", "exhibits/a.txt"] and folder == dataset / "documents"


# ---------------------------------------------------------------- PDF bombs


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (1 0 obj is the catalog), with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, start)
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    packed = zlib.compress(data, 9)
    return b"<< /Length %d /Filter /FlateDecode %s >>\nstream\n" % (len(packed), extra) + packed + b"\nendstream"


PAGE = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources 3 0 R >>"


def _content_bomb() -> bytes:
    """One page whose content stream, a few tens of KB packed, is 48 MB of drawing operators."""
    catalog, pages = b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>"
    return _pdf([catalog, pages, b"<< >>", _stream(b"q Q\n" * 12_000_000), PAGE])


def _form_bomb() -> bytes:
    """One page drawing a form a hundred times, which draws another a hundred times, and so on: a
    few KB that draw 8 GB."""
    catalog, pages = b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [5 0 R] /Count 1 >>"
    resources = b"<< /XObject << /X3 6 0 R >> >>"
    page_content = _stream(b"/X3 Do\n" * 100)
    forms = []
    for level in (3, 2, 1):
        inner = b"<< /XObject << /X%d %d 0 R >> >>" % (level - 1, 7 + len(forms))
        form = _stream(
            b"/X%d Do\n" % (level - 1) * 100, b"/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources " + inner
        )
        forms.append(form)
    leaf = _stream(b"q Q\n" * 2000, b"/Type /XObject /Subtype /Form /BBox [0 0 10 10]")
    return _pdf([catalog, pages, resources, page_content, PAGE, *forms, leaf])


def _page_bomb(count: int) -> bytes:
    """`count` blank pages."""
    kids = b" ".join(b"%d 0 R" % (3 + n) for n in range(count))
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"
    catalog, pages = b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count)
    return _pdf([catalog, pages, *[page] * count])


def _import_in_a_child(path: Path) -> str:
    """What importing the PDF says, from a child process a hang cannot stall the tests in."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom app.errors import InvalidInput\n"
        "from app.ingest.documents import parse_document\n"
        "try:\n    parse_document(Path(sys.argv[1]))\nexcept InvalidInput as exc:\n    print('refused:', exc)\n"
        "else:\n    print('imported')\n"
    )
    try:
        run = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=HANG, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path.name} was still being read after {HANG} s")
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr[-2000:]
    return run.stdout.strip()


def test_a_pdf_whose_page_draws_tens_of_megabytes_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(_content_bomb())
    assert bomb.stat().st_size < 200_000
    said = _import_in_a_child(bomb)
    assert said == f"refused: {bomb}: page 1 draws over 16 MiB of content: not a document's page (a PDF bomb)"


def test_a_pdf_of_nested_forms_drawn_a_million_times_is_refused(tmp_path: Path) -> None:
    bomb = tmp_path / "forms.pdf"
    bomb.write_bytes(_form_bomb())
    said = _import_in_a_child(bomb)
    assert said == f"refused: {bomb}: page 1 runs over 250,000 drawing operators: not a document's page (a PDF bomb)"


# Issue 62 §9: bytes alone do not bound a page's work. Each of these is refused in moments.

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _drawing(content: bytes, pages: int = 1, form: bytes | None = None) -> bytes:
    """`pages` pages sharing one content stream, with Helvetica as /F1 and `form` (if any) as /X."""
    catalog = b"<< /Type /Catalog /Pages 2 0 R >>"
    kids = b" ".join(b"%d 0 R" % (6 + n) for n in range(pages))
    tree = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages)
    resources = b"<< /XObject << /X 5 0 R >> /Font << /F1 4 0 R >> >>"
    extra = b"/Type /XObject /Subtype /Form /BBox [0 0 600 800] /Resources << /Font << /F1 4 0 R >> >>"
    form_object = _stream(form or b"", extra)
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R /Resources 3 0 R >>" % (6 + pages)
    return _pdf([catalog, tree, resources, FONT, form_object, *[page] * pages, _stream(content)])


def _text(characters: int) -> bytes:
    return b"BT /F1 8 Tf 10 10 Td (" + b"x" * characters + b") Tj ET"


DRAWINGS = {  # what the page does: (the PDF, what the refusal says)
    "a small form drawn 15,000 times a page (the sweep's 92 KB file: 245 s, 17 GB)": (
        _drawing(b"/X Do\n" * 15_000, pages=3, form=_text(60)),
        "draws forms over 2,000 times",
    ),
    "1,500 draws of a form of 60 characters (34 s, 2 GB)": (
        _drawing(b"/X Do\n" * 1_500, pages=3, form=_text(60)),
        "shows over 40,000 characters",
    ),
    "characters hidden in nested parentheses": (
        _drawing(b"BT /F1 8 Tf (" + b"(" * 20 + b"x" * 45_000 + b")" * 20 + b") Tj ET"),
        "shows over 40,000 characters",
    ),
    "30,000 lines": (_drawing(b"0 0 m 1 1 l S\n" * 30_000), "draws over 10,000 shapes"),
    "300,000 operators that draw nothing": (_drawing(b"q Q\n" * 150_001), "runs over 250,000 drawing operators"),
}


@pytest.mark.parametrize("what", list(DRAWINGS))
def test_a_page_that_makes_pdfminer_work_too_much_is_refused_in_moments(tmp_path: Path, what: str) -> None:
    import time

    data, says = DRAWINGS[what]
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(data)
    assert bomb.stat().st_size < 100_000
    started = time.monotonic()
    said = _import_in_a_child(bomb)
    assert said == f"refused: {bomb}: page 1 {says}: not a document's page (a PDF bomb)"
    assert time.monotonic() - started < 30


def test_a_dense_page_of_text_is_still_read(tmp_path: Path) -> None:
    lines = b"".join(b"(" + b"word " * 20 + b") '\n" for _ in range(100))  # 10,000 characters
    document = tmp_path / "dense.pdf"
    document.write_bytes(_drawing(b"BT /F1 6 Tf 10 780 Td 7 TL\n" + lines + b"ET"))
    text, units = pdf_reading.pdf_units(document)
    assert text.count("word") == 2_000 and units


def test_a_pdf_of_too_many_pages_is_refused_before_they_are_read(tmp_path: Path) -> None:
    bomb = tmp_path / "pages.pdf"
    bomb.write_bytes(_page_bomb(pdf_reading.MAX_PAGES + 1))
    said = _import_in_a_child(bomb)
    assert said == f"refused: {bomb}: it has over 5,000 pages; a PDF is read up to 5,000 pages"


def test_a_pdf_read_past_its_time_is_stopped_at_a_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The time limit, for what the other limits let through: given no time at all, the first page
    read stops it (the limit is the code's; the test only shortens it)."""
    document = tmp_path / "pages.pdf"
    document.write_bytes(_page_bomb(3))
    monkeypatch.setattr(pdf_reading, "SECONDS", -100)
    with pytest.raises(InvalidInput, match=r"reading it took over -70 s \(stopped at page 1 of 3\)"):
        pdf_reading.pdf_units(document)


# ---------------------------------------------------------------- verify_signoff.py


def _verify(path: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(VERIFY), str(path)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", ["/dev/zero", "fifo"])
def test_verify_signoff_refuses_a_device_or_a_pipe_at_once(tmp_path: Path, name: str) -> None:
    path = Path(name) if name.startswith("/") else tmp_path / name
    if name == "fifo":
        os.mkfifo(path)
    run = _verify(path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert (
        run.stderr.strip()
        == f"{path}: cannot be read: it is not a regular file (a device, a pipe or a folder): give a certificate file"
    )


def test_verify_signoff_refuses_a_huge_file_and_deep_json_in_one_sentence(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * 2_000_000)
    run = _verify(huge)
    assert (
        run.returncode == 2
        and run.stderr.strip() == f"{huge}: cannot be read: it is over 1,000,000 bytes: a certificate is a few KB"
    )
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    run = _verify(deep)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stdout.strip() == f"{deep}: NOT VALID: it is not a certificate (its JSON is nested too deeply)"
