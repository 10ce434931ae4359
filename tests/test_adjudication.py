"""Adjudication and reviewer qualification (issue 32), on SQLite and PostgreSQL: disagreeing reviews
wait for an adjudicator, the decided tags become the consensus the figures read, gold answers are
mixed into a reviewer's queue at the set share, and a reviewer's agreement with gold is scikit-learn's
kappa on the same labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from app.cli import main
from app.errors import AssayError
from app.figures import analytics, estimates, triage
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.project import SAMPLE_DATASET, Project
from app.raters import set_default
from app.review import adjudication, qualification
from app.review.service import ReviewService
from app.review.team import export_bundle, import_bundle
from models.segmentation import segment_answer
from models.vocabulary import RaterKind, Tag
from storage.audit import audit_entries
from storage.statistics import real_label_figures

pytestmark = pytest.mark.every_store


def _import(project: Project, tmp_path: Path, lines: list[dict]) -> None:
    path = tmp_path / f"labels-{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_labels(project, path)


def _line(project: Project, answer_id: str, rater: str, tags: list[str], kind: str = "human") -> dict:
    segments = segment_answer(project.answer(answer_id).text)
    points = [{"text": s.text, "tag": tags[i % len(tags)]} for i, s in enumerate(segments)]
    return {"answer_id": answer_id, "rater": rater, "kind": kind, "data_points": points, "sampled": kind == "human"}


@pytest.fixture
def disputed(sample_project: Project, tmp_path: Path) -> tuple[Project, list[str]]:
    """Six answers judged all correct by run1 and reviewed (drawn at random) by ana, all correct, and
    ben, who tags the second point of the first answer incorrect."""
    answers = [a.id for a in sample_project.answers()[:6]]
    lines = []
    for n, answer in enumerate(answers):
        lines.append(_line(sample_project, answer, "run1", ["correct"], kind="judge"))
        lines.append(_line(sample_project, answer, "ana", ["correct"]))
        lines.append(_line(sample_project, answer, "ben", ["correct", "incorrect"] if n == 0 else ["correct"]))
    _import(sample_project, tmp_path, lines)
    set_default(sample_project.sessions, "run1", "lead")  # it never flags: near chance, so the lead chooses it
    return sample_project, answers


def test_two_reviewers_disagreeing_put_the_answer_in_the_queue(disputed: tuple[Project, list[str]]) -> None:
    project, answers = disputed
    waiting = adjudication.waiting(project)
    assert [c.answer_id for c in waiting] == [answers[0]]
    case = waiting[0]
    assert [p.number for p in case.disputed] == [2]
    point = case.disputed[0]
    assert {o.reviewer: o.tag for o in point.opinions} == {"ana": Tag.CORRECT, "ben": Tag.INCORRECT}
    assert [o.alias for o in point.opinions] == ["Reviewer A", "Reviewer B"]
    assert case.disagreement == pytest.approx(0.25)  # one of two points, one reviewer of two off


def test_a_missing_point_one_reviewer_found_is_disputed_and_most_disputed_comes_first(
    disputed: tuple[Project, list[str]],
) -> None:
    project, answers = disputed
    service = ReviewService(project, "ana")  # ana adds a missing point on the third answer and resubmits
    for point in service.open(answers[2]).points:  # her labels were on the judge's points: her own copy now
        service.set_tag(answers[2], point.point.id, Tag.CORRECT)
    service.add_missing(answers[2], "The agreement ends after five years", [])
    service.submit(answers[2])
    waiting = adjudication.waiting(project)
    assert [c.answer_id for c in waiting][:1] == [answers[2]] or waiting[0].disagreement >= waiting[1].disagreement
    case = adjudication.case(project, answers[2])
    missing = [p for p in case.disputed if p.missing]
    assert len(missing) == 1 and missing[0].may_leave_out
    assert {o.reviewer: o.tag for o in missing[0].opinions} == {"ana": Tag.MISSING, "ben": None}
    assert [c.disagreement for c in waiting] == sorted((c.disagreement for c in waiting), reverse=True)
    settled = adjudication.decide(project, answers[2], missing[0].number, None, "reviewer error", "lead")
    assert settled.settled
    consensus = project.data_points(answers[2])["consensus"]
    assert all(p.tag is Tag.CORRECT for p in consensus)  # the missing point was left out


def test_adjudicated_tags_become_the_consensus_and_the_figures_use_them(disputed: tuple[Project, list[str]]) -> None:
    project, answers = disputed
    before = triage.triage(project)
    assert before["reviewed_cleared"] == 6 and before["missed"] == 1  # ben's incorrect point counted
    agreement_before = analytics.agreement(project)
    assert real_label_figures(project.sessions, "run1")["with_errors"] == 1

    case = adjudication.decide(project, answers[0], 2, Tag.CORRECT, "reviewer error", "lead")
    assert case.settled and not adjudication.waiting(project)

    consensus = project.data_points(answers[0])["consensus"]
    assert [p.tag for p in consensus] == [Tag.CORRECT, Tag.CORRECT]  # the undisputed point as both tagged it
    scores = {(s["answer_id"], s["rater"]): s for s in analytics.scores(project)}
    assert scores[(answers[0], "consensus")]["correctness"] == 1.0
    after = triage.triage(project)
    assert real_label_figures(project.sessions, "run1")["with_errors"] == 0  # the judge's standing too
    assert after["reviewed_cleared"] == 6 and after["missed"] == 0  # the consensus is the review now
    _, human, _, _ = estimates.answer_values(project)
    assert human[answers[0]]["correctness"] == 1.0  # not the mean of ana's 1.0 and ben's 0.5
    aligned = analytics.alignment(project, "run1", "consensus")
    assert aligned["n_pairs"] == 2 and aligned["accuracy"] == 1.0
    agreement = analytics.agreement(project)  # still of the reviews as made, the consensus left out
    assert "consensus" not in agreement["raters"]
    assert agreement["percent_agreement"] == agreement_before["percent_agreement"]

    entries = [e for e in audit_entries_of(project) if e.action.startswith("adjudication.")]
    assert [e.action for e in entries] == ["adjudication.decided", "adjudication.consensus"]
    assert entries[0].actor == "lead" and entries[0].payload["reviewers"] == {"ana": "correct", "ben": "incorrect"}


def audit_entries_of(project: Project) -> list:
    with project.sessions() as session:
        return list(audit_entries(session))


def test_only_a_named_adjudicator_may_decide(disputed: tuple[Project, list[str]]) -> None:
    project, answers = disputed
    adjudication.set_adjudicators(project, ["lead"], "owner")
    with pytest.raises(AssayError, match="ben is not an adjudicator of this project"):
        adjudication.decide(project, answers[0], 2, Tag.INCORRECT, None, "ben")
    assert adjudication.waiting(project)[0].undecided  # nothing was decided
    with pytest.raises(AssayError, match="point 1 is not disputed"):
        adjudication.decide(project, answers[0], 1, Tag.INCORRECT, None, "lead")
    with pytest.raises(AssayError, match="cannot be left out"):
        adjudication.decide(project, answers[0], 2, None, None, "lead")
    assert adjudication.decide(project, answers[0], 2, Tag.INCORRECT, "guideline unclear", "lead").settled
    unclear = adjudication.unclear_guidelines(project)
    assert [(u["answer_id"], u["decided"]) for u in unclear] == [(answers[0], "incorrect")]
    guidelines = project.guidelines()  # the version the decision was made under, for its next version
    assert unclear[0]["guideline_version"] == (str(guidelines.version) if guidelines else None)


def _review_in_window(project: Project, reviewer: str, answer_id: str, tags: list[Tag]) -> None:
    """What a reviewer does in the window: open the answer, tag its points, submit."""
    service = ReviewService(project, reviewer)
    for point, tag in zip(service.open(answer_id).points, tags * 20, strict=False):
        service.set_tag(answer_id, point.point.id, tag)
    service.submit(answer_id)


def test_adjudication_travels_in_team_bundles(sample_project: Project, new_project_url, tmp_path: Path) -> None:
    project = sample_project
    answer = project.answers()[0].id
    _review_in_window(project, "ana", answer, [Tag.CORRECT])
    _review_in_window(project, "ben", answer, [Tag.CORRECT, Tag.INCORRECT])
    ReviewService(project, "lead")  # the adjudicator is a reviewer of the project
    adjudication.decide(project, answer, 2, Tag.INCORRECT, "reviewer error", "lead")
    bundles = []
    for reviewer in ("lead", "ana", "ben"):  # the decision first: it waits for the reviews it settles
        bundles.append(tmp_path / f"{reviewer}.json")
        export_bundle(project, reviewer, bundles[-1])
    other = Project.open(new_project_url("lead"))
    try:
        import_dataset(other.sessions, SAMPLE_DATASET)
        import_bundle(other, bundles[0])
        assert "consensus" not in other.data_points(answer)  # nothing to settle before the reviews come
        for bundle in bundles[1:]:
            import_bundle(other, bundle)
        assert [p.tag for p in other.data_points(answer)["consensus"]] == [Tag.CORRECT, Tag.INCORRECT]
        assert not adjudication.waiting(other)
    finally:
        other.close()


# ---------------------------------------------------------------- qualification


@pytest.fixture
def gold(sample_project: Project, tmp_path: Path) -> tuple[Project, list[str]]:
    """60 answers labelled by the firm's reference rater, taken as gold."""
    answers = [a.id for a in sample_project.answers()][:60]
    rng = np.random.default_rng(7)
    lines = [
        _line(sample_project, a, "firm", [str(rng.choice(["correct", "correct", "incorrect", "irrelevant"]))])
        for a in answers
    ]
    _import(sample_project, tmp_path, lines)
    return sample_project, answers


