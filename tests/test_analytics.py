"""Scores, agreement, judge alignment, triage and exports, checked against independent computations."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

from app.cli import main
from app.errors import InvalidInput
from app.figures import analytics
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.project import SAMPLE_DATASET, Project
from app.review.service import ReviewService
from models.segmentation import segment_answer
from models.vocabulary import Tag

from .test_raters import RAW_4RATERS

pytestmark = pytest.mark.every_store

TAGS = ["correct", "incorrect", "irrelevant"]


def test_gwet_ac1_matches_the_published_worked_example() -> None:
    """Gwet (2014), Handbook of Inter-Rater Reliability, 4 raters × 12 subjects with gaps:
    AC1 = 0.77544 (pa 0.81818, pe 0.19032), the figures irrCAC documents for the same data."""
    ratings = RAW_4RATERS
    table = np.array([[row.count(c) for c in range(1, 6)] for row in ratings], dtype=float)
    assert analytics.gwet_ac1(table) == pytest.approx(0.77544, abs=5e-6)
    stats = analytics.agreement_of(ratings, [1, 2, 3, 4, 5])
    assert stats["n_items"] == 11 and stats["percent_agreement"] == pytest.approx(0.81818, abs=5e-6)


def _write_labels(tmp_path: Path, project: Project, seed: int) -> tuple[Path, list[tuple[str, str]]]:
    """Two raters tagging the same segments of nine real answers; returns the file and the pairs."""
    rng = random.Random(seed)
    lines, pairs = [], []
    for answer in [a for a in project.answers() if a.document.startswith("DoiT")]:
        text = project.answer(answer.id).text
        segments = segment_answer(text)
        ana = [rng.choice(TAGS) for _ in segments]
        ben = [tag if rng.random() < 0.7 else rng.choice(TAGS) for tag in ana]
        for rater, tags in (("ana", ana), ("ben", ben)):
            points = [{"text": s.text, "tag": t} for s, t in zip(segments, tags, strict=True)]
            lines.append({"answer_id": answer.id, "rater": rater, "data_points": points})
        pairs += list(zip(ana, ben, strict=True))
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, pairs


def _json(capsys, *args: str) -> object:
    capsys.readouterr()
    assert main(list(args)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("raters", [2, 3, 4])
@pytest.mark.parametrize("ordinal", [False, True])
def test_krippendorff_alpha_equals_the_krippendorff_package(raters: int, ordinal: bool) -> None:
    """From the category table, as the package computes it from the ratings: to the last bit while
    units have two or three ratings, to 12 digits with four (the package rounds per unit)."""
    import krippendorff

    rng = np.random.default_rng(raters)
    truth = rng.integers(0, 5, size=(400, 1))
    codes = np.where(rng.random((400, raters)) < 0.7, truth, rng.integers(0, 5, size=(400, raters))).astype(float)
    codes[rng.random(codes.shape) < 0.3] = np.nan  # missing ratings: units rated 0 to `raters` times
    table = np.stack([(codes == k).sum(axis=1) for k in range(5)], axis=1)
    want = krippendorff.alpha(
        reliability_data=codes.T, level_of_measurement="ordinal" if ordinal else "nominal", value_domain=range(5)
    )
    got = analytics.krippendorff_alpha(table[table.sum(axis=1) >= 1], ordinal=ordinal)
    assert 0.3 < got < 0.9
    if raters <= 3:
        assert got == want
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=0)


def test_per_tag_figures_equal_sklearns() -> None:
    from sklearn.metrics import precision_recall_fscore_support

    rng = np.random.default_rng(4)
    for counts in (rng.integers(0, 50, (4, 4)), np.array([[5, 0, 0, 1], [0, 0, 0, 0], [2, 0, 3, 0], [0, 0, 0, 0]])):
        truth, predicted = np.divmod(np.arange(counts.size), 4)
        p, r, f, support = precision_recall_fscore_support(
            truth, predicted, labels=range(4), sample_weight=counts.ravel(), zero_division=0
        )
        want = [
            {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": int(support[i])}
            for i in range(4)
        ]
        assert analytics.per_tag(counts) == want


def test_cohen_kappa_and_percent_agreement_of_imported_labels(sample_project: Project, tmp_path: Path, capsys) -> None:
    from sklearn.metrics import cohen_kappa_score

    path, pairs = _write_labels(tmp_path, sample_project, seed=7)
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 0
    result = _json(capsys, "--db", sample_project.url, "agreement", "--raters", "ana,ben", "--json")
    a, b = zip(*pairs, strict=True)
    assert result["n_items"] == len(pairs)
    assert result["cohen_kappa"] == pytest.approx(cohen_kappa_score(a, b))
    assert result["percent_agreement"] == pytest.approx(sum(x == y for x, y in pairs) / len(pairs))
    for key in ("fleiss_kappa", "krippendorff_alpha", "gwet_ac1"):
        assert -1 <= result[key] <= 1
    assert set(result["by_source"]) == {"contractnli"}


def test_scores_equal_a_recomputation_from_the_exported_jsonl(sample_project: Project, tmp_path: Path, capsys) -> None:
    path, _ = _write_labels(tmp_path, sample_project, seed=3)
    import_labels(sample_project, path)
    # One answer only irrelevant and missing: correctness has no denominator.
    answer = sample_project.answer("contractnli-027")
    odd = tmp_path / "odd.jsonl"
    odd.write_text(
        json.dumps(
            {
                "answer_id": answer.id,
                "rater": "cleo",
                "markup": f"<irrelevant>{segment_answer(answer.text)[0].text}</irrelevant>"
                " <missing>The NDA survives 3 years.</missing>",
            }
        )
    )
    import_labels(sample_project, odd)
    rows = _json(capsys, "--db", sample_project.url, "scores", "--json")
    exported = tmp_path / "export.jsonl"
    assert main(["--db", sample_project.url, "export", "--format", "jsonl", str(exported)]) == 0

    def ratio(n: int, d: int) -> float | None:
        return n / d if d else None

    expected = {}
    for line in exported.read_text().splitlines():
        record = json.loads(line)
        counts = {
            t: sum(p["tag"] == t for p in record["data_points"])
            for t in ("correct", "incorrect", "irrelevant", "missing")
        }
        c = counts["correct"]
        p, r = ratio(c, c + counts["irrelevant"]), ratio(c, c + counts["missing"])
        f1 = None if p is None or r is None or p + r == 0 else 2 * p * r / (p + r)
        expected[(record["answer_id"], record["rater"])] = (ratio(c, c + counts["incorrect"]), p, r, f1)
    got = {(r["answer_id"], r["rater"]): (r["correctness"], r["precision"], r["recall"], r["f1"]) for r in rows}
    assert got.keys() == expected.keys()
    for key, values in expected.items():
        assert got[key] == pytest.approx(values), key
    assert got[("contractnli-027", "cleo")] == (None, 0.0, 0.0, None)


def test_round_trip_into_a_fresh_project_gives_the_same_scores(
    sample_project: Project, tmp_path: Path, new_project_url
) -> None:
    path, _ = _write_labels(tmp_path, sample_project, seed=11)
    import_labels(sample_project, path)
    exported = tmp_path / "export.jsonl"
    main(["--db", sample_project.url, "export", "--format", "jsonl", str(exported)])
    fresh = Project.open(new_project_url("fresh"))
    import_dataset(fresh.sessions, SAMPLE_DATASET)
    import_labels(fresh, exported)
    assert analytics.scores(fresh) == analytics.scores(sample_project)
    assert analytics.agreement(fresh, ["ana", "ben"]) == analytics.agreement(sample_project, ["ana", "ben"])
    fresh.close()


@pytest.mark.parametrize(
    ("second", "problem"),
    [
        ({"text": "y", "tag": "great"}, "data point 1: 'tag' must be"),
        ({"text": "y", "tag": {"a": 1}}, "data point 1: 'tag' must be"),
        (
            {"text": "y", "tag": "correct", "confidence": "high"},
            "data point 1: 'confidence' must be a number from 0 to 1",
        ),
        ({"text": "y", "tag": "correct", "span": [0, "5"]}, "data point 1: 'span' must be two offsets"),
        ({"text": "y", "tag": "missing", "citations": "par_1"}, "data point 1: 'citations' must be a list"),
    ],
    ids=["unknown tag", "tag not text", "confidence not a number", "span not offsets", "citations not a list"],
)
def test_bad_label_line_is_named_and_nothing_is_written(
    sample_project: Project, tmp_path: Path, second: dict, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"answer_id": "contractnli-027", "rater": "ana", "data_points": [{"text": "x", "tag": "missing"}]})
        + "\n"
        + json.dumps({"answer_id": "contractnli-027", "rater": "ana", "data_points": [second]})
    )
    with pytest.raises(InvalidInput, match=r"bad\.jsonl line 2: " + re.escape(problem)):
        import_labels(sample_project, path)
    assert sample_project.counts()["labels"] == 0


def _judge_and_review(project: Project, judge_tag: str, human_tags: list[Tag | None]) -> None:
    from app.judging.runs import run_judge
    from models.judge import LemajJudge, Mode

    from .test_judge import ScriptedBackendStandIn

    ids = [a.id for a in project.answers() if a.document.startswith("DoiT")][:3]
    outputs = [json.dumps({"tag": judge_tag})] * 100 + [json.dumps({"missing": []})] * 5
    run_judge(project.sessions, LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE), "judge", answer_ids=ids)
    reviewer = ReviewService(project, "ana")
    for answer_id in ids:
        state = reviewer.open(answer_id)
        for i, point in enumerate(state.points):
            reviewer.set_tag(answer_id, point.point.id, human_tags[i % len(human_tags)])
        reviewer.submit(answer_id)


def test_a_judge_that_never_flags_errors_looks_bad(sample_project: Project) -> None:
    _judge_and_review(sample_project, "correct", [Tag.CORRECT, Tag.INCORRECT])
    result = analytics.alignment(sample_project, "judge", "ana")
    assert result["per_tag"]["incorrect"]["recall"] == 0.0
    assert result["per_tag"]["correct"]["recall"] == 1.0
    assert 0.3 < result["accuracy"] < 0.7
    assert result["disagreements"] and all(d["human"] == "incorrect" for d in result["disagreements"])
    matrix = np.array(result["confusion_matrix"])
    assert matrix.sum() == result["n_pairs"] and matrix[1, 0] == len(result["disagreements"])


def test_triage_clears_by_the_rule_and_measures_misses(sample_project: Project, capsys) -> None:
    _judge_and_review(sample_project, "correct", [Tag.CORRECT, Tag.CORRECT, Tag.INCORRECT])
    result = _json(capsys, "--db", sample_project.url, "triage", "--target-miss-rate", "0.5", "--json")
    judged = {r["answer_id"]: r for r in analytics.scores(sample_project, raters=["judge"])}
    rule = sorted(a for a, r in judged.items() if r["correctness"] == 1 and r["f1"] is not None and r["f1"] >= 0.8)
    assert result["cleared"] == rule and len(rule) == 3
    assert set(result["flagged"]) == {a.id for a in sample_project.answers()} - set(rule)
    # The reviewer picked these answers: their reviews say nothing about the cleared answers at large.
    assert result["reviews_left_out"] == 3 and result["reviews_used"] == 0
    assert result["miss_rate"] is None and result["miss_rate_upper_95"] == 1.0
    assert result["recommended"]["reviews_needed"] > 0 and "no random sample" in result["reviews_basis"]


def test_xlsx_has_four_sheets_and_report_has_its_plots(sample_project: Project, tmp_path: Path) -> None:
    import pandas as pd

    _judge_and_review(sample_project, "correct", [Tag.CORRECT, Tag.IRRELEVANT])
    from app.export.formats import export

    sheets = pd.read_excel(export(sample_project, "xlsx", tmp_path / "set.xlsx"), sheet_name=None)
    assert set(sheets) == {"answers", "data_points", "agreement", "triage"}
    assert {"answer_id", "rater", "correctness", "f1"} <= set(sheets["answers"].columns)
    report = export(sample_project, "report", tmp_path / "report.html").read_text()
    assert report.count('<img src="data:image/svg+xml;base64,') == 3  # scores, tags, triage: vector figures
    assert export(sample_project, "pdf", tmp_path / "report.pdf").read_bytes().startswith(b"%PDF")
    finetune = export(sample_project, "finetune", tmp_path / "train.jsonl").read_text().splitlines()
    example = json.loads(finetune[0])
    assert [m["role"] for m in example["messages"]] == ["system", "user", "assistant"]
    assert json.loads(example["messages"][-1]["content"])["data_points"]
    csv = pd.read_csv(export(sample_project, "csv", tmp_path / "points.csv"))
    assert {"ana", "judge"} == set(csv["rater"])
