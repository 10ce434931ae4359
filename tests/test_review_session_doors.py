"""The review session's last doors (issue 54): every change to what the review window shows goes through
ReviewSession and comes out as one Changes, no pane queries the project itself, and the claim checker
never runs on the window's thread."""

from __future__ import annotations

import ast
import shutil
import threading
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.judging.verification import Verifier
from app.project import SAMPLE_DATASET, Project
from app.review.session import Changes, ReviewSession
from app.workspace import Workspace
from models.checker.report import AnswerReport, PointReport
from ui.review.answer_pane import AnswerPane
from ui.review.window import ReviewWindow

ANSWER, NEXT = "contractnli-027", "contractnli-028"  # two answers about the DoiT NDA
UI = Path(__file__).resolve().parent.parent / "ui"


def _modules(folder: Path) -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(folder.rglob("*.py"))]


def _named(node: ast.expr) -> str:
    """What a call calls, by its last name: `Changes(…)` and `changes.Changes(…)` alike."""
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _is_session(node: ast.expr) -> bool:
    """`session`, `self.session`, `window.session`, …: the review session, however a pane holds it."""
    return (isinstance(node, ast.Name) and node.id == "session") or (
        isinstance(node, ast.Attribute) and node.attr == "session"
    )


def test_no_ui_module_makes_changes_and_no_review_pane_reads_the_sessions_project() -> None:
    made = [
        f"{path.relative_to(UI.parent)}:{node.lineno}"
        for path, tree in _modules(UI)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _named(node.func) == "Changes"
    ]
    assert made == [], "Changes are the session's to make: call a ReviewSession method"
    read = [
        f"{path.relative_to(UI.parent)}:{node.lineno}"
        for path, tree in _modules(UI / "review")
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "project" and _is_session(node.value)
    ]
    assert read == [], "a pane asks the session, never its project"


# ---------------------------------------------------------------------- the session's doors, without Qt


@pytest.fixture
def session(sample_project: Project) -> ReviewSession:
    return ReviewSession(sample_project, "ana")


def test_the_documents_names_and_search_come_from_the_session(session, sample_project) -> None:
    assert session.document_titles() == sample_project.document_titles()
    assert session.open(ANSWER)
    document = session.state.answer.document
    hits = session.search(document, "confidential information", limit=3)
    assert hits and hits == sample_project.search(document, "confidential information", limit=3)
    assert session.folder() == Path(sample_project.url.removeprefix("sqlite:///")).parent


def test_saving_guidelines_and_importing_answers_each_come_out_as_one_change(session, sample_project, tmp_path) -> None:
    heard: list[Changes] = []
    session.subscribe(heard.append)
    assert session.guidelines() is None
    assert session.set_guidelines("# Guidelines\n\n## Incorrect\n\nA wrong figure is incorrect.\n")
    (saved,) = heard
    assert saved.guidelines and saved.message.startswith("Guidelines version 1 saved")
    assert session.guidelines().version == 1 and session.guidelines().author == "ana"
    assert session.set_guidelines(session.guidelines().text)  # the same text: no new version, nothing to read
    assert not heard[-1].guidelines and "unchanged" in heard[-1].message
    assert not session.set_guidelines("  ")  # refused in a sentence, never raised
    assert heard[-1] == Changes(message="Guidelines not saved: guidelines: the text is empty")

    heard.clear()
    dataset = tmp_path / "again"
    shutil.copytree(SAMPLE_DATASET, dataset)
    assert session.import_answers(dataset)
    (imported,) = heard
    assert imported.queue and imported.message.startswith("Imported again: 0 new answers")
    assert not session.import_answers(tmp_path / "nothing-here.jsonl")
    assert heard[-1].message.startswith("Nothing imported:") and not heard[-1].queue

    heard.clear()
    draw = session.draw_sample(4, seed=7)
    assert draw is not None and len(draw.answer_ids) == 4
    (drawn,) = heard
    assert drawn.sampled and "seed 7" in drawn.message
    assert session.sampled_answers() == dict.fromkeys(draw.answer_ids, draw.number)
    assert session.draw_sample(0) is None and heard[-1].message.startswith("No sample drawn:")


# ---------------------------------------------------------------------- the window applies them


