"""One data point, every rater's tag: judges and reviewers meet on the same points, agreement does not
depend on the order labels came in, the coefficients are the textbook's, and `judge --limit` is
the first N answers however often it is started (a real run, killed and restarted)."""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sklearn.metrics import cohen_kappa_score

from app.figures import analytics
from app.ingest.labels import import_labels
from app.judging.runs import run_judge
from app.project import SAMPLE_DATASET, Project
from app.review.service import ReviewService
from models.backends.llama_local import LlamaBackend
from models.identity import MATCH_THRESHOLD, PointContent, same_point
from models.judge import LemajJudge, Mode
from models.segmentation import segment_answer
from models.vocabulary import Tag
from ui.item_models import DataPointTableModel, tag_text

from .test_judge import first_outcome_or_exit

NDA = "DoiT-ICN-NonDisclosure-Agreement.txt"  # the shortest real contract: it fits a small context whole
TAGS = [t.value for t in Tag]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _dataset_order() -> list[dict]:
    lines = (SAMPLE_DATASET / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


# ---------------------------------------------------------------- the textbook

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed.: irrCAC's cac.raw4raters, 12 units, 4
# raters, missing ratings. Published (irrCAC README): percent agreement 0.8181818, AC1 0.77544,
# Fleiss' kappa 0.76117, Krippendorff's alpha 0.74342.
RAW_4RATERS = [
    [1, 1, None, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [None, 5, 5, 5],
    [None, None, 1, 1],
    [None, None, 3, None],
]


def test_gwet_four_rater_example_with_missing_ratings_to_four_decimals() -> None:
    stats = analytics.agreement_of(RAW_4RATERS, [1, 2, 3, 4, 5])
    assert stats["n_items"] == 11  # the unit rated once is not an item, but informs chance agreement
    assert stats["percent_agreement"] == pytest.approx(0.8181818, abs=5e-5)
    assert stats["gwet_ac1"] == pytest.approx(0.77544, abs=5e-5)
    assert stats["fleiss_kappa"] == pytest.approx(0.76117, abs=5e-5)
    assert stats["krippendorff_alpha"] == pytest.approx(0.74342, abs=5e-5)


def test_cohen_kappa_of_a_published_two_rater_table() -> None:
    # Gwet (2014) / irrCAC's cont3x3abstractors: two abstractors, 100 pregnancies, 3 categories.
    # Published: Cohen's kappa 0.7964094, Scott's pi 0.7962397, Gwet's AC1 0.8493305.
    table = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    pairs = [[a, b] for a in range(3) for b in range(3) for _ in range(table[a][b])]
    stats = analytics.agreement_of(pairs, [0, 1, 2])
    assert stats["n_items"] == 100 and stats["percent_agreement"] == pytest.approx(0.89)
    assert stats["cohen_kappa"] == pytest.approx(0.7964094, abs=5e-5)
    assert stats["fleiss_kappa"] == pytest.approx(0.7962397, abs=5e-5)  # two raters: Scott's pi
    assert stats["gwet_ac1"] == pytest.approx(0.8493305, abs=5e-5)


def test_textbook_example_through_import_and_the_cli(sample_project: Project, tmp_path: Path, capsys) -> None:
    """The 4-rater example as Assay labels (as /work/shared/checks/agreement_textbook.py writes them:
    categories 1-5 as correct/incorrect/irrelevant/irrelevant/incorrect) gives that script's figures."""
    from app.cli import main

    mapping = {1: "correct", 2: "incorrect", 3: "irrelevant", 4: "irrelevant", 5: "incorrect"}
    records = []
    for row, raw in zip(_dataset_order()[:12], RAW_4RATERS, strict=True):
        text = next(t.strip(" -•*\t") for t in row["answer"].splitlines() if len(t.strip()) > 12)
        records += [
            {"answer_id": row["id"], "rater": f"r{j + 1}", "data_points": [{"text": text, "tag": mapping[v]}]}
            for j, v in enumerate(raw)
            if v is not None
        ]
    import_labels(sample_project, _write(tmp_path / "tb.jsonl", records))
    assert main(["--db", sample_project.url, "agreement", "--raters", "r1,r2,r3,r4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # The check script's textbook formulas on these labels (its tb.json).
    assert result["n_items"] == 11
    assert result["percent_agreement"] == pytest.approx(0.8333333333333335, abs=1e-4)
    assert result["gwet_ac1"] == pytest.approx(0.7867456497593486, abs=1e-4)
    assert result["fleiss_kappa"] == pytest.approx(0.7456953642384108, abs=1e-4)


# ---------------------------------------------------------------- import order


def _two_raters(n_answers: int) -> tuple[list[dict], list[tuple[str, str]]]:
    """Two raters' labels on the answers' lines, some tagged `missing` (no span for the first to
    record them), bob agreeing with alice about 70 % of the time; and the pairs they form."""
    rng = random.Random(7)
    records, pairs = [], []
    for row in _dataset_order()[:n_answers]:
        lines = list(dict.fromkeys(t.strip(" -•*\t") for t in row["answer"].splitlines() if len(t.strip()) > 12))
        lines = lines[:6]
        alice = [rng.choices(TAGS, weights=[6, 1, 2, 1])[0] for _ in lines]
        bob = [t if rng.random() < 0.7 else rng.choice(TAGS) for t in alice]
        for rater, tags in (("alice", alice), ("bob", bob)):
            records.append(
                {
                    "answer_id": row["id"],
                    "rater": rater,
                    "data_points": [{"text": s, "tag": t} for s, t in zip(lines, tags, strict=True)],
                }
            )
        pairs += list(zip(alice, bob, strict=True))
    return records, pairs


def test_agreement_is_the_same_whatever_order_labels_are_imported(
    sample_project: Project, new_project_url, tmp_path: Path
) -> None:
    from app.ingest.datasets import import_dataset

    records, pairs = _two_raters(25)
    assert any(a == "missing" for a, _ in pairs) and any(b == "missing" for _, b in pairs)
    other = Project.open(new_project_url("reversed"))
    import_dataset(other.sessions, SAMPLE_DATASET)
    import_labels(sample_project, _write(tmp_path / "forward.jsonl", records))
    import_labels(other, _write(tmp_path / "reversed.jsonl", records[::-1]))
    forward = analytics.agreement(sample_project, ["alice", "bob"])
    backward = analytics.agreement(other, ["alice", "bob"])
    other.close()
    assert forward["n_items"] == backward["n_items"] == len(pairs)  # every shared point counts
    expected = cohen_kappa_score([a for a, _ in pairs], [b for _, b in pairs])
    assert forward["cohen_kappa"] == pytest.approx(expected) and backward["cohen_kappa"] == pytest.approx(expected)


def test_missing_points_are_one_point_by_words_and_passage(sample_project: Project, tmp_path: Path) -> None:
    answer = next(a for a in sample_project.answers() if a.document == NDA)
    omission = "The Recipient must return all Confidential Information on request."

    def label(rater: str, text: str, citation: str) -> dict:
        return {
            "answer_id": answer.id,
            "rater": rater,
            "data_points": [{"text": text, "tag": "missing", "citations": [citation]}],
        }

    records = [
        label("ana", omission, "par_5"),
        label("ben", "the recipient must return all confidential information on request", "par_5"),  # a variant
        label("cy", omission, "par_6"),  # the same words about another clause: another omission
    ]
    import_labels(sample_project, _write(tmp_path / "missing.jsonl", records))
    ab = analytics.agreement(sample_project, ["ana", "ben"])
    ac = analytics.agreement(sample_project, ["ana", "cy"])
    assert ab["n_items"] == 1 and ab["percent_agreement"] == 1.0
    assert ac["n_items"] == 0


def test_near_identical_points_match_at_the_measured_threshold_and_edits_do_not() -> None:
    """On the sample's real answers: a rater's variant of a point is the same point; a split half
    or a point merged with the next is not (bench/point_identity.py measures the threshold)."""
    checked = 0
    for row in _dataset_order()[:40]:
        segments = [s for s in segment_answer(row["answer"]) if len(s.text.split()) >= 6]
        for s, following in itertools.pairwise(segments):
            point = PointContent(s.text, None, None)
            variant = PointContent("  " + s.text.lower().replace("“", '"').rstrip(".") + " ", None, None)
            half = PointContent(" ".join(s.text.split()[: len(s.text.split()) // 2]), None, None)
            merged = PointContent(f"{s.text} {following.text}", None, None)
            assert same_point(point, variant), s.text
            assert not same_point(point, half) and not same_point(point, merged), s.text
            checked += 1
    assert checked > 50 and 80 <= MATCH_THRESHOLD <= 100


# ---------------------------------------------------------------- the judge after the review


def test_judge_run_after_a_review_tags_the_reviewers_points(qapp, sample_project: Project) -> None:
    answer = next(a for a in sample_project.answers() if a.document == NDA)
    ana = ReviewService(sample_project, "ana")
    state = ana.open(answer.id)  # no judge yet: ana starts from the segmentation of the answer
    assert state.points and all(p.judge_tag is None for p in state.points)
    for i, point in enumerate(state.points):
        state = ana.set_tag(answer.id, point.point.id, Tag.CORRECT if i % 2 == 0 else Tag.INCORRECT)

    judge = LemajJudge(LlamaBackend(context_tokens=4096, threads=2), Mode.TWO_STAGE, find_missing=False)
    summary = run_judge(sample_project.sessions, judge, "smol", answer_ids=[answer.id])  # the embedded model
    assert summary.judged == 1

    state = ana.state(answer.id)
    assert all(p.judge_tag is not None for p in state.points)  # beside each of ana's points
    assert all(p.judge == "smol" and any(t.rater == "smol" for t in p.others) for p in state.points)
    aligned = analytics.alignment(sample_project, "smol", "ana")
    assert aligned["n_pairs"] == len(state.points) > 0
    agreed = analytics.agreement(sample_project, ["smol", "ana"])
    assert agreed["n_items"] == len(state.points)
    same = sum(p.judge_tag is p.point.tag for p in state.points)
    assert agreed["percent_agreement"] == pytest.approx(same / len(state.points))

    # A second reviewer's tags sit beside ana's too, and a split point keeps the judge's tag as earlier.
    ben = ReviewService(sample_project, "ben")
    first = ben.open(answer.id).points[0]
    ben.set_tag(answer.id, first.point.id, Tag.IRRELEVANT)
    row = next(p for p in ana.state(answer.id).points if p.point.key == first.point.key)
    assert {t.rater: t.tag for t in row.others} == {"smol": first.judge_tag, "ben": Tag.IRRELEVANT}
    cut = row.point.text.index(" ", len(row.point.text) // 2)
    halves = ana.split(answer.id, row.point.id, cut).points[:2]
    for half in halves:  # another point now: no tag of its own, the tags of the point it replaced as context
        assert half.judge_tag is None and half.point.key != row.point.key
        assert {(t.rater, t.earlier) for t in half.others} == {("smol", True), ("ben", True)}

    model = DataPointTableModel()
    model.set_points(ana.state(answer.id).points)
    assert model.HEADERS[-1] == "ben"  # a column for every other rater who tagged these points
    assert model.index(0, 2).data() == f"({tag_text(first.judge_tag)}, before edit)"
    assert model.index(2, 2).data() == tag_text(state.points[1].judge_tag)  # unchanged: the judge's own


# ---------------------------------------------------------------- --limit


def test_limit_is_the_first_answers_in_dataset_order_even_after_sigkill(sample_project: Project) -> None:
    ids = [r["id"] for r in _dataset_order() if r["document"] == NDA][:4]
    path = sample_project.url.removeprefix("sqlite:///")
    sample_project.close()
    assay = str(Path(sys.executable).with_name("assay"))
    selection = ",".join(reversed(ids))  # the order given does not matter: the dataset's does
    command = [assay, "--project", path, "judge", "--answers", selection, "--name", "lim", "--context", "4096"]
    command += ["--no-missing"]

    def judged() -> set[str]:
        with sqlite3.connect(path) as db:
            return {a for (a,) in db.execute("SELECT answer_id FROM judge_outcomes WHERE status = 'judged'")}

    process = subprocess.Popen([*command, "--limit", "2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        first_outcome_or_exit(process, lambda: len(judged()) >= 1)  # the event, however busy the machine
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert len(judged()) == 1  # killed half-way
    again = subprocess.run([*command, "--limit", "2", "--json"], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert judged() == set(ids[:2]) and json.loads(again.stdout)["judged"] == 1
    same = subprocess.run([*command, "--limit", "2", "--json"], capture_output=True, text=True)
    assert json.loads(same.stdout)["judged"] == 0 and judged() == set(ids[:2])  # nothing new
    more = subprocess.run([*command, "--more", "1", "--json"], capture_output=True, text=True)
    assert json.loads(more.stdout)["judged"] == 1 and judged() == set(ids[:3])
