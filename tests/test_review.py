"""A reviewer's actions, without a window: each saved at once, undoable, scored live."""

from __future__ import annotations

import json

import pytest

from app.errors import AssayError
from app.judging.runs import run_judge
from app.project import Project
from app.raters import set_default
from app.review.service import BLIND, ReviewService
from app.review.session import ReviewSession
from models.judge import LemajJudge, Mode
from models.vocabulary import ReviewStatus, Tag
from storage import judgements, raters
from storage.db import url_for_path

from .test_judge import ScriptedBackendStandIn

ANSWER = "contractnli-027"  # DoiT NDA


def _judged(project: Project, tag: str = "incorrect") -> None:
    outputs = [json.dumps({"tag": tag})] * 50 + [json.dumps({"missing": []})]
    run_judge(
        project.sessions, LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE), "judge-run", answer_ids=[ANSWER]
    )


@pytest.mark.every_store
def test_reviewer_starts_from_the_judges_points_and_overrides_them(sample_project: Project) -> None:
    _judged(sample_project)
    ana = ReviewService(sample_project, "ana")
    state = ana.open(ANSWER)
    assert state.status is ReviewStatus.UNREVIEWED and state.judge_visible  # read, not started: nothing tagged
    assert state.points and all(p.judge_tag is Tag.INCORRECT and p.point.tag is None for p in state.points)
    first, second = state.points[0].point.id, state.points[1].point.id
    state = ana.accept_judge(ANSWER, first)
    assert state.status is ReviewStatus.IN_REVIEW  # the first tag starts the review
    state = ana.set_tag(ANSWER, second, Tag.CORRECT)
    assert [p.point.tag for p in state.points[:2]] == [Tag.INCORRECT, Tag.CORRECT]
    assert (state.scores.correct, state.scores.incorrect, state.scores.correctness) == (1, 1, 0.5)

    # Saved at once: a new process (a new service on the same file) sees the same tags.
    sample_project.close()
    reopened = Project.open(sample_project.url)
    again = ReviewService(reopened, "ana").state(ANSWER)
    assert [p.point.tag for p in again.points[:2]] == [Tag.INCORRECT, Tag.CORRECT]
    # The judge's own labels are untouched.
    assert all(p.judge_tag is Tag.INCORRECT for p in again.points)
    reopened.close()


