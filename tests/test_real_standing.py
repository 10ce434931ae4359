"""A judge's standing from real labels first: against human labels where people labelled answers it
judged (answer-level recall and false alarms, 95 % Wilson intervals), planted errors second; and the
sample ships a labelled set the verifier has judged, so a new user sees a real figure."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from statsmodels.stats.proportion import proportion_confint

from app.export.formats import export
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.judging.paired_stress import TYPES, remember
from app.judging.sample_tour import (
    SAMPLE_ANNOTATORS,
    SAMPLE_LABELS,
    import_sample,
    labelled_ids,
    sample_tour,
)
from app.judging.standing import judge_standings, standing_of_run
from app.judging.verification import VERIFIER, verify_project
from app.project import SAMPLE_DATASET, Project
from app.review.service import ReviewService
from app.workspace import Workspace
from models.vocabulary import Tag
from storage import documents
from storage.db import url_for_path
from storage.scoring import score_table
from storage.statistics import real_label_figures

RATER = "ContractNLI annotators"


def _truth() -> dict[str, list[dict]]:
    return {row["id"]: row["labels"] for row in map(json.loads, SAMPLE_LABELS.read_text().splitlines())}


@pytest.fixture(scope="module")
def labelled_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's two labelled NDAs and their answers as a dataset of their own."""
    folder = tmp_path_factory.mktemp("labelled")
    (folder / "documents").mkdir()
    rows = [json.loads(line) for line in (SAMPLE_DATASET / "qa.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["id"] in labelled_ids()]
    for name in {r["document"] for r in rows}:
        shutil.copyfile(SAMPLE_DATASET / "documents" / name, folder / "documents" / name)
    (folder / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def _flagged(project: Project, answer_id: str) -> bool:
    return any(p.tag is Tag.INCORRECT for p in project.data_points(answer_id).get(VERIFIER, []))


@pytest.mark.every_store
def test_the_real_label_figure_is_a_count_of_answers_with_wilson_intervals(
    project: Project, labelled_folder: Path, tmp_path: Path
) -> None:
    import_dataset(project.sessions, labelled_folder)
    truth = _truth()
    ids = sorted(truth)
    found_correct = [a for a in ids if all(label["label"] == "supported" for label in truth[a])]
    unjudged, extra, unsubmitted = ids[0], found_correct[1], found_correct[2]
    assert import_labels(project, SAMPLE_LABELS, default_rater=RATER).labels == 2 * len(ids)  # "Yes." and the claim
    verify_project(project.sessions, [a for a in ids if a != unjudged])  # one labelled answer it never judged
    # A second person marks an omission in an answer: it has an error if any of them marked one.
    second = {
        "answer_id": extra,
        "rater": "lee",
        "sampled": True,
        "data_points": [{"text": "The clause on return of materials is left out.", "tag": "missing"}],
    }
    (tmp_path / "lee.jsonl").write_text(json.dumps(second) + "\n")
    import_labels(project, tmp_path / "lee.jsonl")
    # A review not submitted is no label: ana's "incorrect" is left out.
    ana = ReviewService(project, "ana")
    first = ana.open(unsubmitted).points[0].point.id
    ana.set_tag(unsubmitted, first, Tag.INCORRECT)

    wrong = {a for a, labels in truth.items() if any(label["label"] != "supported" for label in labels)} | {extra}
    counted = [a for a in ids if a != unjudged]
    with_errors = [a for a in counted if a in wrong]
    correct = [a for a in counted if a not in wrong]
    caught = sum(_flagged(project, a) for a in with_errors)
    alarms = sum(_flagged(project, a) for a in correct)
    assert with_errors and correct and caught + alarms > 0  # the verifier flags some of each side

    figures = real_label_figures(project.sessions, VERIFIER)
    assert figures is not None
    assert (figures["answers"], figures["with_errors"], figures["correct"]) == (
        len(counted),
        len(with_errors),
        len(correct),
    )
    assert (figures["caught"], figures["false_alarms"]) == (caught, alarms)
    assert figures["recall"] == caught / len(with_errors)
    assert figures["false_alarm_rate"] == alarms / len(correct)
    assert figures["recall_ci"] == proportion_confint(caught, len(with_errors), alpha=0.05, method="wilson")
    assert figures["false_alarm_ci"] == proportion_confint(alarms, len(correct), alpha=0.05, method="wilson")
    assert figures["human_raters"] == sorted([RATER, "lee"]) and figures["sampled"] == 1
    with project.sessions() as session:  # a session does as well as the factory
        assert real_label_figures(session, VERIFIER) == figures
        assert real_label_figures(session, VERIFIER, score_table(session)) == figures  # read from the tag counts
    assert real_label_figures(project.sessions, "lee") is None  # a person is not measured against people
    assert real_label_figures(project.sessions, "nobody") is None


def _planted(rater: str, caught: int, trials: int) -> dict:
    by_type = {t: {"trials": 0, "caught": 0, "recall": None, "ci": None} for t in TYPES}
    by_type["change_value"] = {"trials": trials, "caught": caught, "recall": caught / trials, "ci": [0.8, 0.97]}
    figures = {"by_type": by_type, "unperturbed": 50, "false_alarms": 1, "false_alarm_rate": 0.02}
    return {"answers": 12, "seed": 1, "raters": {rater: figures}}


@pytest.mark.every_store
def test_the_text_gives_the_real_label_figure_first_and_names_planted_errors_second(
    project: Project, labelled_folder: Path, tmp_path: Path
) -> None:
    import_dataset(project.sessions, labelled_folder)
    verify_project(project.sessions, sorted(labelled_ids()))
    held_out = standing_of_run(project.sessions, VERIFIER)  # no human labels here yet: the checker's data card
    assert held_out.text.startswith("trusted: caught") and "held-out, from its data card" in held_out.text
    assert held_out.short.endswith("held-out") and not held_out.demonstration
    remember(project.sessions, _planted(VERIFIER, 47, 50))
    before = standing_of_run(project.sessions, VERIFIER)  # no human labels: today's wording
    assert before.real is None and before.text == "caught 94% of planted errors, false alarms on 2% of correct points"
    assert before.short == "caught 94%"

    import_labels(project, SAMPLE_LABELS, default_rater=RATER)
    standing = standing_of_run(project.sessions, VERIFIER)
    r = standing.real
    assert r is not None and r["answers"] == len(labelled_ids())
    real, planted = standing.text.split("; planted errors: ")
    lo, hi = r["recall_ci"]
    assert real.startswith(f"human labels on {r['answers']} answers: caught {r['caught']} of {r['with_errors']} ")
    assert f"wrong answers ({r['recall']:.0%}; 95% CI {lo:.0%}–{hi:.0%})" in real
    assert f"false alarms on {r['false_alarms']} of {r['correct']} correct answers" in real
    assert planted == "caught 94%"
    assert standing.short == f"caught {r['caught']}/{r['with_errors']} real errors"
    assert not standing.demonstration  # the verifier is no model

    report = export(project, "report", tmp_path / "r.html").read_text()
    section = report.split('id="judges"')[1].split("<section")[0]
    assert section.index("against human labels") < section.index("errors planted")
    assert "Human labels by ContractNLI annotators" in section and "Wrong answers caught" in section
    assert f"{r['caught']} of {r['with_errors']} ({r['recall']:.0%}".replace("%", " %") in section
    assert f"{lo:.0%} – {hi:.0%})".replace("%", " %") in section
    assert '<td class="num">34</td>' in section and '<td class="num">94 %</td>' in section
    assert [s.real is not None for s in judge_standings(project.sessions)] == [True]


def test_the_sample_ships_a_labelled_set_the_verifier_has_judged(qtbot, tmp_path: Path) -> None:
    from ui.review.window import ReviewWindow

    project = Project.open(url_for_path(tmp_path / "sample.assay"))
    try:
        import_sample(project)
        answers = {a.id for a in project.answers()}
        labelled = labelled_ids()
        assert len(labelled) == 34 and labelled <= answers and len(answers) == 119 + 34 + 15  # 15: a 2nd generator
        assert {a.split("-")[1] for a in labelled} == {"0015", "0488"}
        with project.sessions() as session:  # their two NDAs are read whole; the rest after the window opens
            unread, names = set(documents.unread(session)), documents.document_names(session)
            read = {n for n in names if documents.document_id_by_name(session, n) not in unread}
        assert read == {"contractnli-dev-0015.txt", "contractnli-dev-0488.txt"}
        with project.sessions() as session:
            figures = real_label_figures(session, VERIFIER)
        assert figures is not None and figures["answers"] == 34 and figures["human_raters"] == [SAMPLE_ANNOTATORS]
        assert figures["with_errors"] + figures["correct"] == 34 and figures["with_errors"] == 14  # ContractNLI's
        standing = standing_of_run(project.sessions, VERIFIER)
        assert standing.text.startswith("human labels on 34 answers: caught ")
        tour = sample_tour(project)  # the verifier's run on the labelled set leaves the first-open tour alone
        assert tour is not None and not set(tour.answer_ids) & labelled

        window = ReviewWindow(Workspace(project), "ana")
        qtbot.addWidget(window)
        window.open_answer(sorted(labelled)[0])  # the verifier is the judge whose tags it shows
        header = " ".join(
            window.answer_pane.points_model.headerData(2, Qt.Orientation.Horizontal).split()
        )  # over lines
        tip = window.answer_pane.points_model.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert header == f"Claim checker ({standing.short})" and "real errors" in header  # its one name (issue 63)
        assert tip.startswith(f"verifier: {standing.text}") and "Human labels by ContractNLI annotators" in tip
    finally:
        project.close()


def test_a_models_standing_and_the_judge_dialog_give_human_labels_first(
    qtbot, project: Project, labelled_folder: Path, tmp_path: Path
) -> None:
    from app.judging.standing import standing_of_model
    from app.settings import ModelChoice
    from models.vocabulary import RaterKind
    from storage import raters
    from ui.judge_dialog import JudgeDialog

    import_dataset(project.sessions, labelled_folder)
    import_labels(project, SAMPLE_LABELS, default_rater=RATER)
    truth = _truth()
    wrong = sorted(a for a, labels in truth.items() if any(label["label"] != "supported" for label in labels))
    with project.sessions.begin() as session:
        raters.add_rater(session, "smol", RaterKind.JUDGE, {"backend": "local", "model_path": "/m/smol.gguf"}, "test")

    def judge(name: str, answer_ids: list[str], flagged: list[str] | None = None) -> None:
        def tag(a: str) -> str:
            return "incorrect" if flagged is None or a in flagged else "correct"

        lines = [
            {"answer_id": a, "rater": name, "kind": "judge", "data_points": [{"text": "Yes.", "tag": tag(a)}]}
            for a in answer_ids
        ]
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
        import_labels(project, tmp_path / f"{name}.jsonl")

    judge("smol", sorted(truth))  # flags every answer: no better than chance
    choice = ModelChoice(kind="gguf", model="/elsewhere/smol.gguf")
    found = standing_of_model(project.sessions, choice)
    assert found.real is not None and found.real["recall"] == 1 and found.real["false_alarm_rate"] == 1
    assert found.demonstration and found.text.startswith("demonstration model: human labels on 34 answers:")

    remember(project.sessions, _planted("smol", 3, 100))  # a planted-error figure too: named second
    dialog = JudgeDialog(choice=choice, standing=lambda c: standing_of_model(project.sessions, c))
    qtbot.addWidget(dialog)
    text = dialog.standing.text()
    assert text.index("human labels on 34 answers") < text.index("Planted errors, latest stress test")
    assert "Human labels by ContractNLI annotators" in text and "close to chance" in text

    with project.sessions.begin() as session:
        raters.add_rater(session, "smol-2", RaterKind.JUDGE, {"backend": "local", "model_path": "/n/smol.gguf"}, "t")
    judge("smol-2", wrong)  # a later run of the same model, on fewer labelled answers
    assert standing_of_model(project.sessions, choice).real["rater"] == "smol"  # the most answers measure it
    with project.sessions.begin() as session:
        raters.add_rater(session, "sharp", RaterKind.JUDGE, {"backend": "local", "model_path": "/m/sharp.gguf"}, "t")
    judge("sharp", sorted(truth), flagged=wrong)  # flags exactly the wrong answers
    sharp = standing_of_model(project.sessions, ModelChoice(kind="gguf", model="/m/sharp.gguf"))
    assert sharp.real is not None and (sharp.real["recall"], sharp.real["false_alarm_rate"]) == (1, 0)
    assert not sharp.demonstration and sharp.run == "sharp" and sharp.figures is None  # never stress-tested
    assert sharp.short == f"caught {len(wrong)}/{len(wrong)} real errors"
