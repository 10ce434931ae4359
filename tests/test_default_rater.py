"""The rater that speaks for a project is the one measured on human labels: the claim checker out of the
box, another only when it measures better or the lead chooses it; a rater near chance never speaks as
a finding (queue, triage, the report's headline), and the default jury gives each juror its role."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app import raters
from app.cli import main
from app.export.formats import export
from app.figures import columnar, triage
from app.ingest.labels import import_labels
from app.judging.jury import combine_roles, roles_jury
from app.judging.runs import run_judge
from app.judging.sample_tour import SAMPLE_ANNOTATORS, SAMPLE_LABELS, labelled_ids
from app.judging.verification import VERIFIER, verify_project
from app.project import Project
from app.review.service import ReviewService
from app.workspace import Workspace
from models.backends.base import Generation
from models.judge import LemajJudge, Mode
from models.vocabulary import Tag
from storage import audit, columns, judgements
from storage import raters as stored_raters

from .test_judge import ScriptedBackendStandIn

FLAGS_EVERYTHING = "judge:flags-everything"  # a stand-in for the embedded 135M model, which flags nearly all


class TagsThenMissingStandIn(ScriptedBackendStandIn):
    """A model that answers each point with the next of `tags` and proposes `missing` when asked for
    omissions (a test double: a real small model cannot be made to disagree with the checker on demand)."""

    def __init__(self, tags: list[str], missing: list[str]) -> None:
        super().__init__([])
        self.tags, self.turn = tags, 0
        self.missing = [{"text": m, "citations": ["par_2"], "rationale": "The answer leaves it out."} for m in missing]

    def generate(self, prompt: Any, **options: Any) -> Generation:
        if "missing" in options.get("schema", {}).get("properties", {}):
            return Generation(json.dumps({"missing": self.missing}), 10, 10, 5)
        self.turn += 1
        return Generation(json.dumps({"tag": self.tags[self.turn % len(self.tags)]}), 10, 10, 5)


def _judge(project: Project, answer_ids: list[str], name: str, tags: list[str], missing: list[str] = ()) -> None:
    judge = LemajJudge(TagsThenMissingStandIn(tags, list(missing)), Mode.TWO_STAGE)
    run_judge(project.sessions, judge, name, answer_ids=answer_ids)


@pytest.fixture
def labelled_sample(sample_project: Project) -> Project:
    """The sample as `gui --sample` makes it: ContractNLI's human labels on 34 answers, checked by the verifier."""
    import_labels(sample_project, SAMPLE_LABELS, "sample", default_rater=SAMPLE_ANNOTATORS)
    verify_project(sample_project.sessions, sorted(labelled_ids()))
    return sample_project


def _raters_json(capsys: pytest.CaptureFixture[str], project: Project, *more: str) -> dict:
    capsys.readouterr()
    assert main(["--db", project.url, "raters", "--json", *more]) == 0
    return json.loads(capsys.readouterr().out)


