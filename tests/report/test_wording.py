"""What the report's sections say: the answers with errors with their evidence and comments, what the
sample lacks said in words, no internal name, nothing said twice, redacted names gone, the appendix's
rubrics and triage outcomes once each, generators compared in one count each (issue 56, item 10)."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from app.export.formats import export
from app.export.redaction import Redaction
from app.project import Project
from storage.db import url_for_path

from .reading import COMMENT, OMISSION, REVIEWER, Rendered, cli_json


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


def test_redaction_removes_every_configured_name_from_the_pdf(reviewed_file: Path, tmp_path: Path) -> None:
    names = (REVIEWER, "Jane Doe", "DoiT", "ContractNLI annotators")
    rendered = Rendered(reviewed_file, tmp_path, Redaction(names))
    flat = " ".join(rendered.text.split())
    for secret in (*names, "Lima", "jane.doe", "403-689-3901", "fulucai"):
        assert secret.lower() not in flat.lower(), secret
        assert secret.lower() not in rendered.html.lower(), secret
    assert "[NAME]" in flat and "[EMAIL]" in flat and "[PHONE]" in flat


@pytest.mark.parametrize("which", ["sample", "reviewed"])
def test_no_sentence_is_said_twice(which: str, request) -> None:
    rendered: Rendered = request.getfixturevalue(which)
    body = [re.sub(r"^.*\n", "", page, count=1) for page in rendered.pages]  # less each page's running head
    text = " ".join(" ".join(body).split())
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z“])", text) if len(s.split()) >= 6]
    repeated = {s for s in sentences if sentences.count(s) > 1}
    assert not repeated, repeated


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


def test_generators_compared_say_worse_once(checked: Rendered, capsys) -> None:
    headings, rows = _table_after(checked.html.split('id="generators"', 1)[1], "</p>")
    assert [h for h in headings if "worse" in h] == ["Better / as good / worse"]  # and nowhere else
    (row,) = rows
    found = cli_json(checked.url, "compare long-form short-form", capsys)
    outcomes = row[headings.index("Better / as good / worse")]
    assert outcomes == f"{found['wins']} / {found['ties']} / {found['losses']}"
    assert row[-1] == str(len(found["regressions"])) and headings[-1] == "Questions with a regression"
    assert len(found["regressions"]) != found["losses"]  # two counts: the table must not call both "worse"


def test_agreement_is_read_from_the_most_conservative_figure_and_says_when_they_disagree() -> None:
    from app.export.report.gather import agreement_meaning, standing_words

    said = agreement_meaning(0.85, 0.9, 0.45, 0.66)  # issue 63: "almost perfect" from AC1 alone
    assert "moderate" in said and "almost perfect" not in said
    assert "by the most conservative figure (κ); AC1, κ, α do not agree." in said
    assert agreement_meaning(0.85, 0.9, 0.82, 0.83).endswith("almost perfect; the figures agree.")

    class Installed:  # a model the user installed, never measured here
        demonstration, real, figures = True, None, None

    assert standing_words(Installed()).startswith("never measured on this project")
