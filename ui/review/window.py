"""The reviewer's window: the answer queue, the answer split into data points, and the contract.

Keyboard first (app/review/keymap.py holds every key; F1 lists them): 1 correct · 2 incorrect ·
3 irrelevant · 4 missing · Enter accept the judge's tag · J/K next/previous point · Ctrl+Z undo ·
Ctrl+Enter submit. Every action is saved at once.

The window is a view of a ReviewSession (app/review/session.py), as napari's QtViewer is of its
ViewerModel: the session holds the open answer, the selected point and the undo history, and takes
every action; each pane (QueuePane, AnswerPane, DocumentPane, the guidelines panel, side by side)
subscribes to the session's one change notification and redraws itself. The window composes the
panes, builds the menus from the keymap, and times the preparation of the next answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QSplitter,
    QTabWidget,
)

from app.export.formats import Redact
from app.export.redaction import keep_everything
from app.judging.runs import JudgeSettings
from app.review import keymap
from app.review.last_answer import remember_answer, remembered_answer
from app.review.service import BLIND, ReviewState
from app.review.session import Changes, ReviewSession
from app.settings import Settings, save_settings
from app.workspace import Workspace
from ui.backups_dialog import BackupKeeper, BackupsDialog
from ui.dashboard import Dashboard
from ui.export_dialog import export_project
from ui.help import about_dialog, shortcut_sheet
from ui.judge_dialog import JudgeWorker
from ui.learn_dialog import open_learn_dialog
from ui.matter_picker import add_matter_picker
from ui.raters_dialog import open_raters_dialog
from ui.review import review_actions
from ui.review.activity_clock import ActivityClock
from ui.review.adjudication_view import AdjudicationView, open_adjudication
from ui.review.answer_pane import AnswerPane
from ui.review.document_pane import DocumentPane
from ui.review.file_menu import add_file_menu
from ui.review.guidelines_panel import GuidelinesPanel
from ui.review.judge_runner import JudgeRunner
from ui.review.qualification_dialog import QualificationDialog, show_training_feedback
from ui.review.queue_pane import QueuePane
from ui.review.sample_actions import draw_random_sample
from ui.review.side_by_side import SideBySideWindow
from ui.review.window_keys import WindowCommands
from ui.thresholds_dialog import ThresholdsDialog

PREPARE_AFTER_MS = 100  # a pause this long after a move: the reviewer reads, the next answer is prepared
INPUT = (
    QEvent.Type.KeyPress,
    QEvent.Type.ShortcutOverride,
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonDblClick,
)


class ReviewWindow(QMainWindow):
    """One reviewer reviewing one project: the window takes the project's workspace (app/workspace.py)
    and goes through the review session it makes; no part of it holds the project itself."""

    def __init__(
        self,
        workspace: Workspace,
        reviewer: str,
        settings: Settings | None = None,
        first_answer: str | None = None,
        *,
        keep_place: bool = True,
    ) -> None:
        """`keep_place`: with the user's `settings`, the answer open at closing is saved in them and reopened
        at the next launch (not for a picture taken by `assay gui --screenshot`)."""
        super().__init__()
        self.workspace = workspace
        self.settings = settings or Settings()
        self._keeps_place = settings is not None and keep_place
        self.session = session = workspace.review(reviewer)
        self.side_by_side: SideBySideWindow | None = None
        self.adjudication: AdjudicationView | None = None
        self._direction = 1  # of the last move: the answer prepared is the next one that way
        self._prepare_timer = QTimer(self, singleShot=True, interval=PREPARE_AFTER_MS)
        self._prepare_timer.timeout.connect(self._prepare_next)
        self.setWindowTitle(f"Assay — {reviewer} — {workspace.name}")
        self.resize(1500, 900)
        self.message = QLabel()
        self.statusBar().addWidget(self.message, 1)
        session.subscribe(self._on_changes)  # first: the status bar says what the panes then show

        rule = (self.settings.min_correctness, self.settings.min_relevance)
        self.queue_pane = QueuePane(session, rule, session.sampled_answers())
        self.matter_picker = add_matter_picker(self.queue_pane)  # every matter, or one
        self.answer_pane = AnswerPane(session)
        self.document_pane = DocumentPane(session)
        self.judge_runner = JudgeRunner(workspace, self.settings, self.say, self)
        self.guidelines_panel = GuidelinesPanel(session, self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.guidelines_panel)
        self.guidelines_panel.hide()
        self._wire_parts()
        self._build_menus()

        splitter = QSplitter()
        splitter.addWidget(self.queue_pane)
        splitter.addWidget(self.answer_pane)
        splitter.addWidget(self.document_pane)
        splitter.setSizes([420, 860, 320])  # the answer and its points get the room; the queue and document
        splitter.setStretchFactor(1, 1)  # take what is wanted, and the middle grows with the window
        self.dashboard = Dashboard(workspace, lambda: (self.settings.min_correctness, self.settings.min_relevance))
        self.tabs = QTabWidget()
        self.tabs.addTab(splitter, "Review")
        self.tabs.addTab(self.dashboard, "Dashboard")
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.dashboard.generators.regressionOpened.connect(lambda *opened: self.open_side_by_side(*opened))
        self.setCentralWidget(self.tabs)
        self.clock = ActivityClock(session.add_active_time, self)
        QApplication.instance().installEventFilter(self.clock)
        first_answer = remembered_answer(self.settings, workspace.url, reviewer) or first_answer  # where they were
        if first_answer and self.queue_pane.model.row_of(first_answer) is not None:
            self.open_answer(first_answer)
        else:
            self.queue_pane.move(1)  # the first row, if there is one
        self.backup_keeper = BackupKeeper(self, session, self.settings.backup_minutes, self.say)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        self._prepare_timer.start()  # the next answer is read ahead once this window is on screen, not before

    @property
    def worker(self) -> JudgeWorker | None:
        """The judge run in progress, if any."""
        return self.judge_runner.worker

    # ------------------------------------------------------------------ building

    def _wire_parts(self) -> None:
        session = self.session
        self.queue_pane.answerChosen.connect(self._on_answer_chosen)
        self.queue_pane.model.modelReset.connect(self._prepare_timer.start)  # the next row may be another answer
        self.queue_pane.model.layoutChanged.connect(self._prepare_timer.start)
        answer = self.answer_pane
        answer.passageRequested.connect(self.document_pane.show_passage)
        answer.missingRequested.connect(self.add_missing_from_selection)
        answer.submitRequested.connect(self.submit)
        answer.judgeRequested.connect(self.open_judge_dialog)
        self.document_pane.missingRequested.connect(self.add_missing_from_selection)
        self.judge_runner.answerJudged.connect(session.judged)
        self.judge_runner.runEnded.connect(session.run_ended)
        self.guidelines_panel.visibilityChanged.connect(lambda shown: shown or self.document_pane.show())

    def _build_menus(self) -> None:
        """The menus, their entries with a key taken from the keymap with the function the key calls;
        every window key of the keymap must have its entry (checked here, as the window is built)."""
        commands: keymap.WindowKeys = WindowCommands(self)
        self.keys = keys = keymap.bind(keymap.WINDOW, self.session, commands)
        placed: set[keymap.Binding] = set()

        def action(function: Callable[..., object], menu: QMenu, argument: object = None) -> QAction:
            bound = keymap.bound(keymap.WINDOW, function, argument)
            act = QAction(bound.label, self)
            act.setShortcut(QKeySequence(bound.keys[0]))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(lambda _checked=False: keys.press(bound))  # triggered passes `checked`
            menu.addAction(act)
            placed.add(bound)
            return act

        session, window_keys = self.session, keymap.WindowKeys
        add_file_menu(self, lambda opened: ReviewWindow(opened, session.reviewer, self.settings))  # Ctrl+Q quits
        review = self.menuBar().addMenu("&Review")
        self.undo_action = action(ReviewSession.undo, review)
        self.redo_action = action(ReviewSession.redo, review)
        review.addSeparator()
        action(window_keys.add_point_from_selection, review)
        action(window_keys.edit_point, review)
        action(window_keys.split_point, review)
        action(ReviewSession.merge_current, review)
        action(ReviewSession.delete_current, review)
        action(window_keys.comment_point, review)
        review.addSeparator()
        action(window_keys.submit, review)
        action(window_keys.sign_off, review)
        review.addAction("Reopen signed review…", lambda: review_actions.reopen(self, session))
        action(window_keys.search, review)
        action(window_keys.move_answer, review, 1)
        action(window_keys.move_answer, review, -1)
        action(window_keys.least_certain_first, review)
        action(window_keys.side_by_side, review)
        review.addSeparator()  # settling disagreements, and reviewers against gold
        review.addAction("Adjudicate disagreements…", self.open_adjudication)
        review.addAction("Reviewers against gold…", self.open_qualification)
        project = self.menuBar().addMenu("&Project")
        self.blind_action = QAction("Blind review (hide the judge until submitted)", self, checkable=True)
        self.blind_action.setChecked(session.mode == BLIND)
        self.blind_action.toggled.connect(session.set_blind)
        project.addAction(self.blind_action)
        action(window_keys.run_judge, project)
        action(window_keys.export, project)
        project.addAction("Raters…", lambda: open_raters_dialog(self, session))
        project.addAction("Triage thresholds…", self.open_thresholds_dialog)
        project.addAction("Backups…", lambda: BackupsDialog(self, self.backup_keeper, session).exec())
        project.addAction("Review a random sample…", lambda: draw_random_sample(self.queue_pane, session))
        checker = project.addMenu("Claim checker")
        checker.addAction("Learn from reviews…", lambda: open_learn_dialog(self, self.workspace, session.reviewer))
        help_menu = self.menuBar().addMenu("&Help")
        action(window_keys.guidelines, help_menu)
        action(window_keys.shortcuts, help_menu)
        help_menu.addAction("About Assay", lambda: about_dialog(self, self.settings.model).exec())
        unplaced = [b.label for b in keymap.bindings(keymap.WINDOW) if b not in placed]
        if unplaced:
            raise LookupError(f"window keys in no menu: {', '.join(unplaced)}")

    def show_shortcuts(self) -> QDialog:
        sheet = shortcut_sheet(self)
        sheet.open()
        return sheet

    # ------------------------------------------------------------------ the session's changes

    def _on_changes(self, changes: Changes) -> None:
        if changes.message is not None:
            self.say(changes.message)
        self.undo_action.setEnabled(self.session.can_undo)
        self.redo_action.setEnabled(self.session.can_redo)
        if changes.project:
            self.dashboard.refresh()
            QTimer.singleShot(0, lambda: self.queue_pane.move(1))  # the restored file's first answer
        if self.session.previewing:  # opened (saved) after the frame that shows it, or before any input
            QApplication.instance().installEventFilter(self)
        else:
            QApplication.instance().removeEventFilter(self)
        if changes.message is None or changes.answer or changes.rows:
            self._prepare_timer.start()  # again after every save: a save makes the prepared answer stale

    # ------------------------------------------------------------------ showing an answer

    @property
    def state(self) -> ReviewState | None:
        """The open answer as the session holds it."""
        return self.session.state

    def open_answer(self, answer_id: str) -> None:
        """Select an answer in the queue (and so open it)."""
        if not self.queue_pane.select_answer(answer_id):
            self.say(f"No answer {answer_id} in this project.")

    def _on_answer_chosen(self, answer_id: str) -> None:
        if self.session.state is not None:
            self.clock.flush()  # the time read so far is the answer left's
        self.session.open(answer_id, use_prepared=self.isVisible())  # else no frame comes to open it after
        self.answer_pane.points.setFocus()

    def finish_opening(self) -> None:
        """Open (save as opened) the answer shown from a preview, if not done yet."""
        QApplication.instance().removeEventFilter(self)
        self.session.finish_opening()

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.UpdateRequest and self.session.previewing:
            QTimer.singleShot(0, self.finish_opening)  # after this frame: the answer is on screen
        return handled

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in INPUT:
            self.finish_opening()  # a key or click acts on the saved points, never on a preview
        return False

    def _prepare_next(self) -> None:
        """Read the next answer the way the reviewer moves, while they read this one."""
        self.finish_opening()  # read for a while: shown by now, if no frame has said so (saved before reading ahead)
        answer_id = self.queue_pane.answer_beside(self._direction)
        if answer_id is None or self.session.is_prepared(answer_id):
            return
        prepared = self.session.prepare(answer_id)
        if prepared is not None:
            self.document_pane.prepare(prepared)
            self.session.prepared = replace(prepared, rendered=self.answer_pane.prepare(prepared))

    def move_answer(self, step: int) -> None:
        self._direction = 1 if step > 0 else -1
        self.queue_pane.move(step)

    def _on_tab_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.dashboard:
            self.dashboard.refresh()  # computed when looked at, not at every tag

    # ------------------------------------------------------------------ actions that need a pane or a dialog

    def add_missing_from_selection(self) -> None:
        """A missing data point from the document text selected, citing its passages (else asked for)."""
        text, passages = self.document_pane.selected_text_and_passages()
        if review_actions.add_missing(self, self.session, text, passages):
            self.answer_pane.points.setFocus()

    def submit(self) -> None:
        answer_id = self.session.answer_id
        if self.session.submit():
            show_training_feedback(self, self.session, answer_id)  # training mode, gold only

    def open_side_by_side(self, answer_id: str | None = None, a: str | None = None, b: str | None = None) -> None:
        """The open answer's question side by side (or `answer_id`'s, with the generators `a` on the left
        and `b` on the right unless blind), in one window kept for the session."""
        if self.side_by_side is None:
            self.side_by_side = SideBySideWindow(self.session, self)
        side = self.side_by_side
        if side.open_question(answer_id or self.session.answer_id, (a, b) if a and b else None):
            if not side.isVisible():
                side.place_over(self)
            side.show()
            side.raise_()
            side.activateWindow()
        else:
            self.say(side.message.text())

    def open_adjudication(self) -> AdjudicationView:
        self.adjudication = open_adjudication(self, self.session, self.session.reviewer)
        return self.adjudication

    def open_qualification(self) -> QualificationDialog:
        dialog = QualificationDialog(self.session, self)
        dialog.open()
        return dialog

    # ------------------------------------------------------------------ dialogs: thresholds, export, judge

    def open_thresholds_dialog(self) -> None:
        dialog = ThresholdsDialog(self, self.settings.min_correctness, self.settings.min_relevance)
        if dialog.exec():
            self.set_triage_rule(*dialog.values())

    def set_triage_rule(self, min_correctness: float, min_relevance: float) -> None:
        """Answers the judge scores at or above both thresholds are cleared; the rest are flagged."""
        self.settings.min_correctness, self.settings.min_relevance = min_correctness, min_relevance
        save_settings(self.settings)
        self.queue_pane.model.triage_rule = (min_correctness, min_relevance)
        self.session.run_ended()  # the queue is read again
        self.say(
            f"Triage: cleared when the judge's correctness ≥ {min_correctness:.2f} and relevance ≥ {min_relevance:.2f}."
        )

    def export(self, fmt: str, out: Path, redact: Redact = keep_everything) -> bool:
        """Export the reviewed set to `out`; False (and said why) if nothing was exported."""
        return export_project(self.workspace, fmt, out, redact, self.say)

    def open_judge_dialog(self) -> None:
        self.judge_runner.open_dialog(self.session.answer_id, self.session.reviewer)

    def start_judge(self, settings: JudgeSettings, answer_ids: list[str] | None) -> JudgeWorker:
        """Run the judge without blocking the window; progress and Cancel live in the status bar."""
        return self.judge_runner.start_judge(settings, answer_ids)

    # ------------------------------------------------------------------ the rest

    def confirm_sign_off(self) -> QMessageBox | None:
        """Ctrl+Shift+Enter asks first, naming what is signed: signing locks the review until reopened."""
        state = self.session.state
        if state is None:
            return None
        answer = state.answer
        scores = state.scores
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Sign off this review",
            f"Sign your review of this answer as {self.session.reviewer}?",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        sign = box.addButton("Sign off", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)  # Enter alone never signs
        box.setInformativeText(
            f"Question: {answer.question}\nDocument: {self.document_pane.titles.get(answer.document, answer.document)}"
            f"\nAnswer {answer.id} · your tags: {scores.correct} correct, {scores.incorrect} incorrect, "
            f"{scores.irrelevant} irrelevant, {scores.missing} missing\n\n"
            "The signature covers the review as it is now; it stays locked until you reopen it (audited)."
        )
        box.finished.connect(lambda _result: self._on_sign_off_answered(box.clickedButton() is sign))
        self.sign_off_box = box
        box.open()
        return box

    def _on_sign_off_answered(self, signed: bool) -> None:
        if signed:
            self.session.sign_off()
        else:
            self.say("Not signed.")
        self.answer_pane.points.setFocus()

    def say(self, sentence: str) -> None:
        """Expected problems are one sentence here, never a crash or a dialog."""
        self.message.setText(sentence)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Nothing to save: every action already is. Record the last active seconds, stop a run."""
        self.finish_opening()
        if self._keeps_place:  # reopened at the next launch
            remember_answer(self.settings, self.workspace.url, self.session.reviewer, self.session.answer_id)
            save_settings(self.settings)
        self.clock.flush()
        QApplication.instance().removeEventFilter(self.clock)
        self._prepare_timer.stop()
        self.dashboard.stop()
        self.dashboard.wait()
        self.judge_runner.stop_and_wait()
        self.answer_pane.verifier_flag.stop_and_wait()  # the answer the claim checker is reading
        super().closeEvent(event)
