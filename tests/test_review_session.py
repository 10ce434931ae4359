"""The review as a Qt-free session: what the keys do, undo and redo across answers, missing points,
sign-off refusals, and the one notification every view listens to. No window, no Qt."""

from __future__ import annotations

import json

import pytest

from app.errors import AssayError
from app.judging.runs import run_judge
from app.judging.standing import standing_of_run
from app.project import Project
from app.review import keymap
from app.review.service import ReviewService
from app.review.session import Changes, ReviewSession
from models.judge import LemajJudge, Mode
from models.vocabulary import ReviewStatus, Tag

from .test_judge import ScriptedBackendStandIn

ANSWER, NEXT = "contractnli-027", "contractnli-028"  # two answers about the DoiT NDA


def _judged(project: Project, answer_ids: list[str], tag: str = "incorrect") -> None:
    outputs = [json.dumps({"tag": tag})] * 100 + [json.dumps({"missing": []})] * 5
    run_judge(
        project.sessions,
        LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE),
        "judge-run",
        answer_ids=answer_ids,
    )


def _press(session: ReviewSession, key: str) -> None:
    """A key of the review's points table, as the keymap binds it (what the window's table does)."""
    binding = keymap.binding(keymap.REVIEW, key)
    assert binding is not None and binding.owner is ReviewSession, key
    binding.action(session, binding.argument) if binding.takes_argument else binding.action(session)


def _tags(project: Project, answer_id: str = ANSWER) -> list[Tag | None]:
    return [p.point.tag for p in ReviewService(project, "ana").state(answer_id).points]


@pytest.fixture
def session(sample_project: Project) -> ReviewSession:
    _judged(sample_project, [ANSWER, NEXT])
    return ReviewSession(sample_project, "ana", lambda rater: standing_of_run(sample_project.sessions, rater))


def test_the_review_keys_tag_accept_and_move_and_every_change_is_announced(session, sample_project) -> None:
    heard: list[Changes] = []
    session.subscribe(heard.append)
    assert session.open(ANSWER)
    assert heard[-1].opened and session.row == 0 and session.citations is not None
    assert session.passages and session.standing is not None  # what the panes need, read once here
    _press(session, "1")  # correct, and on to the next point
    assert _tags(sample_project)[0] is Tag.CORRECT and session.row == 1
    assert heard[-1].answer and heard[-1].point and heard[-1].rows == (ANSWER,)
    _press(session, "Return")  # the judge's tag: incorrect
    assert _tags(sample_project)[:2] == [Tag.CORRECT, Tag.INCORRECT] and session.row == 2
    _press(session, "K")
    _press(session, "3")
    assert _tags(sample_project)[1] is Tag.IRRELEVANT
    assert session.state is not None and session.state.scores.correctness == 1.0
    for _ in range(40):
        _press(session, "J")  # stops at the last point
    assert session.row == len(session.state.points) - 1


def test_undo_and_redo_across_answers_open_the_answer_they_change(session, sample_project) -> None:
    heard: list[Changes] = []
    session.subscribe(heard.append)
    session.open(ANSWER)
    session.tag_current(Tag.CORRECT)
    session.open(NEXT)
    session.tag_current(Tag.IRRELEVANT)
    assert _tags(sample_project, NEXT)[0] is Tag.IRRELEVANT
    assert session.undo() and _tags(sample_project, NEXT)[0] is None
    assert session.answer_id == NEXT and not heard[-1].opened
    assert session.undo() and _tags(sample_project)[0] is None
    assert session.answer_id == ANSWER and heard[-1].opened  # the queue follows to the answer undone
    assert not session.undo() and not session.can_undo  # nothing more to undo
    assert session.redo() and _tags(sample_project)[0] is Tag.CORRECT
    session.tag_current(Tag.INCORRECT)  # a new change: nothing left to redo
    assert not session.can_redo


def test_a_missing_point_is_added_at_the_end_and_selected(session) -> None:
    session.open(ANSWER)
    count = len(session.state.points)
    passage = session.passages[3].citation_id
    assert session.add_missing("  The NDA lasts   two years. ", [passage, "par_999"])
    missing = session.current_point
    assert missing is not None and session.row == count
    assert (missing.point.tag, missing.point.text, missing.citations) == (
        Tag.MISSING,
        "The NDA lasts two years.",
        (passage,),
    )
    heard: list[Changes] = []
    session.subscribe(heard.append)
    assert not session.add_missing("   ", [])  # nothing selected: one sentence, nothing added
    assert heard[-1].message and "select the text" in heard[-1].message
    assert len(session.state.points) == count + 1


def test_a_signed_review_refuses_every_change_until_reopened(session, sample_project) -> None:
    heard: list[Changes] = []
    session.subscribe(heard.append)
    session.open(ANSWER)
    assert not session.sign_off()  # not submitted yet
    assert "submit it first" in heard[-1].message
    assert not session.submit() and "still have no tag" in heard[-1].message
    for _ in session.state.points:
        session.accept_judge()
    assert session.submit() and heard[-1].advance == 1  # the queue goes on
    assert session.state.status is ReviewStatus.SUBMITTED
    assert session.sign_off() and heard[-1].message.startswith("Signed off")
    assert not session.tag_current(Tag.CORRECT) and "reopen it" in heard[-1].message
    assert not session.undo() and "reopen it" in heard[-1].message  # undo is a change too
    assert not session.reopen("  ") and "say why" in heard[-1].message
    assert session.reopen("point 1 is wrong") and session.state.signoff is None
    session.select(0)
    assert session.tag_current(Tag.CORRECT) and _tags(sample_project)[0] is Tag.CORRECT
    session.open(NEXT)
    session.open(ANSWER)
    assert heard[-1].message is None  # no sign-off stands: nothing to say on opening


