"""Triage bounds, the random review sample, estimates and calibration on the sample contracts, with
labels imported as another tool would hand them over (a judge for every answer, a reviewer for a
random sample), checked against counts made here from the labels themselves."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from app.cli import main
from app.export.formats import export
from app.project import SAMPLE_DATASET, Project
from storage import audit

from .test_analytics import _json


def _points(text: str) -> list[str]:
    seen, points = set(), []
    for line in text.splitlines():
        t = line.strip(" -•*\t")
        if len(t) > 12 and t not in seen:
            seen.add(t)
            points.append(t)
    return points[:5]


def _labels(project: Project, tmp_path: Path, *, seed: int = 11, sampled: int = 60, picked: int = 0) -> dict:
    """Judge `j` tags every answer (about 70 % all correct, with a confidence); reviewer `alice`
    reviews a random sample and finds a miss in one in eight judge-clean answers; `bob` reviews
    answers he picked (the judge-clean ones, where he finds nothing)."""
    rng = random.Random(seed)
    rows = [json.loads(line) for line in (SAMPLE_DATASET / "qa.jsonl").read_text(encoding="utf-8").splitlines()]
    answers = [(r["id"], r["answer"]) for r in rows if _points(r["answer"])]
    assert len(answers) == len(project.answers())
    sample = set(rng.sample([a for a, _ in answers], sampled))
    truth: dict = {"clean": set(), "missed": set(), "sample": sample, "picked": set()}
    lines = []
    for answer_id, text in answers:
        points = _points(text)
        clean = rng.random() < 0.7
        tags = ["correct"] * len(points)
        if not clean:
            tags[rng.randrange(len(points))] = "incorrect"
        else:
            truth["clean"].add(answer_id)
        confidences = [round(rng.uniform(0.6, 1.0), 3) for _ in points]
        lines.append(
            {
                "answer_id": answer_id,
                "rater": "j",
                "kind": "judge",
                "data_points": [
                    {"text": p, "tag": t, "confidence": c} for p, t, c in zip(points, tags, confidences, strict=True)
                ],
            }
        )
        if answer_id in sample:
            human = list(tags)
            if clean and rng.random() < 1 / 8:
                human[rng.randrange(len(points))] = "incorrect"
                truth["missed"].add(answer_id)
            lines.append(
                {
                    "answer_id": answer_id,
                    "rater": "alice",
                    "kind": "human",
                    "sampled": True,
                    "data_points": [{"text": p, "tag": t} for p, t in zip(points, human, strict=True)],
                }
            )
        elif clean and len(truth["picked"]) < picked:
            truth["picked"].add(answer_id)
            lines.append(
                {
                    "answer_id": answer_id,
                    "rater": "bob",
                    "kind": "human",
                    "data_points": [{"text": p, "tag": "correct"} for p in points],
                }
            )
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    truth["path"] = path
    return truth


def lines_of_sample() -> list[dict]:
    return [json.loads(line) for line in (SAMPLE_DATASET / "qa.jsonl").read_text(encoding="utf-8").splitlines()]


def overconfident_labels(tmp_path: Path, seed: int = 5) -> tuple[Path, set[str], list[dict]]:
    """A judge tagging every point correct with confidence 0.6–1.0, and a reviewer of a random
    sample of 100 answers who keeps each tag with probability 0.3 less than the judge claims."""
    rng = random.Random(seed)
    rows = lines_of_sample()
    sample = set(rng.sample([r["id"] for r in rows], 100))
    lines = []
    for r in rows:
        points = _points(r["answer"])
        confidence = [round(rng.uniform(0.6, 1.0), 3) for _ in points]
        judge = [{"text": p, "tag": "correct", "confidence": c} for p, c in zip(points, confidence, strict=True)]
        lines.append({"answer_id": r["id"], "rater": "j", "kind": "judge", "data_points": judge})
        if r["id"] in sample:
            kept = [rng.random() < c - 0.3 for c in confidence]
            human = [{"text": p, "tag": "correct" if k else "incorrect"} for p, k in zip(points, kept, strict=True)]
            lines.append({"answer_id": r["id"], "rater": "ana", "kind": "human", "sampled": True, "data_points": human})
    path = tmp_path / "overconfident.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path, sample, lines


@pytest.mark.every_store
def test_imported_labels_are_triaged_with_an_exact_bound_and_picked_reviews_left_out(
    sample_project: Project, tmp_path: Path, capsys
) -> None:
    from scipy.stats import binomtest

    truth = _labels(sample_project, tmp_path, picked=15)
    assert main(["--db", sample_project.url, "import-labels", str(truth["path"])]) == 0
    result = _json(capsys, "--db", sample_project.url, "triage", "--target-miss-rate", "0.05", "--json")

    assert result["judged"] == len(sample_project.answers())  # the imported judge counts as a run
    assert set(result["cleared"]) == truth["clean"]  # all-correct tags: correctness 1, F1 1
    reviewed_clean = truth["sample"] & truth["clean"]
    assert result["reviewed_cleared"] == len(reviewed_clean)
    assert result["missed"] == len(truth["missed"])
    exact = binomtest(result["missed"], result["reviewed_cleared"], alternative="less")
    assert result["miss_rate_upper_95"] == pytest.approx(exact.proportion_ci(0.95, "exact").high)
    assert result["miss_rate_upper_95_by_document"] > 0
    assert result["cleared_share"] == pytest.approx(len(truth["clean"]) / result["judged"])
    # Bob's 15 picked reviews found nothing; counting them would flatter the judge.
    assert result["reviews_used"] == 60 and result["reviews_left_out"] == 15
    # One in eight clean answers is missed: 5 % cannot be signed; the report says what it would take.
    recommended = result["recommended"]
    assert result["reviews_needed"] == recommended["reviews_needed"] > 0
    assert "more random reviews" in recommended["reason"]

    loose = _json(capsys, "--db", sample_project.url, "triage", "--target-miss-rate", "0.35", "--json")
    chosen = loose["recommended"]
    assert chosen["miss_rate_upper_95"] <= 0.35 and loose["reviews_needed"] is None
    fields = ("cleared_share", "hours_saved", "reviewed_cleared", "missed", "miss_rate_upper_95_by_document")
    assert set(fields) | {"reviews_used"} <= set(chosen) and chosen["reviews_used"] == 60
    assert chosen["cleared_share"] >= result["cleared_share"]
    # No review time recorded: hours saved are not made up, and the report says what to give.
    assert result["hours_saved"] is None and "--minutes-per-answer" in result["hours_saved_basis"]
    timed = _json(capsys, "--db", sample_project.url, "triage", "--minutes-per-answer", "6", "--json")
    assert timed["hours_saved"] == pytest.approx(len(truth["clean"]) * 6 / 60)


@pytest.mark.every_store
def test_a_random_sample_is_seeded_recorded_and_only_its_reviews_back_the_bound(
    sample_project: Project, tmp_path: Path, capsys
) -> None:
    from app.review.service import ReviewService

    first = _json(capsys, "--db", sample_project.url, "sample", "--size", "12", "--seed", "5", "--json")
    again = _json(capsys, "--db", sample_project.url, "sample", "--size", "12", "--seed", "5", "--json")
    assert len(first["answer_ids"]) == 12 and not set(first["answer_ids"]) & set(again["answer_ids"])
    assert again["population"] == first["population"] - 12
    with sample_project.sessions() as session:
        drawn = [e.payload for e in audit.audit_entries(session) if e.action == "sample.drawn"]
    assert [(d["seed"], d["answers"]) for d in drawn] == [(5, first["answer_ids"]), (5, again["answer_ids"])]

    labels = _labels(sample_project, tmp_path, sampled=1)
    judge_only = [json.loads(line) for line in labels["path"].read_text().splitlines()]
    labels["path"].write_text("\n".join(json.dumps(r) for r in judge_only if r["rater"] == "j") + "\n")
    assert main(["--db", sample_project.url, "import-labels", str(labels["path"])]) == 0
    reviewer = ReviewService(sample_project, "ana")
    in_sample = set(first["answer_ids"]) | set(again["answer_ids"])
    picked = [a.id for a in sample_project.answers() if a.id not in in_sample][:3]  # reviewed, never drawn
    for answer_id in first["answer_ids"][:6] + picked:
        for point in reviewer.open(answer_id).points:
            reviewer.set_tag(answer_id, point.point.id, point.judge_tag)  # agrees with the judge
        reviewer.submit(answer_id)
    result = _json(capsys, "--db", sample_project.url, "triage", "--json")
    assert result["reviews_used"] == 6 and result["reviews_left_out"] == len(picked)
    assert result["missed"] == 0 and result["miss_rate_upper_95"] == pytest.approx(
        1 - 0.05 ** (1 / result["reviewed_cleared"])
    )


def test_estimates_per_source_give_ppi_beside_judge_and_human_alone(
    sample_project: Project, tmp_path: Path, capsys
) -> None:
    truth = _labels(sample_project, tmp_path, sampled=80)
    assert main(["--db", sample_project.url, "import-labels", str(truth["path"])]) == 0
    # The model-free verifier runs after the judge; it stays a second opinion, not "the judge".
    verified = ",".join(a.id for a in sample_project.answers()[:8])
    assert main(["--db", sample_project.url, "verify", "--answers", verified]) == 0
    assert set(_json(capsys, "--db", sample_project.url, "triage", "--json")["cleared"]) == truth["clean"]
    result = _json(capsys, "--db", sample_project.url, "estimate", "--by", "source", "--json")
    groups = {g["source"]: g for g in result["groups"]}
    assert set(groups) == {"cuad", "maud", "contractnli", "privacyqa"}
    for group in groups.values():
        any_incorrect = group["metrics"]["any_incorrect"]
        for kind in ("ppi", "judge_only", "human_only"):
            low, high = any_incorrect[kind]["ci"]
            assert low <= any_incorrect[kind]["estimate"] <= high
        assert group["ppi"] == group["metrics"]["correctness"]["ppi"]
    everything = _json(capsys, "--db", sample_project.url, "estimate", "--by", "all", "--json")["groups"][0]
    figures = everything["metrics"]["any_incorrect"]
    # The reviewer finds every error the judge found plus one in eight of its clean answers.
    reviewed = truth["sample"]
    human_rate = sum(a not in truth["clean"] or a in truth["missed"] for a in reviewed) / len(reviewed)
    assert figures["human_only"]["estimate"] == pytest.approx(human_rate)
    judge_rate = 1 - len(truth["clean"]) / everything["answers"]
    assert figures["judge_only"]["estimate"] == pytest.approx(judge_rate)
    assert figures["ppi"]["estimate"] > judge_rate  # corrected up: the judge misses errors
    width = lambda f: f["ci"][1] - f["ci"][0]  # noqa: E731
    assert width(figures["ppi"]) < width(figures["human_only"])


@pytest.mark.every_store
def test_calibrated_confidences_fix_an_overconfident_judge_and_triage_uses_them(
    sample_project: Project, tmp_path: Path, capsys
) -> None:
    """The judge says 0.6–1.0 but a reviewer keeps its tag 0.3 less often than it claims."""
    from app.figures import calibration
    from app.figures.triage import test_half

    path, sample, lines = overconfident_labels(tmp_path)
    rows = lines_of_sample()
    assert main(["--db", sample_project.url, "import-labels", str(path)]) == 0
    # j calls every point correct: near chance on ana's labels, so the lead must choose it to triage with it
    assert main(["--db", sample_project.url, "raters", "--default", "j"]) == 0

    report = _json(capsys, "--db", sample_project.url, "calibration", "--json")
    correct = report["tags"]["correct"]
    assert correct["ece_raw"] == pytest.approx(0.3, abs=0.08)
    assert correct["ece_calibrated"] < correct["ece_raw"] / 2
    assert correct["points"] == sum(len(line["data_points"]) for line in lines if line["rater"] == "ana")
    html = export(sample_project, "report", tmp_path / "report.html").read_text(encoding="utf-8")
    assert 'alt="Calibration of the judge&#39;s confidence"' in html and "Estimates by generator" in html

    plain = _json(capsys, "--db", sample_project.url, "triage", "--json")
    floor = _json(capsys, "--db", sample_project.url, "triage", "--min-confidence", "0.55", "--json")
    assert len(plain["cleared"]) == len(rows)  # every tag "correct": LeMAJ's rule clears all
    # Raw confidences are all >= 0.6; calibrated, most answers fall under 0.55 and go to a human.
    assert 0 < len(floor["cleared"]) < len(rows) / 2
    # Calibrated on the half of the sample triage does not test on, so the bound stays honest.
    tested = {a for a in sample if test_half(a)}
    assert floor["reviews_used"] == len(tested) and plain["reviews_used"] == len(sample)
    _, certainty = calibration.calibrate(sample_project, exclude=tested)
    assert all(certainty[a] >= 0.55 for a in floor["cleared"])


def two_generators(project: Project, tmp_path: Path) -> dict[str, float]:
    """Every question of the sample contracts answered by model-a and model-b (the answers, twice);
    model-b truly errs more. The judge sees only half of the errors (sure of them, unsure of the
    rest); a reviewer checks 160 random answers. Returns each answer's truth (1 = has an error)."""
    folder = tmp_path / "two-generators"
    folder.mkdir()
    (folder / "documents").symlink_to(SAMPLE_DATASET / "documents")
    rows = [r for r in lines_of_sample() if _points(r["answer"])]
    with (folder / "qa.jsonl").open("w", encoding="utf-8") as out:
        for r in rows:
            for model in ("model-a", "model-b"):
                out.write(json.dumps({**r, "id": f"{r['id']}-{model}", "generator": model}) + "\n")
    assert main(["--db", project.url, "import", str(folder)]) == 0

    rng = random.Random(3)
    ids = [f"{r['id']}-{m}" for r in rows for m in ("model-a", "model-b")]
    sample = set(rng.sample(ids, 160))
    truth, lines = {}, []
    for r in rows:
        points = _points(r["answer"])
        for model, error_rate in (("model-a", 0.15), ("model-b", 0.5)):
            answer_id = f"{r['id']}-{model}"
            wrong = rng.random() < error_rate
            truth[answer_id] = float(wrong)
            seen = wrong and rng.random() < 0.5
            judge = ["incorrect" if seen and i == 0 else "correct" for i in range(len(points))]
            human = ["incorrect" if wrong and i == 0 else "correct" for i in range(len(points))]
            sure = [round(rng.uniform(0.85, 1.0) if seen or not wrong else rng.uniform(0.5, 0.8), 3) for _ in points]
            line = _line(answer_id, "j", "judge", points, judge)
            for point, confidence in zip(line["data_points"], sure, strict=True):
                point["confidence"] = confidence
            lines.append(line)
            if answer_id in sample:
                lines.append({**_line(answer_id, "ana", "human", points, human), "sampled": True})
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["--db", project.url, "import-labels", str(path)]) == 0
    return truth