def test_gold_answers_are_mixed_into_a_queue_at_the_set_share(gold: tuple[Project, list[str]]) -> None:
    project, answers = gold
    reviewer = ReviewService(project, "cy")
    everything = reviewer.queue()
    assert len(everything) == len(project.answers())  # no share set: the queue is every answer
    qualification.configure(project, "lead", gold_share=0.2, gold=["firm"], seed=3)
    queue = [row.id for row in reviewer.queue()]
    mixed = [a for a in queue if a in set(answers)]
    assert len(queue) > 100
    assert abs(len(mixed) / len(queue) - 0.2) < 0.02
    assert set(queue) - set(mixed) == {a.id for a in project.answers()} - set(answers)  # all their own work
    assert queue == [row.id for row in ReviewService(project, "cy").queue()]  # seeded: the same each time
    assert {row.reviewers_done for row in reviewer.queue() if row.id in set(answers)} == {0}  # the gold's unsaid
    assert reviewer.queue_row(mixed[0]).reviewers_done == 0
    places = [n for n, a in enumerate(queue) if a in set(answers)]
    assert places[0] < len(queue) / 4 and places[-1] > 3 * len(queue) / 4  # spread, not stacked at one end
    other = [row.id for row in ReviewService(project, "dee").queue()]
    assert other != queue  # each reviewer's own draw

    # Unannounced: the gold tags stay hidden until the reviewer submits.
    first = mixed[0]
    state = reviewer.open(first)
    assert not any(t.rater == "firm" for p in state.points for t in p.others)
    for point in state.points:
        state = reviewer.set_tag(first, point.point.id, Tag.CORRECT)
    state = reviewer.submit(first)
    assert any(t.rater == "firm" for p in state.points for t in p.others)


