"""The report's pages as a partner turns them: sections in order with the contents' page numbers, A4 or
letter, no page left with a few lines, figures that fit, names and answer ids whole on their lines, the
export dialog's preview of the first page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.project import Project
from app.workspace import Workspace
from storage.db import url_for_path

from .reading import SECTIONS, Rendered


@pytest.mark.parametrize("which", ["sample", "reviewed"])
def test_the_sections_come_in_order_and_the_contents_give_their_pages(which: str, request) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    starts = {}
    for number, page in enumerate(rendered.pages, start=1):
        for title in SECTIONS:  # a section's title is the first line under the running head of its first page
            if title not in starts and re.search(rf"^{re.escape(title)}$", page, re.MULTILINE):
                starts[title] = number
    assert list(starts) == SECTIONS, f"missing or out of order: {starts}"
    contents = rendered.pages[starts["Contents"] - 1]
    for title in SECTIONS:
        if title != "Contents":  # the table of contents names the page each section starts on
            assert re.search(rf"{re.escape(title)}[ .]*{starts[title]}\b", contents), title
    assert all(f"Page {n} of {len(rendered.pages)}" in page for n, page in enumerate(rendered.pages, 1))
    assert starts["Summary"] == 1 and starts["Contents"] == 2  # the summary holds on one page


def test_the_pdf_comes_on_a4_or_letter(sample: Rendered, sample_file: Path, tmp_path: Path) -> None:
    import pypdf

    out = tmp_path / "letter.pdf"
    assert main(["--db", url_for_path(sample_file), "export", "--format", "pdf", "--paper", "letter", str(out)]) == 0
    letter = pypdf.PdfReader(out).pages[0].mediabox
    a4 = pypdf.PdfReader(sample.pdf_path).pages[0].mediabox
    assert (round(float(letter.width)), round(float(letter.height))) == (612, 792)  # 8.5 × 11 in
    assert (round(float(a4.width)), round(float(a4.height))) == (595, 842)  # 210 × 297 mm


def _fill(pdf_path: Path) -> list[float]:
    """How far down its text area each page is written (0 empty, 1 full): its lowest mark."""
    import pdfplumber

    mm = 72 / 25.4
    shares = []
    with pdfplumber.open(pdf_path) as pdf:
        for page in pdf.pages:
            top, bottom = 18 * mm, page.height - 17 * mm  # the page margins: running head and foot outside
            marks = [*page.chars, *page.rects, *page.lines, *page.images, *page.curves]
            inside = [m["bottom"] for m in marks if m["top"] >= top - 2 and m["bottom"] <= bottom + 2]
            shares.append((max(inside, default=top) - top) / (bottom - top))
    return shares


@pytest.mark.parametrize("which", ["sample", "reviewed"])
def test_no_page_is_left_with_a_few_lines(which: str, request) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    shares = _fill(rendered.pdf_path)
    contents = next(n for n, page in enumerate(rendered.pages) if re.search(r"^Contents$", page, re.MULTILINE))
    for n, share in enumerate(shares):
        if n in (contents, len(shares) - 1):  # the contents stand alone on page 2; the last page ends the report
            continue
        assert share >= 1 / 3, f"page {n + 1} of {len(shares)} is {share:.0%} full: {rendered.pages[n][:300]!r}"
    assert shares[-1] >= 1 / 3, "the last page holds more than a reference or two"


def shown_ticks(ax: Any) -> list[Any]:
    """The tick labels drawn: with text, visible, and inside the axis' limits (matplotlib keeps others)."""
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    xs = [t for t in ax.get_xticklabels() if x0 <= t.get_position()[0] <= x1]
    ys = [t for t in ax.get_yticklabels() if y0 <= t.get_position()[1] <= y1]
    return [t for t in xs + ys if t.get_text() and t.get_visible()]


