"""The reviewer's window, driven with the keyboard as a lawyer would (pytest-qt, offscreen)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QEventLoop, Qt, SignalInstance
from PySide6.QtGui import QTextCursor

from app.judging.runs import JudgeSettings, run_judge
from app.project import Project
from app.review.service import ReviewService
from app.workspace import Workspace
from models.judge import LemajJudge, Mode
from models.rubrics import Rubric
from models.vocabulary import Tag
from storage.statistics import real_label_figures
from ui.review.window import ReviewWindow

from .test_judge import ScriptedBackendStandIn

ANSWER = "contractnli-027"  # a DoiT NDA answer: a short real contract
SHOTS = Path(__file__).resolve().parent.parent / "build" / "screenshots"


def _judge(project: Project, answer_ids: list[str], tag: str = "incorrect", run: str = "judge-run") -> None:
    outputs = [json.dumps({"tag": tag})] * 200 + [json.dumps({"missing": []})] * 10
    run_judge(
        project.sessions,
        LemajJudge(ScriptedBackendStandIn(outputs), Mode.TWO_STAGE),
        run,
        answer_ids=answer_ids,
    )


@pytest.fixture
def window(qtbot, sample_project: Project) -> ReviewWindow:
    _judge(sample_project, [ANSWER, "contractnli-028"])
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    window.open_answer(ANSWER)
    window.answer_pane.points.setFocus()
    return window


def _tags(project: Project, reviewer: str = "ana") -> list[Tag | None]:
    return [p.point.tag for p in ReviewService(project, reviewer).state(ANSWER).points]


def _shot(window: ReviewWindow, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert window.grab().save(str(SHOTS / name))


def test_override_with_one_key_and_accept_with_enter(qtbot, window: ReviewWindow, sample_project: Project) -> None:
    assert window.state.answer.id == ANSWER
    assert window.answer_pane.points_model.index(0, 2).data() == "✗ incorrect"  # the judge's tag, as text too
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_1)  # 1 = correct, then on to the next point
    assert window.answer_pane.points.currentIndex().row() == 1
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Return)  # accept the judge's "incorrect"
    assert _tags(sample_project)[:2] == [Tag.CORRECT, Tag.INCORRECT]
    assert window.answer_pane.points.currentIndex().row() == 2
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_K)
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_3)
    assert _tags(sample_project)[1] is Tag.IRRELEVANT
    # Live scores: one correct, one irrelevant.
    assert (
        "Correctness</b> 1.00" in window.answer_pane.scores.text()
        and "Precision</b> 0.50" in window.answer_pane.scores.text()
    )
    _shot(window, "review-tagged.png")


def test_undo_and_redo_from_the_keyboard(qtbot, window: ReviewWindow, sample_project: Project) -> None:
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_2)
    assert _tags(sample_project)[0] is Tag.INCORRECT
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert _tags(sample_project)[0] is None
    qtbot.keyClick(
        window.answer_pane.points, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert _tags(sample_project)[0] is Tag.INCORRECT


def test_missing_point_from_text_selected_in_the_document(qtbot, window: ReviewWindow, sample_project: Project) -> None:
    view = window.document_pane.view
    target = next(p for p in view.passages if "return" in p.text.lower())
    block = view.document().findBlockByNumber(view._block_of[target.citation_id])
    cursor = QTextCursor(block)
    start = block.text().index(target.text[:20])
    cursor.setPosition(block.position() + start)
    cursor.setPosition(block.position() + start + len(target.text), QTextCursor.MoveMode.KeepAnchor)
    view.setTextCursor(cursor)
    window.answer_pane.points.setFocus()
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_4)
    missing = window.state.points[-1]
    assert missing.point.tag is Tag.MISSING and missing.citations == (target.citation_id,)
    assert missing.point.text == " ".join(target.text.split())
    assert "+ missing" in window.answer_pane.answer_view.toPlainText()
    assert "Recall</b> 0.00" in window.answer_pane.scores.text()


def test_clicking_a_citation_scrolls_to_and_highlights_its_passage(qtbot, window: ReviewWindow) -> None:
    cited = next(p for p in window.state.points if p.passages)  # the judge's evidence: no reviewer cited yet
    row = window.state.points.index(cited)
    window.answer_pane.points.selectRow(row)
    window.document_pane.view.verticalScrollBar().setValue(window.document_pane.view.verticalScrollBar().maximum())
    rect = window.answer_pane.points.visualRect(window.answer_pane.points_model.index(row, 5))
    qtbot.mouseClick(window.answer_pane.points.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert window.document_pane.view.focused == cited.passages[0]
    cursor_rect = window.document_pane.view.cursorRect(window.document_pane.view.textCursor())
    assert 0 <= cursor_rect.top() < window.document_pane.view.viewport().height()
    _shot(window, "review-citation.png")


def test_selecting_a_point_scrolls_to_its_evidence(qtbot, window: ReviewWindow) -> None:
    assert all(p.passages for p in window.state.points)  # every judge tag carries its passages (its evidence)
    window.document_pane.view.verticalScrollBar().setValue(window.document_pane.view.verticalScrollBar().maximum())
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_J)
    point = window.state.points[window.answer_pane.points.currentIndex().row()]
    assert window.document_pane.view.focused == point.passages[0]  # the most relevant passage, highlighted
    cursor_rect = window.document_pane.view.cursorRect(window.document_pane.view.textCursor())
    assert 0 <= cursor_rect.top() < window.document_pane.view.viewport().height()


def test_ctrl_f_lists_bm25_hits_and_opens_the_best(qtbot, window: ReviewWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.document_pane.search.hasFocus()
    qtbot.keyClicks(window.document_pane.search, "return confidential information")
    qtbot.keyClick(window.document_pane.search, Qt.Key.Key_Return)
    assert window.document_pane.hits.count() >= 1
    qtbot.keyClick(window.document_pane.hits, Qt.Key.Key_Return)
    best = window.document_pane.hits.item(0).data(Qt.ItemDataRole.UserRole)
    assert window.document_pane.view.focused == best
    assert "return" in next(p for p in window.document_pane.view.passages if p.citation_id == best).text.lower()


def test_blind_mode_hides_the_judge(qtbot, window: ReviewWindow) -> None:
    window.blind_action.trigger()
    assert {
        window.answer_pane.points_model.index(r, 2).data() for r in range(window.answer_pane.points_model.rowCount())
    } == {"—"}
    assert "blind" in window.answer_pane.scores.text()
    window.blind_action.trigger()
    assert window.answer_pane.points_model.index(0, 2).data() == "✗ incorrect"


def test_submit_moves_on_and_a_problem_is_one_sentence(qtbot, window: ReviewWindow) -> None:
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert "still have no tag" in window.message.text()  # said in the window, nothing raised
    for _ in window.state.points:
        qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Return)
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert window.state.answer.id != ANSWER  # on to the next answer
    row = next(r for r in window.queue_pane.model.rows if r.id == ANSWER)
    assert row.status.value == "submitted" and row.reviewers_done == 1


def test_submit_after_a_judge_run_ended_goes_to_the_next_answer_not_the_top(qtbot, window: ReviewWindow) -> None:
    queue = window.queue_pane
    queue.table.selectRow(5)
    opened, following = queue.model.answer_at(5).id, queue.model.answer_at(6).id
    assert window.session.answer_id == opened
    window.session.run_ended()  # a judge run's end reads the queue again
    assert queue.table.currentIndex().row() == 5  # the open answer's row stays selected
    for _ in window.state.points:
        qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_1)
    qtbot.mouseClick(window.answer_pane.submit_button, Qt.MouseButton.LeftButton)
    assert "Review submitted" in window.message.text()
    assert window.session.answer_id == following and queue.table.currentIndex().row() == 6


def test_judge_run_from_the_window_can_be_cancelled(qtbot, window: ReviewWindow, sample_project: Project) -> None:
    ids = [a.id for a in sample_project.answers() if a.document.startswith("DoiT")][2:5]
    worker = window.start_judge(JudgeSettings(context_tokens=4096, threads=2), ids)  # the embedded model, for real
    assert window.judge_runner.cancel_button.isVisible()
    qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_1)  # the window stays usable while the judge works
    assert _tags(sample_project)[0] is Tag.CORRECT
    runner = window.judge_runner
    judged_or_failed = lambda: runner.progress.maximum() > 0 or window.worker is None  # noqa: E731
    _until(judged_or_failed, runner.answerJudged, worker.signals.failed)  # the first answer is judged
    assert "Judged 1/3" in window.message.text() and "tokens/s" in window.message.text()
    qtbot.mouseClick(window.judge_runner.cancel_button, Qt.MouseButton.LeftButton)
    _until(lambda: window.worker is None, runner.runEnded, worker.signals.failed)
    assert "cancelled: run it again to resume" in window.message.text()
    judged = int(window.message.text().split(": ")[1].split(" judged")[0])
    assert 1 <= judged < len(ids) and not window.judge_runner.cancel_button.isVisible()


def _until(happened: Callable[[], bool], *events: SignalInstance) -> None:
    """Wait for an event, however long a busy machine takes (no deadline): `happened` is looked at after
    each of `events` (connected before the first look, so none is missed); one of them must be the end of
    what is waited for, failure included, or this waits for ever."""
    loop = QEventLoop()
    for event in events:
        event.connect(loop.quit)
    try:
        while not happened():
            loop.exec()
    finally:
        for event in events:
            event.disconnect(loop.quit)


def test_gui_command_opens_an_answer_and_saves_a_screenshot(sample_project: Project, tmp_path: Path) -> None:
    from ui.main import main

    _judge(sample_project, [ANSWER])
    path = sample_project.url.removeprefix("sqlite:///")
    sample_project.close()
    shot = SHOTS / "gui-open.png"
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert main(["--project", path, "gui", "--open", ANSWER, "--reviewer", "ana", "--screenshot", str(shot)]) == 0
    assert shot.stat().st_size > 20_000


def test_dashboard_shows_scores_agreement_and_plots(qtbot, window: ReviewWindow, sample_project: Project) -> None:
    for _ in window.state.points:
        qtbot.keyClick(window.answer_pane.points, Qt.Key.Key_1)
    with qtbot.waitSignal(window.dashboard.refreshed, timeout=300_000):  # computed in the background
        window.tabs.setCurrentWidget(window.dashboard)
    dashboard = window.dashboard
    raters = {dashboard.table.item(r, 0).text() for r in range(dashboard.table.rowCount())}
    assert raters == {"ana", "judge-run"}
    assert "Cohen's κ" in dashboard.agreement.text() and "ana" in dashboard.agreement.text()
    assert dashboard.figure_choice.count() >= 4 and dashboard.canvas_holder.count() == 1
    dashboard.rater.setCurrentText("ana")
    assert {dashboard.table.item(r, 0).text() for r in range(dashboard.table.rowCount())} == {"ana"}
    _shot(window, "dashboard.png")


def test_the_window_names_the_host_while_an_api_judge_runs(qtbot, window: ReviewWindow) -> None:
    from tests.judge_helpers import chat_reply, scripted_http_server

    with scripted_http_server([(200, chat_reply('{"tag": "correct"}'))] * 200) as (url, _):
        settings = JudgeSettings(backend="openai", base_url=url, model="m", allow_network=True, find_missing=False)
        window.start_judge(settings, [ANSWER])
        assert window.judge_runner.network_banner.isVisible()
        assert (
            "127.0.0.1" in window.judge_runner.network_banner.text()
            and "on-premise" in window.judge_runner.network_banner.text()
        )
        qtbot.waitUntil(lambda: window.worker is None, timeout=60_000)
    assert not window.judge_runner.network_banner.isVisible() and "1 judged" in window.message.text()


def test_judge_dialog_says_where_data_goes_and_builds_the_settings(qtbot) -> None:
    from ui.judge_dialog import JudgeDialog

    dialog = JudgeDialog(selected_answer=ANSWER)
    qtbot.addWidget(dialog)
    picker = dialog.picker
    assert "nothing leaves it" in picker.where.text() and dialog.run_button.isEnabled()
    picker.kind_box.setCurrentIndex(2)  # OpenAI-compatible server
    picker.base_url.setText("https://llm.example.com/v1")
    assert "llm.example.com" in picker.where.text() and not dialog.run_button.isEnabled()
    picker.allow.setChecked(True)
    dialog.rubric.setCurrentIndex(dialog.rubric.findData(Rubric.COVERAGE))
    settings = dialog.settings()
    assert dialog.run_button.isEnabled() and settings.allow_network and settings.backend == "openai"
    assert settings.rubric.value == "coverage" and dialog.answer_ids() == [ANSWER]


# ---------------------------------------------------------------- first run and help


def test_welcome_explains_itself_and_opens_the_sample(qtbot, monkeypatch, tmp_path: Path) -> None:
    from app.settings import Settings
    from ui.welcome import WelcomeWindow

    monkeypatch.setattr("ui.welcome.default_project_path", lambda: tmp_path / "default.assay")
    settings = Settings(reviewer="ana")
    settings.remember_project(tmp_path / "gone.assay")  # a project since deleted is not offered
    welcome = WelcomeWindow(settings, ask_passphrase=lambda _where, _new: None)
    qtbot.addWidget(welcome)
    welcome.show()
    qtbot.waitExposed(welcome)
    assert "nothing leaves it" in welcome.picker.where.text() and "GPU offload" in welcome.picker.gpu.text()
    assert welcome.reviewer.text() == "ana" and welcome.recent.item(0).text() == "No recent projects yet."
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert welcome.grab().save(str(SHOTS / "welcome.png"))

    welcome.picker.kind_box.setCurrentIndex(2)  # an API endpoint: where the texts go, said before any run
    welcome.picker.base_url.setText("http://10.0.0.7:8000/v1")
    assert "10.0.0.7" in welcome.picker.where.text() and "inside your organisation" in welcome.picker.where.text()
    qtbot.wait(100)  # let the layout follow the longer text, as it does on screen
    assert welcome.grab().save(str(SHOTS / "welcome-model-api.png"))

    with qtbot.waitSignal(welcome.opened, timeout=60_000) as opened:
        welcome.open_sample()
    workspace, reviewer = opened.args
    project = workspace.project
    assert reviewer == "ana" and len(project.answers()) == 153 + 15  # and a second generator's 15 (issue 33)
    assert real_label_figures(project.sessions, "verifier")["answers"] == 34  # the labelled set, judged
    assert settings.recent_projects[0].endswith("sample.assay") and settings.model.kind == "openai"
    project.close()


def test_f1_lists_every_shortcut_the_window_binds_and_about_names_the_versions(qtbot, window: ReviewWindow) -> None:
    import llama_cpp
    from PySide6.QtCore import qVersion
    from PySide6.QtWidgets import QLabel

    qtbot.keyClick(window, Qt.Key.Key_F1)
    sheet = window.findChild(type(window.show_shortcuts()), None)
    text = " ".join(label.text() for label in sheet.findChildren(QLabel))
    for shown in ("Ctrl+Z", "Undo", "Ctrl+J", "Run the judge", "F2", "Accept the judge"):
        assert shown in text
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert sheet.grab().save(str(SHOTS / "shortcuts.png"))

    from ui.help import about_dialog

    about = about_dialog(window, window.settings.model)
    qtbot.addWidget(about)
    text = " ".join(label.text() for label in about.findChildren(QLabel))
    assert llama_cpp.__version__ in text and qVersion() in text and "SmolLM2-135M-Instruct" in text
    assert about.grab().save(str(SHOTS / "about.png"))


def test_a_host_the_project_allows_needs_no_second_tick(qtbot) -> None:
    from ui.judge_dialog import JudgeDialog

    dialog = JudgeDialog(allowed_hosts=["10.0.0.7"])
    qtbot.addWidget(dialog)
    dialog.picker.kind_box.setCurrentIndex(2)
    dialog.picker.base_url.setText("http://llm.example.com/v1")
    assert not dialog.run_button.isEnabled()  # another host: asked again
    dialog.picker.base_url.setText("http://10.0.0.7:8000/v1")
    assert dialog.picker.allow.isChecked() and dialog.run_button.isEnabled()
    assert "remembered for this project" in dialog.picker.allow.text()
    dialog.picker.base_url.setText("https://api.example.org/v1")
    assert not dialog.picker.allow.isChecked() and not dialog.run_button.isEnabled()


def test_the_queue_triages_by_the_users_thresholds(qtbot, sample_project: Project) -> None:
    from app.settings import Settings, load_settings

    tags = [json.dumps({"tag": t}) for t in ("correct", "irrelevant")] * 50  # correctness 1, F1 about 0.7
    judge = LemajJudge(ScriptedBackendStandIn(tags + [json.dumps({"missing": []})] * 5), Mode.TWO_STAGE)
    run_judge(sample_project.sessions, judge, "judge-run", answer_ids=[ANSWER])

    window = ReviewWindow(Workspace(sample_project), "ana", Settings())
    qtbot.addWidget(window)

    def bucket() -> str:
        row = next(i for i, r in enumerate(window.queue_pane.model.rows) if r.id == ANSWER)
        return window.queue_pane.model.index(row, 1).data()

    assert bucket() == "⚑ flagged"  # LeMAJ's default rule: relevance must reach 0.8
    window.set_triage_rule(1.0, 0.5)
    assert bucket() == "✓ cleared" and load_settings().min_relevance == 0.5  # remembered for the next run


def test_export_from_the_window_with_redaction(qtbot, window: ReviewWindow, tmp_path: Path) -> None:
    from ui.export_dialog import ExportDialog

    dialog = ExportDialog(window, tmp_path)
    qtbot.addWidget(dialog)
    dialog.format.setCurrentIndex(dialog.format.findData("csv"))
    assert dialog.out() == tmp_path / "assay-export.csv"
    dialog.redact.setChecked(True)
    dialog.names.setText("DoiT, Vendor")
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert dialog.grab().save(str(SHOTS / "export-dialog.png"))
    assert window.export(dialog.fmt, dialog.out(), dialog.redaction())
    written = dialog.out().read_text()
    assert "[NAME]" in written and "Vendor" not in written and "DoiT" not in written
    assert f"Exported to {dialog.out()} (redacted)" in window.message.text()
    assert not window.export("csv", tmp_path, dialog.redaction())  # a folder is not a file: said, not raised
    assert window.message.text().startswith("Nothing exported:")


def test_a_bad_dataset_from_the_welcome_window_is_named_and_nothing_is_imported(
    qtbot, monkeypatch, tmp_path: Path, dataset_copy: Path
) -> None:
    from app.settings import Settings
    from ui.welcome import WelcomeWindow

    lines = (dataset_copy / "qa.jsonl").read_text().splitlines()
    lines[4] = lines[4][:-1]  # line 5 loses its closing brace
    (dataset_copy / "qa.jsonl").write_text("\n".join(lines) + "\n")
    warnings: list[str] = []
    monkeypatch.setattr("ui.welcome.QMessageBox.warning", lambda _parent, _title, text: warnings.append(text))
    welcome = WelcomeWindow(Settings(), ask_passphrase=lambda _where, _new: None)
    qtbot.addWidget(welcome)
    welcome.open_path(tmp_path / "new.assay", dataset=dataset_copy)
    assert not welcome.isEnabled()  # busy while the import runs on a pool thread
    qtbot.waitUntil(lambda: bool(warnings), timeout=60_000)
    assert "qa.jsonl line 5: not valid JSON" in warnings[0] and welcome.isEnabled()
    check = Project.open(f"sqlite:///{tmp_path / 'new.assay'}")
    assert check.counts()["answers"] == 0
    check.close()


def test_a_long_review_session_does_not_use_up_python_s_none(qtbot, window: ReviewWindow) -> None:
    """PySide6 6.12.0 dropped one reference to None on every Qt call that returns nothing; on Python
    3.11, where None is reference-counted, the window aborted ("deallocating None") after some
    thousands of calls: a few dozen answers into a review. Moving through answers keeps None's count."""
    import gc
    import sys

    from ui.review.verifier_flags import checks_pool

    # None's count is the whole process's: in one full run it fell by 187,883 while claim checks ran on their
    # pool thread and let go of what they had read. The checker is not what is measured here.
    window.answer_pane.verifier_flag.check = lambda _answer_id: None
    checks_pool().waitForDone()
    window.queue_pane.move(1)  # first visits open caches, which hold references of their own
    window.queue_pane.move(-1)
    gc.collect()  # nor is the collector, freeing what was made before
    before = sys.getrefcount(None)
    for step in (1, -1) * 5:
        window.queue_pane.move(step)
    checks_pool().waitForDone()
    gc.collect()
    assert before - sys.getrefcount(None) < 50  # 6.12.0 lost over a hundred an answer