def test_two_generators_compared_on_the_same_questions(project: Project, tmp_path: Path, capsys) -> None:
    """The judge alone shrinks model-b's extra errors; the paired PPI difference recovers the gap."""
    truth = two_generators(project, tmp_path)
    questions = {a.rsplit("-model-", 1)[0] for a in truth}

    result = _json(capsys, "--db", project.url, "estimate", "--compare", "model-a,model-b", "--json")
    gap = result["metrics"]["any_incorrect"]
    true_gap = sum(truth[f"{q}-model-a"] - truth[f"{q}-model-b"] for q in questions) / len(questions)
    assert gap["questions"] == len(questions) == result["questions"]
    low, high = gap["ppi"]["ci"]
    assert low <= true_gap <= high and high < 0  # model-a errs less, and the interval says so
    assert abs(gap["judge_only"]["estimate"]) < abs(true_gap)  # the judge alone understates the gap
    human_low, human_high = gap["human_only"]["ci"]
    assert high - low < human_high - human_low
    groups = {g["generator"]: g for g in result["estimates"]["groups"]}
    assert set(groups) == {"model-a", "model-b"}

    # The report carries the same difference with its interval.
    html = export(project, "report", tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Generators compared" in html
    # model-b (the candidate) against model-a: the same difference, the other way round
    assert f'<td class="num">{-gap["ppi"]["estimate"]:.2f} [{-high:.2f} – {-low:.2f}]</td>' in html


def _line(answer_id: str, rater: str, kind: str, points: list[str], tags: list[str]) -> dict:
    return {
        "answer_id": answer_id,
        "rater": rater,
        "kind": kind,
        "data_points": [{"text": p, "tag": t} for p, t in zip(points, tags, strict=True)],
    }


def test_a_missing_label_file_and_an_uncalibrated_judge_are_said_plainly(project: Project, tmp_path: Path, capsys):
    missing = tmp_path / "labels.jsonl"
    assert main(["--db", project.url, "import-labels", str(missing)]) != 0
    assert f"{missing}: no such file" in capsys.readouterr().err
    assert main(["--db", project.url, "calibration"]) == 0
    assert "nothing to calibrate" in capsys.readouterr().out