def test_agreement_with_gold_is_sklearns_kappa_on_the_same_labels(
    gold: tuple[Project, list[str]], tmp_path: Path
) -> None:
    project, answers = gold
    qualification.configure(project, "lead", gold=["firm"], training=True)
    firm = {(a, p.text): p.tag.value for a in answers[:30] for p in project.data_points(a)["firm"]}
    rng = np.random.default_rng(11)
    gold_tags, cy_tags, lines = [], [], []
    for answer in answers[:30]:
        segments = segment_answer(project.answer(answer).text)
        mine = []
        for s in segments:
            truth = firm[(answer, s.text)]
            tag = truth if rng.random() < 0.7 else str(rng.choice(["correct", "incorrect", "irrelevant"]))
            gold_tags.append(truth)
            cy_tags.append(tag)
            mine.append({"text": s.text, "tag": tag})
        lines.append({"answer_id": answer, "rater": "cy", "data_points": mine})
    _import(project, tmp_path, lines)

    (cy,) = qualification.agreement_with_gold(project)
    assert cy["reviewer"] == "cy" and cy["answers"] == 30 and cy["n"] == len(gold_tags)
    assert cy["kappa"] == pytest.approx(cohen_kappa_score(gold_tags, cy_tags), abs=1e-12)
    low, high = cy["kappa_ci"]
    assert low < cy["kappa"] < high
    for tag, figures in cy["recall"].items():
        of_tag = [c for g, c in zip(gold_tags, cy_tags, strict=True) if g == tag]
        assert figures["n"] == len(of_tag)
        assert figures["recall"] == pytest.approx(sum(c == tag for c in of_tag) / len(of_tag))
        assert figures["ci"][0] <= figures["recall"] <= figures["ci"][1]

    feedback = qualification.training_feedback(project, "cy", answers[0])
    assert feedback is not None and [f["gold"] for f in feedback] == [
        firm[(answers[0], s.text)] for s in segment_answer(project.answer(answers[0]).text)
    ]