@pytest.mark.parametrize("paper", ["a4", "letter"])
def test_figures_fit_the_page_and_no_label_overlaps(reviewed_file: Path, paper: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from app.export.report.figures import TEXT_WIDTH, report_figures
    from app.figures import analytics as stats
    from app.figures.triage import triage
    from storage import analytics

    project = Project.open(url_for_path(reviewed_file))
    try:
        with project.sessions() as session:
            points = analytics.labelled_points(session)
        figures = report_figures(stats.scores(project), points, triage(project), paper)
    finally:
        project.close()
    assert [title for title, _, _ in figures] == ["Scores by rater", "Tags by rater", "What triage would let through"]
    for title, figure, _ in figures:
        assert figure.get_figwidth() <= TEXT_WIDTH[paper]  # shown at its true size: 8 pt stays 8 pt
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        texts = [t for ax in figure.axes for t in shown_ticks(ax)]
        texts += [t for ax in figure.axes for t in (ax.xaxis.label, ax.title) if t.get_text()]
        legends = [ax.get_legend() for ax in figure.axes if ax.get_legend()]
        boxes = [t.get_window_extent(renderer) for t in texts] + [g.get_window_extent(renderer) for g in legends]
        for i, box in enumerate(boxes):
            assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= figure.bbox.width + 1, title  # not cut at the edge
            assert box.y1 <= figure.bbox.height + 1, title
            for other in boxes[i + 1 :]:
                assert not box.overlaps(other), f"{title}: labels overlap"


@pytest.mark.parametrize("which", ["sample", "reviewed"])
def test_answer_ids_are_never_broken_across_lines(which: str, request) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    ids = re.findall(r'class="id">([^<]+)<', rendered.html)
    assert len(ids) > 30  # the appendix's answers, the answers with errors, the sign-offs
    lines = {line.strip() for page in rendered.pages for line in page.splitlines()}
    words = {word for line in lines for word in line.split()}
    for answer_id in set(ids):
        assert answer_id in words, f"{answer_id} is not whole on any line"
    broken = [w for w in words if w.endswith("-") and any(i.startswith(w) for i in ids)]  # "cnli-0015-" ends a line
    assert not broken, broken


def test_long_document_names_take_two_lines_at_most(checked: Rendered, checked_file: Path) -> None:
    from app.export.report.render import pdf_document

    project = Project.open(url_for_path(checked_file))
    names = set(project.document_titles().values())
    project.close()
    assert max(len(n) for n in names) > 80  # the sample's longest file names

    def boxes(box: Any) -> Any:
        yield box
        for child in getattr(box, "children", None) or []:
            yield from boxes(child)

    lines: dict[int, int] = {}
    shown: dict[int, str] = {}
    scores = checked.html.split('id="scores"', 1)[1].split("</section>", 1)[0]
    document = pdf_document(checked.html.split('<section id="scores">', 1)[0] + '<section id="scores">' + scores)
    for page in document.pages:
        for box in boxes(page._page_box):
            if type(box).__name__ == "TableCellBox" and box.element is not None:
                text = " ".join("".join(box.element.itertext()).split()).removeprefix("Document: ")
                if text in names:
                    key = id(box.element)
                    lines[key] = lines.get(key, 0) + sum(type(c).__name__ == "LineBox" for c in box.children)
                    shown[key] = text
    assert set(shown.values()) == names  # every document has its row
    assert all(n <= 2 for n in lines.values()), {shown[k]: n for k, n in lines.items() if n > 2}


def test_the_export_dialog_previews_the_first_page(qtbot, reviewed_file: Path, tmp_path: Path) -> None:
    from ui.export_dialog import NO_PAGES, ExportDialog

    project = Project.open(url_for_path(reviewed_file))
    try:
        dialog = ExportDialog(None, tmp_path, Workspace(project))
        qtbot.addWidget(dialog)
        dialog.show()
        assert dialog.preview.text() == NO_PAGES  # the first format, a workbook, has no pages to preview
        size = dialog.size()
        with qtbot.waitSignal(dialog.previewed, timeout=None):  # the event, however busy the machine
            dialog.format.setCurrentIndex(dialog.format.findData("pdf"))
        assert dialog.size() == size  # the dialog does not grow under the mouse as formats are tried
        page = dialog.preview.pixmap()
        assert dialog.preview.isVisible() and not page.isNull()
        assert page.height() / page.width() == pytest.approx(297 / 210, abs=0.01)  # an A4 page, whole
        image = page.toImage()
        dark = sum(
            image.pixelColor(x, y).lightness() < 160
            for x in range(0, page.width(), 3)
            for y in range(0, page.height(), 3)
        )
        assert dark > 100  # words on it, not a blank page
        assert dialog.out() == tmp_path / "assay-export.pdf"
        with qtbot.waitSignal(dialog.previewed, timeout=None):
            dialog.page_size.setCurrentIndex(dialog.page_size.findData("letter"))
        letter = dialog.preview.pixmap()
        assert letter.height() / letter.width() == pytest.approx(11 / 8.5, abs=0.01) and dialog.paper == "letter"
        dialog.reject()
    finally:
        project.close()
