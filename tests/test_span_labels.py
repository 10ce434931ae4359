"""Span labels (RAGTruth, a ContractNLI truth.jsonl) imported as a rater's review: how the spans map
onto the answer's data points, what refuses a file, and that agreement and alignment count the rater."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from app.errors import InvalidInput
from app.figures import analytics
from app.ingest.datasets import import_dataset
from app.ingest.labels import LabelImportSummary, import_labels
from app.project import Project

REAL = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "real_errors" / "contractnli-dev"
DOCUMENT = (
    "1. Term\n\nThis Agreement lasts three years from the Effective Date.\n\n"
    "2. Governing Law\n\nThis Agreement is governed by the laws of New York.\n\n"
    "3. Obligations\n\nThe Recipient keeps the information secret and returns all copies on request.\n"
)
ANSWER = (
    "Yes. The NDA lasts three years from the Effective Date. It is governed by the laws of New York.\n\n"
    "The obligations include:\n- keeping the information secret;\n- returning all copies on request."
)
# The answer's own segmentation: five points, the last two read after their lead-in.
POINTS = [
    "Yes.",
    "The NDA lasts three years from the Effective Date.",
    "It is governed by the laws of New York.",
    "keeping the information secret;",
    "returning all copies on request.",
]
ANSWERS = ("nda-1", "nda-2", "nda-3")


@pytest.fixture
def nda(project: Project, tmp_path: Path) -> Project:
    """A project holding one short NDA and three answers about it, all with ANSWER's text."""
    folder = tmp_path / "nda"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "nda.txt").write_text(DOCUMENT, encoding="utf-8")
    lines = [
        {"id": id_, "document": "nda.txt", "question": f"What does the NDA say ({n})?", "answer": ANSWER}
        for n, id_ in enumerate(ANSWERS)
    ]
    _write(folder / "qa.jsonl", lines)
    import_dataset(project.sessions, folder)
    return project


def _write(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _span(text: str, label: str, after: int = 0) -> dict:
    start = ANSWER.index(text, after)
    return {"start": start, "end": start + len(text), "label": label}


def _import(project: Project, tmp_path: Path, spans: list[dict], rater: str = "ana") -> LabelImportSummary:
    line = {"answer_id": "nda-1", "rater": rater, "spans": spans}
    return import_labels(project, _write(tmp_path / "spans.jsonl", [line]))


def _labelled(project: Project, answer_id: str, rater: str) -> list[tuple[str, str, str]]:
    """(text, tag, rationale) of each of the rater's points on the answer, in answer order."""
    return [(p.text, p.tag.value, p.rationale) for p in project.data_points(answer_id)[rater]]


SUPPORTED = "outside every span: supported"


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        ([], {}),
        (
            [_span("three years", "contradicted")],
            {1: ("incorrect", "span label contradicted: 'three years'")},
        ),
        (
            [_span("New York", "unsupported")],
            {2: ("incorrect", "span label unsupported: 'New York'")},
        ),
        (
            [_span(POINTS[1], "supported"), _span("three years", "unsupported"), _span(POINTS[2], "supported")],
            {
                1: ("incorrect", "span label unsupported: 'three years'"),
                2: ("correct", f"span label supported: '{POINTS[2]}'"),
            },
        ),
        (
            [_span("Effective Date. It is governed", "contradicted")],
            {
                1: ("incorrect", "span label contradicted: 'Effective Date. It is governed'"),
                2: ("incorrect", "span label contradicted: 'Effective Date. It is governed'"),
            },
        ),
        (  # "Yes. " reaches the space before point 1; the other two hold only spaces of points 1 and 2
            [
                {"start": 0, "end": 5, "label": "unsupported"},
                _span(" ", "contradicted", after=5),
                _span(" ", "contradicted", after=ANSWER.index("governed")),
            ],
            {0: ("incorrect", "span label unsupported: 'Yes. '")},
        ),
        (
            [{"start": 0, "end": len(ANSWER), "label": "supported"}, _span("secret", "contradicted")],
            {
                **{i: ("correct", f"span label supported: '{ANSWER}'") for i in (0, 1, 2, 4)},
                3: ("incorrect", "span label contradicted: 'secret'"),
            },
        ),
    ],
    ids=[
        "no spans: all supported",
        "contradicted span inside a point",
        "unsupported span inside a point",
        "supported and error span on one point",
        "span across two points",
        "whitespace alone is no overlap",
        "overlapping spans with different labels",
    ],
)
def test_spans_map_onto_the_answers_points(nda: Project, tmp_path: Path, spans: list, expected: dict) -> None:
    summary = _import(nda, tmp_path, spans)
    assert summary.labels == summary.data_points_created == len(POINTS) and summary.raters_created == ["ana"]
    want = [(text, *expected.get(i, ("correct", SUPPORTED))) for i, text in enumerate(POINTS)]
    assert _labelled(nda, "nda-1", "ana") == want


