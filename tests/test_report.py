"""The report a partner reads (issue 35): rendered once per project for the module, as HTML and PDF,
for the sample as it ships and for a project a reviewer worked on (a judge run, a random sample
reviewed, comments, an omission with its passage, a sign-off)."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.export.formats import export
from app.export.redaction import Redaction
from app.judging.sample_tour import import_sample
from app.project import Project
from models.vocabulary import Tag
from storage.db import url_for_path

SECTIONS = [
    "Summary",
    "Contents",
    "Method",
    "Scores",
    "Agreement between raters",
    "How far the judges can be trusted",
    "The answers with errors",
    "Sign-offs",
    "Appendix: full tables",
    "References",
]
REVIEWER = "Ana Lima"
COMMENT = "The NDA says the opposite in its second clause; call Jane Doe at jane.doe@fulucai.com or 403-689-3901."
OMISSION = "The agreement survives for three years after disclosure."


# ---------------------------------------------------------------- the projects, each rendered once


@pytest.fixture(scope="module")
def sample_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report-sample") / "sample.assay"
    project = Project.open(url_for_path(path))
    import_sample(project)
    project.close()
    return path


@pytest.fixture(scope="module")
def reviewed_file(sample_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample after a day's work: a judge tags ten answers, five of them drawn at random and
    reviewed (one point found incorrect with a comment, an omission added with its passage), one signed."""
    from app.judging.runs import run_judge
    from app.raters import set_default
    from app.review.sampling import draw_sample
    from app.review.service import ReviewService
    from models.judge import LemajJudge, Mode

    from .test_judge import ScriptedBackendStandIn

    path = tmp_path_factory.mktemp("report-reviewed") / "reviewed.assay"
    shutil.copy(sample_file, path)
    project = Project.open(url_for_path(path))
    drawn = list(draw_sample(project, 5, seed=7, actor=REVIEWER).answer_ids)
    others = [a.id for a in project.answers() if a.document.startswith("DoiT") and a.id not in drawn][:5]
    outputs = [json.dumps({"tag": "correct"})] * 400 + [json.dumps({"missing": []})] * 20
    judge = LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE)
    run_judge(project.sessions, judge, "judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard", answer_ids=drawn + others)
    # it calls every point correct, near chance on these labels: the lead chooses it to speak (app/raters.py)
    set_default(project.sessions, "judge:SmolLM2-135M-Instruct.Q4_1:two-stage:standard", REVIEWER)
    reviewer = ReviewService(project, REVIEWER)
    for n, answer_id in enumerate(drawn):
        state = reviewer.open(answer_id)
        for i, point in enumerate(state.points):
            wrong = n == 0 and i == 0
            reviewer.set_tag(answer_id, point.point.id, Tag.INCORRECT if wrong else Tag.CORRECT)
            if wrong:
                reviewer.comment_point(answer_id, point.point.id, COMMENT)
        if n == 1:
            detail = project.answer(answer_id)
            passage = project.passages(detail.document_id)[3]
            reviewer.add_missing(answer_id, OMISSION, [passage.citation_id])
            reviewer.comment_answer(answer_id, "Incomplete: the term of the obligations is left out.")
        reviewer.submit(answer_id)
    reviewer.sign_off(drawn[2])
    project.close()
    return path


class Rendered:
    def __init__(self, file: Path, out: Path, redact: Any = None) -> None:
        import pypdf

        self.url = url_for_path(file)
        project = Project.open(self.url)
        kwargs = {} if redact is None else {"redact": redact}
        self.html = export(project, "report", out / "report.html", **kwargs).read_text(encoding="utf-8")
        self.pdf_path = export(project, "pdf", out / "report.pdf", **kwargs)
        project.close()
        self.pages = [page.extract_text() for page in pypdf.PdfReader(self.pdf_path).pages]
        self.text = "\n".join(self.pages)


