"""The report's first page (issue 35; issue 56, item 10): every figure of the summary is the command
line's, with where it comes from; the headlines, the raters and triage as the figures say; the title."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.export.formats import export
from app.project import Project
from storage.db import url_for_path

from .reading import REVIEWER, Rendered, cli_json

# ---------------------------------------------------------------- reading the summary


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
    if values.std() == 0:  # every answer the same score: the Wilson interval of that share, never no width
        from app.export.report.tables import wilson

        return wilson(float(values[0]), len(values))
    low, high = stats.t.interval(0.95, len(values) - 1, loc=values.mean(), scale=stats.sem(values))
    return max(0.0, low), min(1.0, high)


def shown_as(value: float, text: str) -> bool:
    """The words show the figure: a share in whole percent, a score to two decimals, a count exactly."""
    number = float(re.sub(r"[^\d.]", "", text))
    if text.endswith("%"):
        return abs(number - 100 * value) <= 0.5 + 1e-9
    return abs(number - value) <= 0.005 + 1e-9


# ---------------------------------------------------------------- the tests


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


def test_triage_names_its_rater_and_counts_from_one_result(checked: Rendered, capsys) -> None:
    from app.figures.rater_names import rater_name, rater_phrase

    triage = cli_json(checked.url, "triage", capsys)
    rated = next(r for r in cli_json(checked.url, "scores --by rater", capsys) if r["rater"] == triage["rater"])
    assert rated["answers"] < triage["judged"]  # it left every point of some answers undecided
    page = " ".join(checked.pages[0].split())
    name = rater_name(triage["rater"])
    assert f"Which judges. {name} (tags in {rated['answers']} answers)" in page
    assert (
        f"Triage reads the tags of {rater_phrase(triage['rater'])}, which judged {triage['judged']} answers and "
        f"tagged points in {rated['answers']} of them" in page
    )
    assert f"would clear {len(triage['cleared'])} of them" in page and "a judge tagged" not in page


def test_kinds_of_error_never_count_tags_a_rater_cannot_give(checked: Rendered) -> None:
    page = " ".join(checked.pages[0].split())
    kinds = page.split("Kinds of error found", 1)[1]
    assert "0 omissions" not in kinds and "0 irrelevant" not in kinds and "as missing" not in kinds
    assert "ContractNLI annotators found 14 incorrect claims (omissions and irrelevant points: —*)" in kinds
    assert "(missing points: —*)" in kinds and "—* cannot be found by these raters" in kinds


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


NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
NUMBER_WORDS |= {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def test_the_samples_title_counts_the_documents_the_report_counts(sample: Rendered) -> None:
    from app.judging.sample_tour import SAMPLE_MATTER

    counted = re.findall(r"\b(an?|\w+) (?:contracts?|privacy polic(?:y|ies)|documents?)\b", SAMPLE_MATTER)
    documents = re.search(r'data-key="documents" data-value="(\d+)"', sample.html)
    assert counted and documents
    assert sum(NUMBER_WORDS[w.lower()] for w in counted) == int(documents[1])  # 'eleven contracts and a privacy policy'