def test_out_of_the_box_the_checker_speaks_and_a_rater_near_chance_does_not(
    labelled_sample: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_project = labelled_sample
    labelled = sorted(labelled_ids())
    _judge(sample_project, labelled, FLAGS_EVERYTHING, ["incorrect"])
    listed = _raters_json(capsys, sample_project)
    by_name = {r["name"]: r for r in listed["raters"]}
    assert listed["default"] == VERIFIER and not listed["chosen_by_lead"]
    checker, small = by_name[VERIFIER], by_name[FLAGS_EVERYTHING]
    assert checker["trusted"] is True and checker["n"] == 34 and checker["basis"] == "project"
    assert checker["standing"].startswith("trusted: caught")
    assert small["trusted"] is False and small["standing"].startswith("near chance on 34 human-labelled answers")
    low, high = small["interval"]["false_alarms"]
    assert low <= small["false_alarm_rate"] <= high + 1e-9 and small["false_alarm_rate"] > 0.9

    result = triage.triage(sample_project)
    assert result["rater"] == VERIFIER and result["judged"] == 34  # the checker's answers, not the small model's
    assert {a for a in result["cleared"]} <= set(labelled)


def test_a_rater_never_measured_is_not_trusted_and_the_checker_stands_on_its_data_card(project: Project) -> None:
    from app.ingest.datasets import import_dataset
    from app.project import SAMPLE_DATASET

    import_dataset(project.sessions, SAMPLE_DATASET)
    answer = next(a.id for a in project.answers() if a.document.startswith("DoiT"))
    _judge(project, [answer], "judge:unmeasured", ["correct"])
    assert raters.default_rater(project.sessions).name == "judge:unmeasured"  # the only one: shown, not trusted
    assert raters.speaks_as_finding(project.sessions) is None  # and never a headline
    unmeasured = next(s for s in raters.standings(project.sessions) if s.name == "judge:unmeasured")
    assert unmeasured.trusted is None and unmeasured.words == "not measured yet"

    verify_project(project.sessions, [answer])  # no human label in this project: the data card speaks
    checker = raters.default_rater(project.sessions)
    assert checker.name == VERIFIER and checker.basis == "data card" and checker.trusted
    assert checker.answers > 500 and "held-out" in checker.words


def test_the_checkers_standing_counts_each_held_out_answer_once_and_only_what_ships() -> None:
    """Recomputed here from the data cards' own counts: the contract checker's two splits (each NDA once)
    and the claim checker's two halves of RAGTruth (each answer once); never an ablation ("trained:
    contracts only") nor a second look at the same answers (statements held out, folds)."""
    from models.checker.encoder import FOLDER
    from models.checker.model import MODEL_FILE

    contracts = json.loads((FOLDER / "contract_checker.json").read_text())["held_out"]
    words = json.loads(MODEL_FILE.read_text())["held_out"]
    counted = [
        e for e in contracts if e["set"].endswith(("(trained: contractnli-dev)", "(trained: contractnli-train)"))
    ]
    counted += [e for e in words if e["set"].startswith("ragtruth-dev half")]
    assert len(counted) == 4 and sum(e["answers"] for e in counted) == 1003 + 850 + 1434
    engine = json.loads((FOLDER.parent / "engine_held_out.json").read_text())["held_out"]  # tests/test_engine_card.py
    counted += engine
    expected = {
        "with_errors": sum(e["with_errors"] for e in counted),
        "caught": sum(e["caught"] for e in counted),
        "correct": sum(e["correct"] for e in counted),
        "alarms": sum(e["false_alarm_count"] for e in counted),
    }
    assert raters.data_card_counts() == expected
    for e in counted:  # the counts are the rates the data card prints, not rebuilt from them
        assert e["with_errors"] + e["correct"] == e["answers"]
        assert round(e["caught"] / e["with_errors"], 3) == e["recall"]
        assert round(e["false_alarm_count"] / e["correct"], 3) == e["false_alarms"]
    standing = raters.standing_from_counts(VERIFIER, "data card", rated=0, **expected)
    assert standing.answers == 3287 + sum(e["answers"] for e in engine)


def test_the_lead_chooses_the_rater_audited_and_nonsense_is_refused(
    labelled_sample: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_project = labelled_sample
    labelled = sorted(labelled_ids())
    _judge(sample_project, labelled[:5], FLAGS_EVERYTHING, ["incorrect"])
    with sample_project.sessions.begin() as session:
        stored_raters.add_rater(session, "judge:never-ran", stored_raters.RaterKind.JUDGE, {}, "test")
    before = _raters_json(capsys, sample_project)
    for name, said in (
        ("judge:nobody", "no automatic rater named 'judge:nobody'"),
        ("ContractNLI annotators", "no automatic rater named"),  # a person is not an automatic rater
        ("judge:never-ran", "has rated no answer yet"),
    ):
        capsys.readouterr()
        assert main(["--db", sample_project.url, "raters", "--default", name]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err and err.count("\n") == 1
    assert _raters_json(capsys, sample_project) == before  # nothing changed

    chosen = _raters_json(capsys, sample_project, "--default", FLAGS_EVERYTHING)
    assert chosen["default"] == FLAGS_EVERYTHING and chosen["chosen_by_lead"]
    with sample_project.sessions() as session:
        entries = [e for e in audit.audit_entries(session) if e.action == "raters.default"]
    assert entries and entries[-1].payload == {"from": None, "to": FLAGS_EVERYTHING}
    capsys.readouterr()
    assert main(["--db", sample_project.url, "triage", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rater"] == FLAGS_EVERYTHING  # chosen: it speaks, said so
    assert raters.speaks_as_finding(sample_project.sessions).name == FLAGS_EVERYTHING
    assert _raters_json(capsys, sample_project, "--default", "auto")["default"] == VERIFIER


def test_the_queue_verdict_is_the_default_raters(labelled_sample: Project) -> None:
    sample_project = labelled_sample
    labelled = sorted(labelled_ids())
    _judge(sample_project, labelled, FLAGS_EVERYTHING, ["incorrect"])
    counts = ReviewService(sample_project, "ana").judge_counts()
    assert set(counts) == set(labelled)  # the checker's answers
    with sample_project.sessions() as session:
        checker = stored_raters.rater_named(session, VERIFIER)
        for answer_id, (c, i, irr, m, undecided) in counts.items():
            points = judgements.data_points_of(session, answer_id, checker.id)
            assert (c, i, irr, m) == tuple(sum(p.tag is t for p in points) for t in Tag)
            assert undecided == sum(p.tag is None for p in points)
        # Triage reads the same from the label columns.
        untagged = columnar.untagged(columns.labels(session, [checker.id], creators=True), checker.id)
    assert {a: n for a, n in untagged.items() if a in counts} == {a: c[4] for a, c in counts.items() if c[4]} != {}


def test_the_default_jury_gives_correctness_to_the_checker_and_relevance_to_the_llm(labelled_sample: Project) -> None:
    sample_project = labelled_sample
    labelled = sorted(labelled_ids())
    _judge(
        sample_project,
        labelled,
        FLAGS_EVERYTHING,
        ["incorrect", "irrelevant", "correct"],
        ["The receiving party must return all confidential information on request."],
    )
    assert combine_roles(sample_project.sessions, FLAGS_EVERYTHING) == len(labelled)
    jury = roles_jury(FLAGS_EVERYTHING)
    disagreements = missing = 0
    with sample_project.sessions() as session:
        ids = {n: stored_raters.rater_named(session, n).id for n in (VERIFIER, FLAGS_EVERYTHING, jury)}
        for answer_id in labelled:
            checker = {p.span_start: p.tag for p in judgements.data_points_of(session, answer_id, ids[VERIFIER])}
            llm = {p.span_start: p.tag for p in judgements.data_points_of(session, answer_id, ids[FLAGS_EVERYTHING])}
            combined = judgements.data_points_of(session, answer_id, ids[jury])
            proposed = [p.text for p in combined if p.span_start is None]
            assert proposed == [
                p.text
                for p in judgements.data_points_of(session, answer_id, ids[FLAGS_EVERYTHING])
                if p.span_start is None
            ]
            missing += len(proposed)
            for point in (p for p in combined if p.span_start is not None):
                said, small = checker.get(point.span_start), llm[point.span_start]
                disagreements += said is not None and small is not None and said is not small
                if said is Tag.INCORRECT:
                    assert point.tag is Tag.INCORRECT  # the measured juror's error stands
                elif small is Tag.IRRELEVANT:
                    assert point.tag is Tag.IRRELEVANT  # relevance: the LLM's
                else:  # correctness: the checker's; where it abstains, the small model (near chance) does not speak
                    assert point.tag is said
    assert disagreements > 5 and missing > 0  # the two really disagreed here, and the LLM found omissions


def test_the_report_has_no_headline_from_a_rater_near_chance_and_names_it(labelled_sample: Project, tmp_path) -> None:
    sample_project = labelled_sample
    import pypdf

    labelled = sorted(labelled_ids())
    _judge(sample_project, labelled, FLAGS_EVERYTHING, ["incorrect"])
    pdf = export(sample_project, "pdf", tmp_path / "report.pdf")
    text = " ".join(" ".join(page.extract_text().split()) for page in pypdf.PdfReader(pdf).pages)
    assert "The automatic figures come from the claim checker, trusted on human labels." in text  # the summary
    assert "Left out of the headline figures, triage and the queue: flags-everything (near chance)" in text
    assert "The claim checker speaks for the project. It is trusted; it caught" in text  # the judges' section
    assert "The judge flags-everything is left out, near chance on 34 human-labelled answers" in text
    assert "Fisher's exact test" in text


def test_the_lead_chooses_the_rater_in_the_window_and_the_queue_follows(qtbot, labelled_sample: Project) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTableWidget

    from ui.item_models import CLEARED, FLAGGED, UNCONFIRMED
    from ui.raters_dialog import RatersDialog
    from ui.review.window import ReviewWindow

    labelled = sorted(labelled_ids())
    _judge(labelled_sample, labelled, FLAGS_EVERYTHING, ["incorrect"])
    window = ReviewWindow(Workspace(labelled_sample), "lead")
    qtbot.addWidget(window)
    model = window.queue_pane.model

    def verdicts() -> dict[str, str]:
        return {a: model.index(model.row_of(a), 1).data() for a in labelled}

    assert set(verdicts().values()) <= {CLEARED, FLAGGED, UNCONFIRMED} and len(set(verdicts().values())) > 1
    window.session.open(labelled[0])  # the small model's column beside the checker's: greyed, said why
    points = window.answer_pane.points_model
    column = points.HEADERS.index(FLAGS_EVERYTHING)
    header = " ".join(str(points.headerData(column, Qt.Orientation.Horizontal)).split())
    assert header.endswith("· near chance")
    assert points.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ForegroundRole).name() == "#8a8a8a"
    tip = points.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "near chance on 34 human-labelled answers" in tip
    dialog = RatersDialog(window, window.session)
    qtbot.addWidget(dialog)
    table = dialog.findChild(QTableWidget)
    names = [table.item(r, 0).toolTip() for r in range(table.rowCount())]
    small = names.index(FLAGS_EVERYTHING)
    assert table.item(small, 2).text().startswith("near chance on 34")
    assert table.item(small, 2).foreground().color().name() == "#8a8a8a"  # greyed
    dialog.choice.setCurrentIndex(dialog.choice.findData(FLAGS_EVERYTHING))
    dialog.accept()
    qtbot.waitUntil(lambda: set(verdicts().values()) == {FLAGGED})  # the lead's choice speaks now
    assert raters.default_rater(labelled_sample.sessions).name == FLAGS_EVERYTHING
    assert "speaks for the project" in window.message.text()


def test_a_judge_citing_the_title_for_a_clause_shows_the_clause_first(sample_project: Project) -> None:
    """A judge that cites the title page for a point about Section 3: the passage of Section 3 that holds
    the point is shown first, the judge's citation after it (app/judging/evidence.py)."""
    answer = "contractnli-027"  # the DoiT NDA: "Section 3 states that all CONFIDENTIAL INFORMATION ... returned"
    claim = sample_project.answer(answer).text.split("\n")[2].strip("• ").split("  ")[0]
    cites_the_title = json.dumps(
        {"data_points": [{"text": claim, "tag": "correct", "citations": ["par_1"], "rationale": "It says so."}]}
    )
    judge = LemajJudge(ScriptedBackendStandIn([cites_the_title] * 3), Mode.ONE_PASS)
    run_judge(sample_project.sessions, judge, "judge:cites-the-title", answer_ids=[answer])
    passages = {p.citation_id: p for p in sample_project.passages(sample_project.answer(answer).document_id)}
    with sample_project.sessions() as session:
        found = stored_raters.rater_named(session, "judge:cites-the-title")
        point = next(p for p in judgements.data_points_of(session, answer, found.id) if p.text.startswith("Section"))
    first = passages[point.citations[0]]
    assert "returned at the conclusion of each meeting" in first.text and first.section  # the operative clause
    assert "par_1" in point.citations[1:]  # the judge's own citation is kept, after it