@pytest.mark.every_store
def test_split_merge_delete_add_missing_and_undo_everything(sample_project: Project) -> None:
    session = ReviewSession(sample_project, "ana")
    ana = session.service
    start = ana.open(ANSWER)  # no judge run: the deterministic segmentation
    texts = [p.point.text for p in start.points]
    answer = start.answer.text
    point = start.points[0].point
    cut = point.text.index(" ", len(point.text) // 2)
    state = ana.split(ANSWER, point.id, cut)
    assert len(state.points) == len(texts) + 1
    left, right = state.points[0].point, state.points[1].point
    assert (
        answer[left.span_start : left.span_end] == left.text and answer[right.span_start : right.span_end] == right.text
    )
    state = ana.merge_with_next(ANSWER, left.id)
    assert [p.point.text for p in state.points] == texts
    state = ana.add_missing(ANSWER, "  The NDA lasts   two years. ", ["par_3", "par_999"])
    missing = state.points[-1]
    assert (missing.point.tag, missing.point.text, missing.citations) == (
        Tag.MISSING,
        "The NDA lasts two years.",
        ("par_3",),
    )
    assert state.scores.missing == 1 and state.scores.recall == 0.0
    state = ana.delete(ANSWER, state.points[0].point.id)
    assert len(state.points) == len(texts)
    for _ in range(4):
        assert session.undo()
    assert [p.point.text for p in ana.state(ANSWER).points] == texts and not session.can_undo
    assert session.redo() and len(ana.state(ANSWER).points) == len(texts) + 1


@pytest.mark.every_store
def test_blind_mode_hides_the_judge_until_submission(sample_project: Project) -> None:
    _judged(sample_project)
    ben = ReviewService(sample_project, "ben")
    ben.set_mode(BLIND)
    state = ben.open(ANSWER)
    assert not state.judge_visible and all(p.judge_tag is None for p in state.points)
    with pytest.raises(AssayError, match="still have no tag"):
        ben.submit(ANSWER)
    for point in state.points:
        ben.set_tag(ANSWER, point.point.id, Tag.CORRECT)
    state = ben.rate(ANSWER, 5, 4)
    state = ben.submit(ANSWER)
    assert state.status is ReviewStatus.SUBMITTED and state.judge_visible
    assert all(p.judge_tag is Tag.INCORRECT for p in state.points)
    assert (state.holistic_correctness, state.holistic_relevance) == (5, 4)
    assert next(r for r in ben.queue() if r.id == ANSWER).reviewers_done == 1


def test_each_reviewer_has_labels_of_their_own(tmp_path) -> None:
    from app.ingest.datasets import import_dataset
    from app.project import SAMPLE_DATASET

    project = Project.open(url_for_path(tmp_path / "p.assay"))
    import_dataset(project.sessions, SAMPLE_DATASET)
    ana, ben = ReviewService(project, "ana"), ReviewService(project, "ben")
    a_point = ana.open(ANSWER).points[0].point.id
    ben_state = ben.open(ANSWER)
    ana.set_tag(ANSWER, a_point, Tag.IRRELEVANT)
    assert all(p.point.tag is None for p in ben.state(ANSWER).points)
    assert {p.point.id for p in ben_state.points}.isdisjoint({a_point})
    with pytest.raises(AssayError, match="judge run"):
        _judged(project)
        ReviewService(project, "judge-run")


def _judge_counts_one_by_one(project: Project, rater: str) -> dict[str, tuple[int, ...]]:
    """The queue's judge counts, the slow way: every point of the rater looked at, its tags counted."""
    with project.sessions() as session:
        found = raters.rater_named(session, rater)
        judged = [a for a, o in judgements.judge_outcomes(session, found.id).items() if o.status.value == "judged"]
        counts = {}
        for answer_id in judged:
            tags = [p.tag for p in judgements.data_points_of(session, answer_id, found.id)]
            counts[answer_id] = (*(sum(tag is t for tag in tags) for t in Tag), sum(tag is None for tag in tags))
    return counts


@pytest.mark.every_store
def test_the_queue_counts_the_default_raters_tags_of_a_page_as_of_every_answer(sample_project: Project) -> None:
    ids = [a.id for a in sample_project.answers() if a.document.startswith("DoiT")][:4]
    tags = ["correct", "incorrect", "irrelevant"]
    first = [json.dumps({"tag": t}) for t in tags * 60] + [json.dumps({"missing": []})] * 9
    run_judge(
        sample_project.sessions, LemajJudge(ScriptedBackendStandIn(first), Mode.TWO_STAGE), "run-1", answer_ids=ids
    )
    again = [json.dumps({"tag": "correct"})] * 60 + [json.dumps({"missing": []})] * 9
    run_judge(
        sample_project.sessions, LemajJudge(ScriptedBackendStandIn(again), Mode.TWO_STAGE), "run-2", answer_ids=ids[:2]
    )
    ana = ReviewService(sample_project, "ana")
    state = ana.open(ids[0])
    ana.set_tag(ids[0], state.points[0].point.id, Tag.INCORRECT)  # a reviewer's tag is not the judge's
    latest = _judge_counts_one_by_one(sample_project, "run-2")  # neither is measured: the latest run speaks
    assert set(latest) == set(ids[:2]) and all(c[1:] == (0, 0, 0, 0) for c in latest.values())  # correct to all
    assert ana.judge_counts() == latest
    set_default(sample_project.sessions, "run-1", "lead")  # the lead chooses the other run
    ana.refresh_judge_rater()
    expected = _judge_counts_one_by_one(sample_project, "run-1")
    assert set(expected) == set(ids) and expected[ids[2]][1] > 0  # run-1 did not say correct to all
    assert ana.judge_counts() == expected
    page = [ids[1], ids[3], "cuad-000"]  # cuad-000: never judged
    assert ana.judge_counts(page) == {a: expected[a] for a in page if a in expected}
