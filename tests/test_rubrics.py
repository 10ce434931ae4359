"""The other papers' rubrics, the LLM jury and the stress test: real inference on the embedded model
for the end-to-end runs, scripted stand-ins where a hand count must be exact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.export.formats import export
from app.ingest.datasets import import_dataset
from app.judging.jury import combine_tags, run_jury
from app.judging.rubric_results import review_criteria, rubric_summary
from app.judging.runs import JudgeSettings, open_run
from app.judging.stress import PERTURBATIONS, perturb
from app.project import SAMPLE_DATASET, Project
from app.review.service import ReviewService
from models.backends.llama_local import LlamaBackend
from models.errors import JudgeUnavailable
from models.judge import LemajJudge, Mode, Tagging
from models.prompts import Message, Part, Prompt, Strictness
from models.rubrics import Rubric, RubricCase, RubricJudge, coverage_score, readability
from models.vocabulary import Tag
from storage.db import url_for_path

from .test_judge import ScriptedBackendStandIn

NDA = "DoiT-ICN-NonDisclosure-Agreement.txt"


@pytest.fixture
def gold_project(tmp_path: Path) -> Project:
    """Two real answers about the shortest real contract, with gold answers written from its Section 3."""
    folder = tmp_path / "gold"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / NDA).write_bytes((SAMPLE_DATASET / "documents" / NDA).read_bytes())
    rows = [json.loads(line) for line in (SAMPLE_DATASET / "qa.jsonl").read_text().splitlines()]
    kept = [r for r in rows if r["document"] == NDA][:2]
    for row in kept:
        row |= {
            "generator": "SmolLM2-135M-Instruct",
            "gold_answer": "Yes: Confidential Information must be returned at the end of each meeting (Section 3).",
            "gold_required": ["All Confidential Information is returned at the conclusion of each meeting."],
            "gold_helpful": ["The obligations survive for three years (Section 5)."],
        }
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    project = Project.open(url_for_path(tmp_path / "gold.assay"))
    import_dataset(project.sessions, folder)
    return project


def test_every_rubric_runs_end_to_end_on_the_embedded_model(gold_project: Project, tmp_path: Path, capsys) -> None:
    path = gold_project.url.removeprefix("sqlite:///")
    answer_id = gold_project.answers()[0].id
    for rubric in ("pointwise", "coverage", "two-dimensional", "dece", "score"):
        assert main(["--project", path, "judge", "--rubric", rubric, "--answers", answer_id, "--context", "4096"]) == 0
    out = capsys.readouterr().out
    assert out.count("1 judged, 0 failed") + out.count("0 judged, 1 failed") == 5
    state = ReviewService(gold_project, "ana").open(answer_id)
    stored = {r.rubric: r for r in state.rubric_results}
    if "pointwise" in stored:
        assert stored["pointwise"].label in ("Irrelevant", "Poor", "Fair", "Good", "Excellent")
    if "coverage" in stored:
        assert stored["coverage"].label in ("COMPLETE", "PARTIAL", "INCORRECT")
    if "two-dimensional" in stored:
        # The judge is the model named as the answer's generator: the paper's self-enhancement control.
        assert "bias_warning" in stored["two-dimensional"].payload
    score = stored["score"]  # no generation: readability and teacher forcing always give a result
    assert 0 < score.payload["answer_confidence"] < 1 and score.payload["passages"]
    assert all(-1 < p["delta"] < 1 for p in score.payload["passages"])
    summary = rubric_summary(gold_project, Rubric.SCORE)
    assert next(iter(summary["raters"].values()))["flesch_reading_ease"] == pytest.approx(
        score.payload["flesch_reading_ease"]
    )
    sheets = __import__("pandas").read_excel(export(gold_project, "xlsx", tmp_path / "r.xlsx"), sheet_name=None)
    assert set(sheets["rubrics"]["rubric"]) == set(stored)


class RubricStandIn(ScriptedBackendStandIn):
    def describe(self) -> dict[str, Any]:
        return {"backend": "scripted-stand-in", "model": "smollm2-135m"}


def test_dece_scores_and_criteria_validation(gold_project: Project) -> None:
    outputs = [
        json.dumps({"gold_criterion": ["1: Returned at each meeting", "2: Returned on termination", "3: Destroyed"]}),
        json.dumps({"model_elements": ["1: Section 3 requires return after meetings", "2: No destruction duty"]}),
        json.dumps({"scores": [1, 0, 0], "reasoning": ["a", "b", "c"]}),
        json.dumps({"scores": [1, 0], "reasoning": ["a", "b"]}),
    ]
    from app.judging.runs import run_judge

    answer_id = gold_project.answers()[0].id
    run_judge(gold_project.sessions, RubricJudge(RubricStandIn(outputs), Rubric.DECE), "dece", answer_ids=[answer_id])
    result = rubric_summary(gold_project, Rubric.DECE)["raters"]["dece"]
    recall, precision = 1 / 3, 1 / 2
    assert (result["recall"], result["precision"]) == pytest.approx((recall, precision))
    assert result["f2"] == pytest.approx(5 * precision * recall / (4 * precision + recall))
    payload = review_criteria(
        gold_project,
        answer_id,
        "dece",
        accept=[1],
        reject=[3],
        edit={2: "Returned on end"},
        add=["Survives three years"],
        reviewer="ana",
    )
    assert [c["status"] for c in payload["criteria"]] == ["accepted", "edited", "rejected", "added"]
    assert payload["revision_rate"] == pytest.approx(3 / 3)  # edited, rejected, added over 3 proposed
    assert payload["recall"] == pytest.approx(1 / 3)  # 1 of the 3 criteria that stand is satisfied


def test_coverage_score_and_pointwise_gpa_formulas() -> None:
    assert coverage_score(["COMPLETE", "PARTIAL", "INCORRECT", "COMPLETE"]) == pytest.approx((2 * 2 + 1) / 8)
    assert coverage_score([]) is None
    easy, hard = (
        readability("The cat sat. It was glad."),
        readability(
            "Notwithstanding the foregoing, indemnification obligations shall survive termination indefinitely."
        ),
    )
    assert easy["flesch_reading_ease"] > 80 > 20 > hard["flesch_reading_ease"]


@pytest.mark.parametrize(
    ("tags", "majority", "rule", "both"),
    [
        (["correct", "correct", "incorrect"], "correct", "incorrect", "incorrect"),
        (["irrelevant", "irrelevant", "correct"], "irrelevant", "irrelevant", "irrelevant"),
        (["correct", "irrelevant", "incorrect"], "incorrect", "incorrect", "incorrect"),  # a tie: priority
    ],
)
def test_jury_combinations_match_a_hand_count(tags, majority, rule, both) -> None:
    votes = [Tag(t) for t in tags]
    assert (combine_tags(votes, "majority"), combine_tags(votes, "rule"), combine_tags(votes, "both")) == (
        Tag(majority),
        Tag(rule),
        Tag(both),
    )


def test_jury_stores_each_juror_and_the_combined_verdict(sample_project: Project) -> None:
    answer_id = next(a.id for a in sample_project.answers() if a.document == NDA)
    n_points = len(ReviewService(sample_project, "probe").open(answer_id).points)
    plans = [
        ["correct"] * n_points,
        ["incorrect"] + ["correct"] * (n_points - 1),
        ["incorrect"] + ["irrelevant"] * (n_points - 1),
    ]
    jurors = [
        (
            f"juror{i}",
            LemajJudge(
                ScriptedBackendStandIn([json.dumps({"tag": t}) for t in plan] + [json.dumps({"missing": []})]),
                Mode.TWO_STAGE,
            ),
        )
        for i, plan in enumerate(plans)
    ]
    run_jury(sample_project.sessions, jurors, "jury", "majority", answer_ids=[answer_id])
    points = sample_project.data_points(answer_id)
    assert {"juror0", "juror1", "juror2", "jury"} <= set(points)
    combined = [p.tag for p in points["jury"]]
    assert combined[0] is Tag.INCORRECT and all(t is Tag.CORRECT for t in combined[1:])
    assert points["jury"][1].confidence == pytest.approx(2 / 3)


def test_perturbations_are_deterministic_and_located() -> None:
    answer = "The NDA lasts 3 years. The Vendor shall return all materials. It ends in May."
    points = [(0, 22), (23, 62), (63, 79)]
    made = {
        kind: perturb(answer, points[0] if kind != "contradiction" else points[1], points, kind)
        for kind in PERTURBATIONS
    }
    assert made["change_value"].answer.startswith("The NDA lasts 4 years.")
    assert "shall not return" in made["contradiction"].answer
    assert made["remove_point"].removed == "The NDA lasts 3 years." and made["remove_point"].span is None
    start, end = made["add_claim"].span
    assert "irrevocable right to sell" in made["add_claim"].answer[start:end]
    assert perturb(answer, points[0], points, "contradiction") is None  # no modal verb to negate


def test_stress_test_reports_recall_per_perturbation(sample_project: Project, capsys) -> None:
    path = sample_project.url.removeprefix("sqlite:///")
    answer_id = next(a.id for a in sample_project.answers() if a.document == NDA)
    assert (
        main(["--project", path, "judge", "--answers", answer_id, "--context", "4096", "--name", "run", "--no-missing"])
        == 0
    )
    capsys.readouterr()
    judged = sample_project.data_points(answer_id)["run"]
    ana = ReviewService(sample_project, "ana")
    for point in ana.open(answer_id).points:
        ana.set_tag(answer_id, point.point.id, Tag.CORRECT)
    ana.submit(answer_id)
    assert judged
    assert main(["--project", path, "stress-test", "--judge", "run", "--limit", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["base"] == "ana" and report["answers"] == 1
    assert set(report["per_type"]) == set(PERTURBATIONS)
    assert all(r["detection_recall"] is None or 0 <= r["detection_recall"] <= 1 for r in report["per_type"].values())
    assert report["untouched_points"] > 0 and 0 <= report["false_alarm_rate"] <= 1


class LocalModelStandIn:
    """Describes itself as llama.cpp does, so a judge over it stores a local run's configuration."""

    slot_label_scores = None  # what one-pass tagging needs of a local model

    def __init__(self, settings: JudgeSettings) -> None:
        self.settings = settings

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {
            "backend": "local",
            "model": Path(str(s.model)).name,
            "model_path": s.model,
            "context_tokens": s.context_tokens,
            "gpu_layers": s.gpu_layers,
            "threads": s.threads,
            "flash_attn": s.flash_attn,
            "seed": s.seed,
        }

    def close(self) -> None:
        pass


