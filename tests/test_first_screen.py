"""What a new user sees first: the sample with the judge's tags, a queue that fits, a document opened
where the point is, and a plain sentence instead of Qt's abort when a system library is missing."""

from __future__ import annotations

import json
import sys
import threading

import pytest
from PySide6.QtCore import Qt, QUrl

from app.judging.runs import run_judge
from app.judging.sample_tour import check_sample, labelled_ids, sample_tour
from app.judging.verification import VERIFIER
from app.project import Project
from app.review.service import ReviewService
from app.workspace import Workspace
from models.judge import LemajJudge, Mode
from models.vocabulary import PassageKind, Tag
from storage import documents
from ui import platform_check
from ui.item_models import CLEARED, FLAGGED, AnswerQueueModel
from ui.review.window import ReviewWindow

from .test_judge import ScriptedBackendStandIn
from .test_ui import SHOTS

WITH_CONTENTS = "contractnli-000"  # the CopAcc NDA: its table of contents fills a screen with dots


def _judge(project: Project, answer_ids: list[str], tag: str) -> None:
    outputs = [json.dumps({"tag": tag})] * 200 + [json.dumps({"missing": []})] * 10
    judge = LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE)
    run_judge(project.sessions, judge, "judge", answer_ids=answer_ids)


def test_the_sample_tour_starts_on_the_shortest_contract_once(sample_project: Project, project: Project) -> None:
    tour = sample_tour(sample_project)
    labelled = labelled_ids()  # checked when the sample was made
    assert tour is not None and set(tour.answer_ids) == {a.id for a in sample_project.answers()} - labelled
    first = sample_project.answer(tour.first_answer)
    assert first.document == "DoiT-ICN-NonDisclosure-Agreement.txt"  # 4 kB: judged first, read first
    assert sample_tour(project) is None  # an empty project is not the sample
    _judge(sample_project, [tour.first_answer], "correct")
    assert sample_tour(sample_project) is None  # a project someone has judged already is left alone


def test_a_judged_answer_replaces_an_untouched_copy_but_never_the_reviewers_work(sample_project: Project) -> None:
    ana, ben = ReviewService(sample_project, "ana"), ReviewService(sample_project, "ben")
    answer = "contractnli-027"
    assert all(p.judge_tag is None for p in ana.open(answer).points)  # opened before the judge ran
    ben.open(answer)
    first = ben.state(answer).points[0].point.id
    ben.set_tag(answer, first, Tag.INCORRECT)
    _judge(sample_project, [answer], "correct")
    adopted = ana.adopt_judge(answer)
    assert adopted is not None and {p.judge_tag for p in adopted.points} == {Tag.CORRECT}
    assert all(p.point.tag is None for p in adopted.points)  # the tags stay the reviewer's to give
    assert ben.adopt_judge(answer) is None  # ben's tag stands
    assert ben.state(answer).points[0].point.tag is Tag.INCORRECT


def test_the_queue_fits_and_says_judged_flagged_and_reviewed(qtbot, sample_project: Project) -> None:
    _judge(sample_project, ["contractnli-027"], "correct")
    _judge(sample_project, ["contractnli-028"], "incorrect")
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.open_answer("contractnli-027")
    for _ in window.state.points:
        qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Return)  # accept the judge's tag
    window.submit()

    def row(answer_id: str) -> list[str]:
        index = next(i for i, r in enumerate(window.queue_pane.model.rows) if r.id == answer_id)
        return [window.queue_pane.model.index(index, c).data() for c in range(window.queue_pane.model.columnCount())]

    cleared, flagged, untouched = row("contractnli-027"), row("contractnli-028"), row("cuad-000")
    assert cleared[1:5] == [CLEARED, "1.00", "1.00", "✔ reviewed"]
    assert flagged[1] == FLAGGED and flagged[2] == "0.00"
    assert untouched[1:5] == ["—", "—", "—", "—"]
    header, table = window.queue_pane.table.horizontalHeader(), window.queue_pane.table
    for column in range(1, window.queue_pane.model.columnCount()):  # no cell is cut: every column as wide as its text
        assert header.isSectionHidden(column) or header.sectionSize(column) >= table.sizeHintForColumn(column) - 1
    # but the answer's: its question's start, elided to the pane's width, whole in the tooltip
    assert header.length() <= table.viewport().width()  # and no sideways scrolling

    window.queue_pane.documents.setCurrentIndex(window.queue_pane.documents.findData("Keep.txt"))
    assert window.queue_pane.model.rowCount() == 31  # the 31 privacy-policy answers
    window.queue_pane.filter.setText("marketing")  # words of the question, which is in no column
    qtbot.waitUntil(lambda: 0 < window.queue_pane.model.rowCount() < 31)  # once the typing pauses