@pytest.fixture(scope="module")
def checked_file(sample_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample after the claim checker has read every answer (about a minute): every document and both
    generators have figures, as in the report of issue 56."""
    from app.judging.verification import verify_project

    path = tmp_path_factory.mktemp("report-checked") / "checked.assay"
    shutil.copy(sample_file, path)
    project = Project.open(url_for_path(path))
    verify_project(project.sessions, [a.id for a in project.answers()])
    project.close()
    return path


@pytest.fixture(scope="module")
def checked(checked_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return Rendered(checked_file, tmp_path_factory.mktemp("checked-report"))


@pytest.fixture(scope="module")
def sample(sample_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return Rendered(sample_file, tmp_path_factory.mktemp("sample-report"))


@pytest.fixture(scope="module")
def reviewed(reviewed_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    return Rendered(reviewed_file, tmp_path_factory.mktemp("reviewed-report"))


# ---------------------------------------------------------------- reading the HTML


class _Summary(HTMLParser):
    """The summary section's figures (spans of class n, with where they come from) and its other text."""

    def __init__(self) -> None:
        super().__init__()
        self.figures: list[dict[str, str]] = []
        self.words: list[str] = []
        self._depth = 0  # inside the summary section
        self._figure: dict[str, str] | None = None
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "section":
            self._depth = 1 if a.get("id") == "summary" else 0
        if not self._depth:
            return
        if tag == "span" and a.get("class") == "n":
            self._figure = {**a, "text": ""}
        if tag in ("style", "title") or {"meta", "label"} & set(a.get("class", "").split()):
            self._skip += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._figure is not None:
            self.figures.append(self._figure)
            self._figure = None
        elif tag == "section":
            self._depth = 0
        elif tag in ("p", "span") and self._skip:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if self._figure is not None:
            self._figure["text"] += data
        elif self._depth and not self._skip:
            self.words.append(data)


def summary_of(html: str) -> _Summary:
    parser = _Summary()
    parser.feed(html)
    return parser


def cli_json(url: str, command: str, capsys) -> Any:
    capsys.readouterr()
    assert main(["--db", url, *command.split(), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def at(value: Any, key: str) -> Any:
    for part in key.split("."):
        if part == "length":
            return len(value)
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def t_interval(rows: list[dict[str, Any]], rater: str, metric: str) -> tuple[float, float]:
    """The 95 % t interval of a rater's mean score over the answers of `assay scores --json`."""
    import numpy as np
    from scipy import stats

    values = np.array([r[metric] for r in rows if r["rater"] == rater and r[metric] is not None])
    if values.std() == 0:  # every answer the same score: no spread, no width
        return values[0], values[0]
    low, high = stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    return max(0.0, low), min(1.0, high)


def shown_as(value: float, text: str) -> bool:
    """The words show the figure: a share in whole percent, a score to two decimals, a count exactly."""
    number = float(re.sub(r"[^\d.]", "", text))
    if text.endswith("%"):
        return abs(number - 100 * value) <= 0.5 + 1e-9
    return abs(number - value) <= 0.005 + 1e-9


# ---------------------------------------------------------------- the tests


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


@pytest.mark.parametrize("which", ["sample", "reviewed", "checked"])
def test_every_figure_of_the_summary_is_the_command_lines(which: str, request, capsys) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    summary = summary_of(rendered.html)
    assert len(summary.figures) >= 12
    outputs: dict[str, Any] = {}
    for figure in summary.figures:
        command, key = figure["data-command"], figure["data-key"]
        if command not in outputs:
            outputs[command] = cli_json(rendered.url, command, capsys)
        if key.startswith("t_interval."):
            _, metric, row, end = key.split(".")
            rater = cli_json(rendered.url, "scores --by rater", capsys)[int(row)]["rater"]
            expected = t_interval(outputs[command], rater, metric)[int(end)]
        else:
            expected = at(outputs[command], key)
        assert float(figure["data-value"]) == pytest.approx(expected, abs=1e-12), (command, key)
        assert shown_as(expected, figure["text"]), (command, key, figure["text"])
    # No number in the summary's sentences comes from anywhere else (those of these words aside).
    loose = re.findall(r"\d+", re.sub(r"95 %|F1|AC1|from 0 to 1", "", " ".join(summary.words)))
    assert not loose, loose


def test_the_reviewed_project_has_headlines_with_intervals_and_a_triage_bound(reviewed: Rendered) -> None:
    summary = summary_of(reviewed.html)
    keys = {(f["data-command"], f["data-key"]) for f in summary.figures}
    # Five answers drawn at random, reviewed and judged: the prediction-powered estimate with its interval.
    assert ("estimate --by all", "groups.0.metrics.any_incorrect.ppi.ci.1") in keys
    assert ("triage", "miss_rate_upper_95") in keys and ("triage", "miss_rate_upper_95_by_document") in keys
    page = " ".join(reviewed.pages[0].split())
    assert "Answers with at least one incorrect point, whole set" in page and "no more than" in page
    assert f"Who reviewed. {REVIEWER} (tags in 5 answers), ContractNLI annotators (tags in 34 answers)" in page
    assert "SmolLM2-135M (two-stage)" in page  # the judge by its readable name


@pytest.mark.parametrize("which", ["sample", "reviewed"])
def test_no_internal_column_name_appears(which: str, request, capsys) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    internal = {"miss_rate_upper_95_by_document", "hours_saved_basis", "reviews_left_out", "gwet_ac1", "f1"}
    for command in ("triage", "scores", "scores --by rater", "agreement", "estimate --by all"):
        found = cli_json(rendered.url, command, capsys)
        rows = found if isinstance(found, list) else [found]
        internal |= {k for row in rows for k in row if "_" in k}
    visible = re.sub(r"<[^>]+>", " ", rendered.html.split("</style>", 1)[1])
    for name in sorted(internal):
        assert not re.search(rf"\b{name}\b", rendered.text), f"{name} in the PDF"
        assert not re.search(rf"\b{name}\b", visible), f"{name} in the HTML"
    assert "judge:SmolLM2" not in rendered.text  # raters by their readable names


def test_the_answers_with_errors_show_question_claim_evidence_and_comment(reviewed: Rendered, reviewed_file) -> None:
    project = Project.open(url_for_path(reviewed_file))
    try:
        with_comment = next(a for a in project.answers() if COMMENT in str(project.data_points(a.id)))
        with_omission = next(a for a in project.answers() if OMISSION in str(project.data_points(a.id)))
        cited = project.data_points(with_omission.id)[REVIEWER]
        passage_id = next(p for p in cited if p.text == OMISSION).citations[0]
        detail = project.answer(with_omission.id)
        passage = next(p for p in project.passages(detail.document_id) if p.citation_id == passage_id)
    finally:
        project.close()
    section = reviewed.html.split('id="errors"')[1].split("<section")[0]
    import html as html_module

    text = " ".join(html_module.unescape(re.sub(r"<[^>]+>", " ", section)).split())
    assert " ".join(with_comment.question.split()) in text and COMMENT in text
    assert " ".join(with_omission.question.split()) in text and OMISSION in text
    assert " ".join(passage.text.split())[:120] in text  # the evidence passage the reviewer cited
    assert "On the whole answer, Ana Lima: Incomplete: the term of the obligations is left out." in text
    signoffs = reviewed.html.split('id="signoffs"')[1].split("<section")[0]
    assert REVIEWER in signoffs and "No sign-offs" not in signoffs


def test_the_sample_says_what_it_lacks_in_words(sample: Rendered) -> None:
    text = " ".join(sample.text.split())
    assert "No sign-offs: no reviewer has signed a review in this project." in text
    assert "no generator recorded" in text  # the labelled NDAs name none
    assert "version 1 of the review guidelines" in text  # the sample ships the LeMAJ guidelines
    assert "Human labels by ContractNLI annotators" in text


def test_redaction_removes_every_configured_name_from_the_pdf(reviewed_file: Path, tmp_path: Path) -> None:
    names = (REVIEWER, "Jane Doe", "DoiT", "ContractNLI annotators")
    rendered = Rendered(reviewed_file, tmp_path, Redaction(names))
    flat = " ".join(rendered.text.split())
    for secret in (*names, "Lima", "jane.doe", "403-689-3901", "fulucai"):
        assert secret.lower() not in flat.lower(), secret
        assert secret.lower() not in rendered.html.lower(), secret
    assert "[NAME]" in flat and "[EMAIL]" in flat and "[PHONE]" in flat


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
    from storage import analytics

    project = Project.open(url_for_path(reviewed_file))
    try:
        with project.sessions() as session:
            points = analytics.labelled_points(session)
        figures = report_figures(stats.scores(project), points, stats.triage(project), paper)
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


def test_the_export_dialog_previews_the_first_page(qtbot, reviewed_file: Path, tmp_path: Path) -> None:
    from ui.export_dialog import ExportDialog

    project = Project.open(url_for_path(reviewed_file))
    try:
        dialog = ExportDialog(None, tmp_path, project)
        qtbot.addWidget(dialog)
        dialog.show()
        assert not dialog.preview.isVisible()  # the first format, a workbook, has no pages to preview
        with qtbot.waitSignal(dialog.previewed, timeout=120_000):
            dialog.format.setCurrentIndex(dialog.format.findData("pdf"))
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
        with qtbot.waitSignal(dialog.previewed, timeout=120_000):
            dialog.page_size.setCurrentIndex(dialog.page_size.findData("letter"))
        letter = dialog.preview.pixmap()
        assert letter.height() / letter.width() == pytest.approx(11 / 8.5, abs=0.01) and dialog.paper == "letter"
        dialog.reject()
    finally:
        project.close()


def test_the_pdf_comes_on_a4_or_letter(sample: Rendered, sample_file: Path, tmp_path: Path) -> None:
    import pypdf

    out = tmp_path / "letter.pdf"
    assert main(["--db", url_for_path(sample_file), "export", "--format", "pdf", "--paper", "letter", str(out)]) == 0
    letter = pypdf.PdfReader(out).pages[0].mediabox
    a4 = pypdf.PdfReader(sample.pdf_path).pages[0].mediabox
    assert (round(float(letter.width)), round(float(letter.height))) == (612, 792)  # 8.5 × 11 in
    assert (round(float(a4.width)), round(float(a4.height))) == (595, 842)  # 210 × 297 mm


def test_other_rubrics_come_in_the_appendix(sample_file: Path, tmp_path: Path) -> None:
    from models.vocabulary import OutcomeStatus, RaterKind
    from storage import raters, rubric_results
    from storage.judgements import JudgeOutcome

    path = tmp_path / "rubrics.assay"
    shutil.copy(sample_file, path)
    project = Project.open(url_for_path(path))
    try:
        answer = project.answers()[0].id
        outcome = JudgeOutcome(
            status=OutcomeStatus.JUDGED,
            attempts=1,
            error=None,
            raw_output="{}",
            passages_seen=(),
            prompt_tokens=10,
            completion_tokens=10,
            seconds=0.1,
        )
        with project.sessions.begin() as session:
            run = raters.add_rater(session, "judge:Qwen2.5-7B-Instruct.Q4_K_M:dece:standard", RaterKind.JUDGE, {}, "t")
            verdict = ("partially met", 0.5, {})
            rubric_results.save_rubric_result(session, run.id, answer, "dece", verdict, outcome, "t")
        html = export(project, "report", tmp_path / "r.html").read_text(encoding="utf-8")
    finally:
        project.close()
    appendix = html.split('id="appendix"')[1]
    assert "Other rubrics, answer by answer" in appendix
    assert f'<td class="id">{answer}</td><td>Qwen2.5-7B (dece)</td><td>dece</td><td>partially met</td>' in appendix


# ---------------------------------------------------------------- pages a partner turns


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


@pytest.mark.parametrize("which", ["sample", "reviewed"])
def test_no_sentence_is_said_twice(which: str, request) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    body = [re.sub(r"^.*\n", "", page, count=1) for page in rendered.pages]  # less each page's running head
    text = " ".join(" ".join(body).split())
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z“])", text) if len(s.split()) >= 6]
    repeated = {s for s in sentences if sentences.count(s) > 1}
    assert not repeated, repeated


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


def test_the_title_is_the_matter_set_for_the_project(sample: Rendered, sample_file: Path, tmp_path: Path, capsys):
    from app.judging.sample_tour import SAMPLE_MATTER

    assert sample.pages[0].lstrip().startswith(SAMPLE_MATTER)  # the first thing on the first page
    assert f"<title>{SAMPLE_MATTER} — " in sample.html
    assert all(f"{SAMPLE_MATTER} " in page for page in sample.pages[1:])  # the running head
    assert "sample.assay" not in sample.text

    path = tmp_path / "acme.assay"
    shutil.copy(sample_file, path)
    url = url_for_path(path)
    assert main(["--db", url, "title", "Acme v. Birch: NDA review"]) == 0
    assert capsys.readouterr().out.strip() == "Acme v. Birch: NDA review"
    project = Project.open(url)
    html = export(project, "report", tmp_path / "acme.html").read_text(encoding="utf-8")
    assert '<p class="title">Acme v. Birch: NDA review</p>' in html
    project.close()
    assert main(["--db", url, "title", "--clear"]) == 0
    assert "no name set" in capsys.readouterr().out
    project = Project.open(url)
    html = export(project, "report", tmp_path / "acme.html").read_text(encoding="utf-8")
    project.close()
    assert '<p class="title">acme</p>' in html  # the file's name, as a last resort
    assert main(["--db", url, "title", "  "]) == 2  # an empty name is refused, nothing changed


def test_an_imported_labels_note_is_no_reviewers_comment(sample: Rendered, reviewed: Rendered) -> None:
    for rendered in (sample, reviewed):
        section = rendered.html.split('id="errors"')[1].split("<section")[0]
        assert "span label" not in section and "outside every span" not in section


def test_a_judge_that_flags_every_correct_answer_is_not_called_measured() -> None:
    from app.export.report.gather import standing_words
    from app.judging.standing import Standing

    real = {"answers": 4, "with_errors": 2, "caught": 2, "recall": 1.0, "correct": 2, "false_alarms": 2}
    jury = Standing("jury:both:verifier+smol", "", False, None, {**real, "false_alarm_rate": 1.0})
    assert standing_words(jury) == "unreliable: flagged every correct answer"
    few = Standing("judge:big", "", False, None, {**real, "false_alarms": 0, "false_alarm_rate": 0.0})
    assert standing_words(few) == "rough: checked on 4 answers"


# ---------------------------------------------------------------- the report agrees with itself (issue 56, item 10)


def _prose(html: str) -> str:
    """The report's own sentences, a paragraph a line: no table, contents, heading, stylesheet, nor the
    answers with errors (they quote the dataset: a question asked of two contracts is asked twice)."""

    class Prose(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []
            self._skip: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            classes = dict(attrs).get("class") or ""
            if self._skip or tag in ("table", "nav", "style", "head", "h1", "h2", "h3") or "answer" in classes.split():
                self._skip.append(tag)
            if tag in ("p", "li", "div", "figcaption", "section"):
                self.parts.append("\n")

        def handle_endtag(self, tag: str) -> None:
            if self._skip and self._skip[-1] == tag:
                self._skip.pop()

        def handle_data(self, data: str) -> None:
            if not self._skip:
                self.parts.append(data)

    parser = Prose()
    parser.feed(html.split("<body>", 1)[1])
    return "".join(parser.parts)


@pytest.mark.parametrize("which", ["sample", "reviewed", "checked"])
def test_no_sentence_of_the_reports_own_is_said_twice(which: str, request) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    sentences = [
        sentence
        for paragraph in _prose(rendered.html).splitlines()
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(paragraph.split()))
        if len(sentence) > 40
    ]
    repeated = {s for s in sentences if sentences.count(s) > 1}
    assert not repeated, repeated


def test_triage_names_its_rater_and_counts_from_one_result(checked: Rendered, capsys) -> None:
    from app.figures.rater_names import rater_name

    triage = cli_json(checked.url, "triage", capsys)
    rated = next(r for r in cli_json(checked.url, "scores --by rater", capsys) if r["rater"] == triage["rater"])
    assert rated["answers"] < triage["judged"]  # it left every point of some answers undecided
    page = " ".join(checked.pages[0].split())
    name = rater_name(triage["rater"])
    assert f"Which judges. {name} (tags in {rated['answers']} answers)" in page
    assert (
        f"Triage reads the tags of {name}, which judged {triage['judged']} answers and tagged points in "
        f"{rated['answers']} of them" in page
    )
    assert f"would clear {len(triage['cleared'])} of them" in page and "a judge tagged" not in page


def test_kinds_of_error_never_count_tags_a_rater_cannot_give(checked: Rendered) -> None:
    page = " ".join(checked.pages[0].split())
    kinds = page.split("Kinds of error found", 1)[1]
    assert "0 omissions" not in kinds and "0 irrelevant" not in kinds and "as missing" not in kinds
    assert "ContractNLI annotators found 14 incorrect claims (omissions and irrelevant points: —*)" in kinds
    assert "(missing points: —*)" in kinds and "—* cannot be found by these raters" in kinds


def _table_after(html: str, title: str) -> tuple[list[str], list[list[str]]]:
    """The headings and rows of the first table after `title`."""
    import html as html_module

    table = html.split(title, 1)[1].split("<table", 1)[1].split("</table>", 1)[0]
    cells = lambda row, tag: [  # noqa: E731
        " ".join(html_module.unescape(re.sub(r"<[^>]+>", "", c)).split())
        for c in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", row, re.S)
    ]
    head, body = table.split("</thead>")
    return cells(head, "th"), [cells(row, "td") for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


@pytest.mark.parametrize("which", ["sample", "checked"])
def test_the_appendix_gives_each_triage_outcome_once(which: str, request) -> None:
    from app.figures.triage import SWEEP

    rendered: Rendered = request.getfixturevalue(which)
    appendix = rendered.html.split('id="appendix"', 1)[1]
    headings, rows = _table_after(appendix, "Triage: every rule tried")
    assert headings[-1] == "Rules" and sum(int(row[-1]) for row in rows) == len(SWEEP)
    if which == "sample":  # the checker clears the same answers under every rule: one row, not 33
        assert rows == [["0.50 – 1.00", "0.50 – 1.00", *rows[0][2:-1], str(len(SWEEP))]]
    thresholds: dict[tuple[str, ...], list[str]] = {}
    for row in rows:  # an outcome has more rows only where its rules are not every pair of two ranges
        thresholds.setdefault(tuple(row[2:-1]), []).append(row[0])
    assert all(len(t) == len(set(t)) for t in thresholds.values()), thresholds


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


def test_generators_compared_say_worse_once(checked: Rendered, capsys) -> None:
    headings, rows = _table_after(checked.html.split('id="generators"', 1)[1], "</p>")
    assert [h for h in headings if "worse" in h] == ["Better / as good / worse"]  # and nowhere else
    (row,) = rows
    found = cli_json(checked.url, "compare long-form short-form", capsys)
    outcomes = row[headings.index("Better / as good / worse")]
    assert outcomes == f"{found['wins']} / {found['ties']} / {found['losses']}"
    assert row[-1] == str(len(found["regressions"])) and headings[-1] == "Questions with a regression"
    assert len(found["regressions"]) != found["losses"]  # two counts: the table must not call both "worse"


NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
NUMBER_WORDS |= {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def test_the_samples_title_counts_the_documents_the_report_counts(sample: Rendered) -> None:
    from app.judging.sample_tour import SAMPLE_MATTER

    counted = re.findall(r"\b(an?|\w+) (?:contracts?|privacy polic(?:y|ies)|documents?)\b", SAMPLE_MATTER)
    documents = re.search(r'data-key="documents" data-value="(\d+)"', sample.html)
    assert counted and documents
    assert sum(NUMBER_WORDS[w.lower()] for w in counted) == int(documents[1])  # 'eleven contracts and a privacy policy'