def test_guidelines_saved_in_the_panel_reach_the_window_as_the_sessions_change(qtbot, sample_project) -> None:
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    heard: list[Changes] = []
    window.session.subscribe(heard.append)
    panel = window.guidelines_panel
    panel.show()
    assert "no review guidelines yet" in panel.version.text()
    qtbot.mouseClick(panel.start_button, Qt.MouseButton.LeftButton)
    assert [c.guidelines for c in heard] == [True]  # one change, which the panel and the status bar show
    assert panel.version.text().startswith("Version 1 · ana") and not panel.start_button.isVisible()
    assert window.message.text().startswith("Guidelines version 1 saved")
    # A version saved anywhere else through the session shows in the panel as well.
    assert window.session.set_guidelines("# House rules\n\n## Incorrect\n\nA cap without its carve-outs.\n")
    assert panel.version.text().startswith("Version 2 · ana") and "carve-outs" in panel.browser.toPlainText()


# ---------------------------------------------------------------------- the claim checker off the window's thread


def _report(session: ReviewSession, answer_id: str, verdict: str) -> AnswerReport:
    """One finding over the whole answer's text: whichever point is selected, this is its finding."""
    text = session.state_of(answer_id).answer.text
    return AnswerReport(answer_id, [PointReport(0, len(text), text, verdict, [], None, verdict)])


def _pane(qtbot, session: ReviewSession) -> AnswerPane:
    pane = AnswerPane(session)
    qtbot.addWidget(pane)
    pane.resize(900, 700)
    pane.show()
    return pane


def test_the_claim_checker_reads_an_answer_off_the_windows_thread(qtbot, sample_project) -> None:
    threads: list[threading.Thread] = []
    reviewing = ReviewSession(sample_project, "ana")

    def check(answer_id: str) -> AnswerReport:
        threads.append(threading.current_thread())
        return _report(reviewing, answer_id, "incorrect")

    session = ReviewSession(sample_project, "ana", claim_checker=lambda: check)
    pane = _pane(qtbot, session)
    assert session.open(ANSWER)
    qtbot.waitUntil(lambda: "Claim checker: incorrect" in pane.verifier_flag.text(), timeout=5_000)
    assert threads and threading.main_thread() not in threads
    pane.verifier_flag.stop_and_wait()


def test_the_window_never_runs_the_claim_checker_on_its_thread(qtbot, sample_project, monkeypatch) -> None:
    """The real path: the window's session, its claim checker (app.judging's Verifier), the flag."""
    threads: list[threading.Thread] = []

    def verify_answer(_verifier: Verifier, _session: object, answer_id: str) -> AnswerReport:
        threads.append(threading.current_thread())
        text = sample_project.answer(answer_id).text
        return AnswerReport(answer_id, [PointReport(0, len(text), text, "incorrect", [], None, "flagged")])

    monkeypatch.setattr(Verifier, "verify_answer", verify_answer)
    window = ReviewWindow(Workspace(sample_project), "ana")
    qtbot.addWidget(window)
    window.show()
    window.open_answer(ANSWER)
    qtbot.waitUntil(lambda: "Claim checker: incorrect" in window.answer_pane.verifier_flag.text(), timeout=20_000)
    assert threads and threading.main_thread() not in threads
    window.close()


def test_findings_for_an_answer_no_longer_shown_are_dropped(qtbot, sample_project) -> None:
    release = threading.Event()
    reviewing = ReviewSession(sample_project, "ana")

    def check(answer_id: str) -> AnswerReport:
        if answer_id == ANSWER:
            release.wait(10)  # still reading the first answer when the reviewer moves on
            return _report(reviewing, answer_id, "incorrect")
        return _report(reviewing, answer_id, "supported")

    session = ReviewSession(sample_project, "ana", claim_checker=lambda: check)
    pane = _pane(qtbot, session)
    flag = pane.verifier_flag
    assert session.open(ANSWER)
    qtbot.waitUntil(lambda: ANSWER in flag._asked, timeout=5_000)
    assert session.open(NEXT)
    with qtbot.waitSignal(flag.answerChecked, check_params_cb=lambda answer_id: answer_id == ANSWER, timeout=5_000):
        release.set()
    assert "Claim checker: incorrect" not in flag.text()  # the first answer's finding arrived late: not shown
    qtbot.waitUntil(lambda: "found in the document" in flag.text(), timeout=5_000)
    assert session.open(ANSWER) and "Claim checker: incorrect" in flag.text()  # kept, and shown when it is back
    flag.stop_and_wait()