# ---------------------------------------------------------------- the command line


def _run(project: Project, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    status = main(["--db", project.url, *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_command_line_lists_decides_and_measures(
    disputed: tuple[Project, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    project, answers = disputed
    status, out, _ = _run(project, ["adjudicate", "--list", "--json"], capsys)
    assert status == 0
    (waiting,) = json.loads(out)["waiting"]
    assert waiting["answer_id"] == answers[0]
    assert [(p["point"], [o["tag"] for o in p["opinions"]]) for p in waiting["disputed_points"]] == [
        (2, ["correct", "incorrect"])
    ]
    assert {o["reviewer"] for o in waiting["disputed_points"][0]["opinions"]} == {"Reviewer A", "Reviewer B"}

    assert _run(project, ["adjudicators", "--set", "lead"], capsys)[0] == 0
    status, out, err = _run(
        project, ["adjudicate", answers[0], "--point", "2", "--tag", "correct", "--adjudicator", "ben"], capsys
    )
    assert status == 2 and out == "" and "ben is not an adjudicator" in err
    status, out, _ = _run(
        project,
        ["adjudicate", answers[0], "--point", "2", "--tag", "correct", "--reason", "guideline unclear",
         "--adjudicator", "lead", "--json"],
        capsys,
    )  # fmt: skip
    assert status == 0 and json.loads(out)["settled"]
    assert json.loads(_run(project, ["adjudicate", "--list", "--json"], capsys)[1]) == {"waiting": []}
    (unclear,) = json.loads(_run(project, ["adjudicate", "--unclear", "--json"], capsys)[1])["guideline_unclear"]
    assert unclear["answer_id"] == answers[0] and unclear["reviewers"] == {"ana": "correct", "ben": "incorrect"}
    assert unclear["decided"] == "correct" and unclear["point"]  # the words the next guideline must settle

    # ana and ben reviewed a settled answer: neither is measured on gold they made
    status, out, _ = _run(project, ["qualification", "--gold-share", "0.1", "--json"], capsys)
    result = json.loads(out)
    assert status == 0 and result["settings"]["gold_share"] == 0.1 and result["reviewers"] == []
    assert project.answers() and any(r.kind is RaterKind.HUMAN for r in _raters(project))


def _raters(project: Project) -> list:
    from storage import raters

    with project.sessions() as session:
        return raters.raters(session)