def test_a_change_elsewhere_shows_in_the_open_answer_and_tells_its_source(session, sample_project) -> None:
    heard: list[Changes] = []
    session.subscribe(heard.append)
    session.open(ANSWER)
    side = object()  # side by side, as a source
    point = session.state.points[2].point.id
    assert session.tag(ANSWER, point, Tag.IRRELEVANT, source=side)
    assert session.state.points[2].point.tag is Tag.IRRELEVANT and heard[-1].answer and heard[-1].source is side
    assert session.tag(NEXT, ReviewService(sample_project, "ana").open(NEXT).points[0].point.id, Tag.CORRECT)
    assert not heard[-1].answer and heard[-1].rows == (NEXT,)  # another answer: its queue row only


def test_the_next_answer_is_prepared_and_a_save_makes_it_stale(session) -> None:
    session.open(ANSWER)
    prepared = session.prepare(NEXT)
    assert prepared is not None and session.is_prepared(NEXT) and prepared.citations is not None
    assert session.open(NEXT) and session.previewing  # shown from the preview, saved after its frame
    session.finish_opening()
    assert not session.previewing and session.state.status is ReviewStatus.UNREVIEWED  # opened: started at a tag
    session.prepare(ANSWER)
    session.service.set_tag(ANSWER, session.state_of(ANSWER).points[0].point.id, Tag.CORRECT)
    assert not session.is_prepared(ANSWER)  # the save changed what opening it shows


def test_the_keymap_is_one_table_the_help_and_legends_read() -> None:
    assert keymap.binding(keymap.REVIEW, "2").argument is Tag.INCORRECT
    assert keymap.binding(keymap.ADJUDICATION, "Del").action is keymap.AdjudicationKeys.decide
    assert keymap.binding(keymap.SIDE_BY_SIDE, "B").argument == "right"
    assert keymap.binding(keymap.ADJUDICATION, "B").argument == keymap.BOTH_DEFENSIBLE
    assert keymap.binding(keymap.REVIEW, "X") is None
    rows = dict(keymap.help_rows(keymap.REVIEW))
    assert rows["J / K"] == "Next / previous data point" and rows["Enter"] == "Accept the judge's tag"
    assert keymap.shortcut(ReviewSession.undo) == "Ctrl+Z"
    assert keymap.shortcut(keymap.WindowKeys.move_answer, -1) == "Ctrl+Up"
    assert keymap.legend(keymap.REVIEW).startswith("1 correct · 2 incorrect · 3 irrelevant · 4 missing")
    for view in (keymap.REVIEW, keymap.SIDE_BY_SIDE, keymap.ADJUDICATION, keymap.WINDOW):  # a key does one thing
        keys = [k for b in keymap.KEYMAP if b.view == view for k in b.keys]
        assert len(keys) == len(set(keys)), view


def test_a_reviewer_is_a_human_rater_and_a_judge_runs_name_is_refused_in_one_sentence(session, sample_project) -> None:
    from app.raters import NotAReviewer, human_named

    with pytest.raises(AssayError, match=r"^'judge-run' is the name of a judge run in this project; choose another"):
        ReviewService(sample_project, "judge-run")
    with sample_project.sessions() as db:
        assert human_named(db, "ana").name == "ana"  # the session's reviewer, added when it opened
        for name in ("judge-run", "nobody"):
            with pytest.raises(NotAReviewer, match=rf"^no reviewer named '{name}' in this project$"):
                human_named(db, name)


def test_a_restore_leaves_no_listener_counting_commits(session: ReviewSession, sample_project: Project) -> None:
    """After a restore the session's fresh service counts the project's commits; the replaced one no longer
    does (each restore used to leave one more listener on every commit)."""
    from sqlalchemy import event

    replaced = session.service
    session.restored()
    session.restored()
    assert not event.contains(sample_project.sessions, "after_commit", replaced._on_commit)
    assert event.contains(sample_project.sessions, "after_commit", session.service._on_commit)
    before = session.service.saves
    with sample_project.sessions.begin() as s:
        s.info["touched"] = True
    assert session.service.saves == before + 1 and replaced.saves == 0


def test_every_review_key_reaches_a_session_action_that_changes_something(session, sample_project) -> None:
    """Walks the keymap: each key of the review's points table is bound to a ReviewSession method, and
    pressing it on an open answer is announced as a change (4 asks the window for the selected text first,
    then calls the session's add_missing)."""
    bindings = [b for b in keymap.KEYMAP if b.view == keymap.REVIEW]
    assert {b.keys[0] for b in bindings} >= {"1", "2", "3", "4", "Return", "J", "K"}
    heard: list[Changes] = []
    session.subscribe(heard.append)
    for binding in bindings:
        assert session.open(ANSWER)
        session.move(1 if session.row == 0 else -1)  # never on the last point, so J and K both move
        before = len(heard)
        if binding.action is keymap.AnswerPaneKeys.add_missing_from_selection:
            session.add_missing("Confidential Information", [])
        else:
            assert binding.owner is ReviewSession, binding
            binding.action(session, binding.argument) if binding.takes_argument else binding.action(session)
        assert len(heard) > before, f"key {binding.keys[0]} ({binding.label}) changed nothing anyone heard"