def test_list_items_keep_their_lead_in_and_a_reimport_relabels_the_same_points(nda: Project, tmp_path: Path) -> None:
    _import(nda, tmp_path, [])
    again = _import(nda, tmp_path, [_span("returning", "unsupported")])
    assert again.data_points_created == 0 and nda.counts()["data_points"] == len(POINTS)
    points = nda.data_points("nda-1")["ana"]
    assert [p.tag.value for p in points] == ["correct"] * 4 + ["incorrect"]
    assert points[4].context == "The obligations include:"
    assert (points[4].span_start, points[4].span_end) == (ANSWER.index(POINTS[4]), len(ANSWER))


GOOD = {"answer_id": "nda-1", "rater": "ana", "spans": [_span("New York", "contradicted")]}


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ({"spans": [{"start": "5", "end": 10, "label": "supported"}]}, "span 1: 'start' and 'end' must be whole"),
        ({"spans": [{"start": 5, "end": 10.0, "label": "supported"}]}, "span 1: 'start' and 'end' must be whole"),
        ({"spans": [{"start": -1, "end": 4, "label": "supported"}]}, "span 1: needs 0 <= start < end, got -1-4"),
        ({"spans": [{"start": 10, "end": 10, "label": "supported"}]}, "span 1: needs 0 <= start < end, got 10-10"),
        ({"spans": [{"start": 10, "end": 5, "label": "supported"}]}, "span 1: needs 0 <= start < end, got 10-5"),
        (
            {"spans": [{"start": 5, "end": len(ANSWER) + 1, "label": "supported"}]},
            f"span 1: ends at {len(ANSWER) + 1}, past the answer's {len(ANSWER)} characters",
        ),
        (
            {"spans": [{"start": 0, "end": 4, "label": "hallucinated"}]},
            "span 1: 'label' must be supported, contradicted",
        ),
        (
            {
                "spans": [
                    {"start": 0, "end": 4, "label": "supported"},
                    {"start": 5, "end": 8, "text": "NDA", "label": "supported"},
                ]
            },
            "span 2: its text is not the answer's text at 5-8",
        ),
        ({"answer_id": "nope"}, "no answer 'nope' in the project"),
        ({"spans": {"start": 0, "end": 4}}, "field 'spans' must be a list"),
        ({"rater": None}, "no 'rater' on this line: give one, or name the rater with --rater"),
    ],
    ids=[
        "start not a number",
        "end not whole",
        "start below 0",
        "empty span",
        "end before start",
        "end past the answer",
        "unknown label",
        "text of another answer",
        "unknown answer",
        "spans not a list",
        "no rater",
    ],
)
def test_a_bad_span_line_is_named_and_nothing_is_written(nda: Project, tmp_path: Path, bad: dict, problem: str) -> None:
    before = nda.counts()
    path = _write(tmp_path / "spans.jsonl", [GOOD, {**GOOD, **bad}])
    with pytest.raises(InvalidInput, match=r"spans\.jsonl line 2: " + re.escape(problem)):
        import_labels(nda, path)
    assert nda.counts() == before
    assert nda.data_points("nda-1") == {}


