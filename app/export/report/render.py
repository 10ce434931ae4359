"""The report as HTML from the Jinja2 templates in resources/report/, and as PDF from that same HTML
with WeasyPrint (a CSS paged-media renderer: running headers, page numbers and the table of contents'
page numbers come from the stylesheet, `target-counter`, not from code).

Redaction: the gathered data is redacted where it is read, and every text the templates print passes
through the redaction once more (Jinja's `finalize`), so no field can slip past it; figures, which
are numbers, are printed as they are."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.export.report.content import SLICES, Number, Report
from app.export.report.gather import gather
from app.export.report.words import TAG_WORDS, share
from app.project import RESOURCES

TEMPLATES = RESOURCES / "report"
CALIBRATION = "Calibration of the judge's confidence"
PAPERS = {"a4": "A4", "letter": "letter"}
Redact = Callable[[Any], Any]
Step = Callable[[int, int, str], None]  # steps done, steps in all, the step now under way
STEPS = 4  # gathering the figures, drawing the plots, writing the HTML, laying out the PDF


def _quiet(_done: int, _total: int, _what: str) -> None:
    pass


def _environment(redact: Redact) -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
    from markupsafe import Markup

    def finalize(value: Any) -> Any:
        return redact(value) if isinstance(value, str) and not isinstance(value, Markup) else value

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html", "j2"]),
        undefined=StrictUndefined,
        finalize=finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["n"] = lambda number: _number(number, Markup)
    env.tests["figure"] = lambda value: isinstance(value, Number)
    env.filters["share"] = share
    env.filters["plural"] = lambda number, word: word if number.value == 1 else word + "s"
    return env


def _number(number: Number | None, markup: Any) -> Any:
    """A figure with where it comes from, for a reader of the HTML and for the tests."""
    if number is None:
        return markup("—")
    return markup(
        f'<span class="n" data-command="{html.escape(number.command)}" data-key="{html.escape(number.key)}" '
        f'data-value="{"" if number.value is None else number.value}">{html.escape(number.text)}</span>'
    )


def report_html(project: Any, redact: Redact, paper: str = "a4", on_step: Step = _quiet) -> str:
    """The whole report as one HTML file: figures and stylesheet inside it, so it opens anywhere, offline.
    `on_step` hears each step begin (a large project takes a minute)."""
    from app.export.report.figures import TEXT_WIDTH, data_uri, report_figures

    on_step(0, STEPS, "gathering the figures")
    report = gather(project, redact)
    on_step(1, STEPS, "drawing the plots")
    per_answer, points, triage, only = report.figures_data
    drawn = report_figures(per_answer, points, triage, paper, redact, cannot_tag=only)
    report.figures = [(title, data_uri(fig), caption) for title, fig, caption in drawn]
    if report.calibration:
        from app.figures.calibration import reliability_figure

        caption = "The share of the judge's tags a reviewer kept, against the confidence the judge gave them."
        report.figures.append((CALIBRATION, data_uri(reliability_figure(report.calibration)), caption))
    on_step(2, STEPS, "writing the report")
    return render(report, redact, paper, TEXT_WIDTH[paper])


def render(report: Report, redact: Redact, paper: str, text_width: float) -> str:
    env = _environment(redact)
    css = env.get_template("report.css.j2").render(page=PAPERS[paper], width=text_width, made=report.made_at)
    slices = [(by, f"By {by}") for by in SLICES]
    return env.get_template("report.html.j2").render(
        r=report, css=css, tag_words=TAG_WORDS, calibration=CALIBRATION, score_slices=slices
    )


def write_html(project: Any, out: Path, redact: Redact, paper: str = "a4", on_step: Step = _quiet) -> None:
    out.write_text(report_html(project, redact, paper, on_step), encoding="utf-8")
    on_step(STEPS, STEPS, "written")


def pdf_document(text: str) -> Any:
    """WeasyPrint's laid-out document of the report's HTML: its pages, ready to write or to preview."""
    from weasyprint import HTML  # type: ignore[import-untyped]

    return HTML(string=text, base_url=str(TEMPLATES)).render()


def write_pdf(project: Any, out: Path, redact: Redact, paper: str = "a4", on_step: Step = _quiet) -> None:
    text = report_html(project, redact, paper, on_step)
    on_step(3, STEPS, "laying out the pages")
    pdf_document(text).write_pdf(out)
    on_step(STEPS, STEPS, "written")


def first_page_png(project: Any, redact: Redact, paper: str = "a4", dpi: int = 110) -> bytes:
    """The PDF's first page (the summary) as a PNG: the export dialog's preview. WeasyPrint lays out the
    whole report (page 1 says how many pages follow); PDFium, Chrome's PDF renderer, rasterises the page."""
    import io

    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    document = pdf_document(report_html(project, redact, paper))
    first = pdfium.PdfDocument(document.copy([document.pages[0]]).write_pdf())
    try:
        image = first[0].render(scale=dpi / 72).to_pil()
    finally:
        first.close()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