class Replayed(Exception):
    """Stops a stress test once it has built its judge's backend."""


def test_both_stress_tests_replay_a_stored_run_with_every_setting_it_was_made_with(
    project: Project, monkeypatch
) -> None:
    """A setting the run chose never falls back to its default when a stress test re-runs its judge."""
    made = JudgeSettings(
        model="/models/judge.gguf",
        gpu_layers=0,
        context_tokens=4096,
        threads=3,
        strictness=Strictness.STRICT,
        seed=7,
        flash_attn=True,
        find_missing=False,
        tagging=Tagging.ONE_PASS,
    )
    open_run(project.sessions, "run", made.judge(LocalModelStandIn(made)).describe(), "lead")
    replayed: list[JudgeSettings] = []

    def make_backend(settings: JudgeSettings) -> LocalModelStandIn:
        replayed.append(settings)
        raise Replayed

    monkeypatch.setattr("app.cli.judging.make_backend", make_backend)
    monkeypatch.setattr("app.judging.runs.make_backend", make_backend)
    path = project.url.removeprefix("sqlite:///")
    with pytest.raises(Replayed):
        main(["--project", path, "stress-test", "--judge", "run"])
    with pytest.raises(Replayed):
        main(["--project", path, "stress-test", "--raters", "run"])
    assert replayed == [made, made]


def test_a_schema_llama_cpp_cannot_compile_is_an_error_not_a_crash() -> None:
    backend = LlamaBackend(context_tokens=1024, threads=2)
    long = {"type": "string", "maxLength": 1200}
    schema = {"type": "object", "properties": {"a": long, "b": long}, "required": ["a", "b"]}
    with pytest.raises(JudgeUnavailable, match="cannot compile the output schema"):
        backend.generate(Prompt((Message("user", (Part("Hi"),)),)), schema=schema, max_tokens=5, temperature=0, seed=0)


def test_two_dimensional_warns_when_the_judge_wrote_the_answer() -> None:
    reply = json.dumps({"reasoning": "r", "truthfulness": "Correct", "reasoning_soundness": "Sound"})
    judge = RubricJudge(RubricStandIn([reply, reply]), Rubric.TWO_DIMENSIONAL, disputatio=True)
    mine = judge.evaluate(RubricCase("a", "Q?", "A.", [], gold_answer="A.", generator="SmolLM2-135M"))
    other = judge.evaluate(RubricCase("b", "Q?", "A.", [], gold_answer="A.", generator="gpt-4o"))
    assert mine.label == "Correct / Sound" and "bias_warning" in mine.payload
    assert "bias_warning" not in other.payload