def test_imported_spans_are_a_review_that_agreement_and_alignment_count(nda: Project, tmp_path: Path, capsys) -> None:
    """A judge and a second reviewer tag the points as data points; ana gives spans. Both figures
    pair ana's points with theirs by span and count exactly the tags the spans map to."""
    judge = {"nda-1": "cciic", "nda-2": "ccccc", "nda-3": "icici"}
    ben = {"nda-1": "ciccc", "nda-2": "ccccc", "nda-3": "ccccc"}
    spans = {
        "nda-1": [_span("three years", "contradicted")],  # ana: ciccc
        "nda-2": [],  # ccccc
        "nda-3": [_span("New York.", "unsupported"), _span("secret", "supported")],  # ccicc
    }
    ana = {"nda-1": "ciccc", "nda-2": "ccccc", "nda-3": "ccicc"}
    letters = {"c": "correct", "i": "incorrect"}

    def points(tags: str) -> list[dict]:
        return [{"text": text, "tag": letters[t]} for text, t in zip(POINTS, tags, strict=True)]

    lines = [{"answer_id": a, "rater": "j", "kind": "judge", "data_points": points(judge[a])} for a in ANSWERS]
    lines += [{"answer_id": a, "rater": "ben", "data_points": points(ben[a])} for a in ANSWERS]
    lines += [{"answer_id": a, "spans": spans[a], "sampled": True} for a in ANSWERS]
    path = _write(tmp_path / "labels.jsonl", lines)
    assert main(["--db", nda.url, "import-labels", str(path), "--rater", "ana", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sampled"] == len(ANSWERS)
    assert {a: "".join(tag[0] for _, tag, _ in _labelled(nda, a, "ana")) for a in ANSWERS} == ana

    aligned = analytics.alignment(nda, "j", "ana")
    want = np.zeros((4, 4), dtype=int)
    for a in ANSWERS:
        for h, j in zip(ana[a], judge[a], strict=True):
            want["ci".index(h), "ci".index(j)] += 1
    assert aligned["n_pairs"] == 15 and aligned["confusion_matrix"] == want.tolist()

    agreed = analytics.agreement(nda, ["ana", "ben"])
    pairs = [(x, y) for a in ANSWERS for x, y in zip(ana[a], ben[a], strict=True)]
    assert agreed["n_items"] == 15
    assert agreed["percent_agreement"] == pytest.approx(sum(x == y for x, y in pairs) / len(pairs))


REAL_IDS = ("cnli-0456-nda-1", "cnli-0456-nda-2", "cnli-0482-nda-2")  # unsupported, supported, contradicted


@pytest.mark.skipif(not REAL.is_dir(), reason="the shared ContractNLI dev set is not on this machine")
def test_a_contractnli_truth_file_is_imported_for_the_rater_named(project: Project, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "cnli"
    (folder / "documents").mkdir(parents=True)
    qa = [r for r in map(json.loads, (REAL / "qa.jsonl").read_text().splitlines()) if r["id"] in REAL_IDS]
    for record in qa:
        shutil.copy(REAL / "documents" / record["document"], folder / "documents")
    _write(folder / "qa.jsonl", qa)
    truth = tmp_path / "truth.jsonl"
    lines = [line for line in (REAL / "truth.jsonl").read_text().splitlines() if json.loads(line)["id"] in REAL_IDS]
    truth.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["--db", project.url, "import", str(folder)]) == 0
    before = project.counts()

    assert main(["--db", project.url, "import-labels", str(truth)]) == 2
    assert "truth.jsonl line 1: no 'rater' on this line" in capsys.readouterr().err
    assert project.counts() == before

    assert main(["--db", project.url, "import-labels", str(truth), "--rater", "contractnli"]) == 0
    for record, line in zip(qa, map(json.loads, lines), strict=True):
        (span,) = line["labels"]
        tag = "correct" if span["label"] == "supported" else "incorrect"
        # ContractNLI's span leaves out the verdict "Yes.": outside every span, it counts as supported.
        assert _labelled(project, record["id"], "contractnli") == [
            ("Yes.", "correct", SUPPORTED),
            (span["text"], tag, f"span label {span['label']}: '{span['text']}'"),
        ]