def test_the_queue_reads_judge_counts_a_page_at_a_time_and_sorts_every_answer(
    qtbot, sample_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    for answers, tag in ((["contractnli-027", "cuad-003"], "correct"), (["contractnli-028"], "incorrect")):
        _judge(sample_project, answers, tag)
    _judge(sample_project, ["cuad-001"], "irrelevant")
    monkeypatch.setattr(AnswerQueueModel, "PAGE", 4)  # many pages, each read when its rows are shown
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    model, table = window.queue_pane.model, window.queue_pane.table

    def cells(queue: AnswerQueueModel, r: int) -> list[str]:  # the answer's id for its column's question and document
        return [queue.answer_at(r).id, *(queue.index(r, c).data() for c in range(1, queue.columnCount()))]

    def shown() -> list[list[str]]:
        return [cells(model, r) for r in range(model.rowCount())]

    paged = shown()
    assert [row[0] for row in paged] == sorted(a.id for a in sample_project.answers())  # every answer, by id
    at_once = AnswerQueueModel(window.session.service.queue(), window.session.service.judge_counts)
    at_once.PAGE = 1000
    assert paged == [cells(at_once, r) for r in range(at_once.rowCount())]
    assert {row[0]: row[1:4] for row in paged if row[1] != "—"} == {
        "contractnli-027": [CLEARED, "1.00", "1.00"],
        "cuad-003": [CLEARED, "1.00", "1.00"],
        "contractnli-028": [FLAGGED, "0.00", "—"],
        "cuad-001": [FLAGGED, "—", "—"],  # irrelevant: neither correct nor incorrect
    }

    window.open_answer("contractnli-028")
    table.sortByColumn(2, Qt.SortOrder.AscendingOrder)  # correctness: lowest first, undefined last
    assert [row[2] for row in shown()] == ["0.00", "1.00", "1.00"] + ["—"] * (model.rowCount() - 3)
    assert model.answer_at(table.currentIndex().row()).id == window.state.answer.id == "contractnli-028"  # still open
    window.queue_pane.filter.setText("flagged")
    qtbot.waitUntil(lambda: sorted(row[0] for row in shown()) == ["contractnli-028", "cuad-001"])
    assert window.state.answer.id == "contractnli-028"  # still shown, still open
    window.queue_pane.filter.setText("")
    qtbot.waitUntil(lambda: model.rowCount() > 2)
    window.queue_pane.documents.setCurrentIndex(
        window.queue_pane.documents.findData("Keep.txt")
    )  # the open answer is hidden:
    assert window.state.answer.document == "Keep.txt" == model.answer_at(0).document  # the first one shown opens
    assert table.currentIndex().row() == 0
    window.queue_pane.documents.setCurrentIndex(0)
    table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert [row[:4] for row in shown()] == [row[:4] for row in paged]


def test_the_document_opens_at_the_point_with_its_contents_folded(qtbot, sample_project: Project) -> None:
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    window.open_answer(WITH_CONTENTS)
    view = window.document_pane.view
    contents = [p for p in view.passages if p.kind is PassageKind.TOC]
    assert len(contents) == 14
    text = view.toPlainText()
    assert "14 lines of contents, folded" in text and "Eligibility" not in text.split("Preamble")[0]
    assert view.focused is not None  # the pane is at a passage the selected point is about
    point = window.session.current_point
    assert view.focused in point.citations or not point.citations
    cursor_top = view.cursorRect(view.textCursor()).top()
    assert 0 <= cursor_top < view.viewport().height()
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / "first-screen-contents-folded.png"))

    view.anchorClicked.emit(QUrl("contents:show"))
    text = view.toPlainText()
    assert "1 Eligibility  · 2" in text and "....." not in text  # the leaders dropped, the page kept
    assert "folded" not in text


def _unread(project: Project) -> set[str]:
    """The documents the claim checker has not read whole yet, by name."""
    with project.sessions() as session:
        unread = set(documents.unread(session))
        names = documents.document_names(session)
        return {name for name in names if documents.document_id_by_name(session, name) in unread}


def test_the_sample_is_checked_by_the_claim_checker_with_no_model(sample_project: Project) -> None:
    """The tour reads the contracts the sample was made without reading (test_real_standing.py) once it has checked
    its answers, and keeps what it read for every check after it."""
    assert _unread(sample_project) == {a.document for a in sample_project.answers()}  # imported, none read
    tour = sample_tour(sample_project)
    short = type(tour)(tour.answer_ids[:2])
    progress = []
    summary = check_sample(sample_project, short, on_progress=progress.append)
    assert summary.judged == 2 and [p.done for p in progress] == [1, 2]
    assert _unread(sample_project) == set()
    raters = sample_project.data_points(tour.first_answer)  # the checker's verdicts are saved, nothing else
    assert set(raters) == {VERIFIER}
    tags = [p.tag for p in raters[VERIFIER]]
    assert set(tags) <= {Tag.CORRECT, Tag.INCORRECT, None}  # confirmed, flagged, or left to the reviewer
    assert sample_tour(sample_project) is None  # once only


def test_a_cancelled_sample_tour_reads_no_more_contracts(sample_project: Project) -> None:
    tour = sample_tour(sample_project)
    before, cancel = _unread(sample_project), threading.Event()
    cancel.set()  # the window closed before the tour began
    assert check_sample(sample_project, tour, cancel=cancel).judged == 0
    assert _unread(sample_project) == before


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, ["xcb"]),
        ({"QT_QPA_PLATFORM": "offscreen"}, ["offscreen"]),
        ({"QT_QPA_PLATFORM": "wayland;xcb"}, ["wayland", "xcb"]),
        ({"XDG_SESSION_TYPE": "wayland", "DISPLAY": ":0"}, ["wayland", "xcb"]),
        ({"WAYLAND_DISPLAY": "wayland-0"}, ["wayland", "xcb"]),
    ],
)
def test_the_platforms_qt_will_try(environment: dict[str, str], expected: list[str]) -> None:
    assert platform_check.platforms(environment) == expected


def test_a_missing_library_is_named_with_the_package_to_install() -> None:
    message = platform_check.message("xcb", ["libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libfoo.so.9"])
    assert "sudo apt-get install libxcb-icccm4 libxcb-keysyms1" in message
    assert "provide: libfoo.so.9" in message


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ldd and Qt's xcb/wayland plugins are Linux's")
def test_make_install_left_nothing_missing_for_the_xcb_and_wayland_plugins() -> None:
    for platform in ("xcb", "wayland"):
        plugin = platform_check.plugin_path(platform)
        assert plugin is not None and platform_check.unresolved(plugin) == [], "run `make install`"
