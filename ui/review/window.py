"""The reviewer's window: the answer queue, the answer split into data points, and the contract.

Keyboard first: 1 correct · 2 incorrect · 3 irrelevant · 4 missing (from the text selected in the
document) · Enter accept the judge's tag and move on · J/K next/previous point · Ctrl+Z/Ctrl+Shift+Z
undo/redo · Ctrl+F search the document · Ctrl+Enter submit. Every action is saved at once.

The window composes its parts (QueuePane, AnswerPane, DocumentPane, JudgeRunner, ActivityClock) and
holds the menus and the wiring: each review action goes through app.review.service.ReviewService, and the
state it returns is shown in the panes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication, QDialog, QLabel, QMainWindow, QMenu, QSplitter, QTabWidget

from app.errors import AssayError
from app.export.formats import Redact
from app.export.redaction import keep_everything
from app.ingest.citations import Citation, find_citations
from app.ingest.contract_terms import read_contract
from app.judging.runs import JudgeSettings
from app.judging.standing import Standing, reference_standing
from app.project import Passage, Project
from app.review.service import BLIND, ReviewPoint, ReviewService, ReviewState
from app.settings import Settings, save_settings
from ui.backups_dialog import BackupKeeper, BackupsDialog
from ui.dashboard import Dashboard
from ui.export_dialog import export_from_dialog, export_project
from ui.help import about_dialog, shortcut_sheet
from ui.judge_dialog import JudgeWorker
from ui.review import review_actions
from ui.review.activity_clock import ActivityClock
from ui.review.adjudication_view import AdjudicationView, open_adjudication
from ui.review.answer_pane import AnswerPane
from ui.review.answer_view import RenderedAnswer
from ui.review.document_pane import DocumentPane
from ui.review.guidelines_panel import attach_guidelines
from ui.review.judge_runner import JudgeRunner
from ui.review.qualification_dialog import QualificationDialog, show_training_feedback
from ui.review.queue_pane import QueuePane
from ui.review.sample_actions import draw_random_sample, least_certain_first, refresh_queue_statistics
from ui.review.side_by_side import open_side_by_side
from ui.review.signoff_actions import attach_signoff
from ui.thresholds_dialog import ThresholdsDialog

PREPARE_AFTER_MS = 100  # a pause this long after a move: the reviewer reads, the next answer is prepared
INPUT = (
    QEvent.Type.KeyPress,
    QEvent.Type.ShortcutOverride,
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseButtonDblClick,
)


@dataclass(frozen=True)
class PreparedAnswer:
    """The answer the reviewer will likely open next, read while they read this one: what opening it
    will show (ReviewService.preview), and what showing it needs. Good only while `changes` is what
    ReviewService.changes says: a save that may have changed the answer makes it stale."""

    state: ReviewState
    changes: tuple[int, int]
    standing: Standing | None
    passages: list[Passage]  # of its document
    citations: list[Citation]  # in its text
    rendered: RenderedAnswer  # its text, its first point selected


class ReviewWindow(QMainWindow):
    """One reviewer reviewing one project."""

    def __init__(
        self, project: Project, reviewer: str, settings: Settings | None = None, first_answer: str | None = None
    ) -> None:
        super().__init__()
        self.project = project
        self.settings = settings or Settings()
        self.service = ReviewService(project, reviewer)
        self.state: ReviewState | None = None
        self.citations: list[Citation] = []  # in the open answer's text
        self._showing_state = False
        self.prepared: PreparedAnswer | None = None
        self._opening: ReviewState | None = None  # shown from a preview, opened (saved) after the frame
        self._direction = 1  # of the last move: the answer prepared is the next one that way
        self._prepare_timer = QTimer(self, singleShot=True, interval=PREPARE_AFTER_MS)
        self._prepare_timer.timeout.connect(self._prepare_next)
        self.setWindowTitle(f"Assay — {reviewer} — {project.url.rsplit('/', 1)[-1]}")
        self.resize(1500, 900)
        self.message = QLabel()
        self.statusBar().addWidget(self.message, 1)

        rule = (self.settings.min_correctness, self.settings.min_relevance)
        self.queue_pane = QueuePane(self.service.queue(), self.service.judge_counts, rule)
        self.answer_pane = AnswerPane()
        self.document_pane = DocumentPane(project, self.say)
        self.judge_runner = JudgeRunner(project, self.settings, self.say, self)
        # The parts' widgets by short names: the statistics actions, the backups dialog and the tests reach them.
        queue, answer, document = self.queue_pane, self.answer_pane, self.document_pane
        self.queue_model, self.table = queue.model, queue.table
        self.filter, self.documents = queue.filter, queue.documents
        self.points, self.points_model, self.answer_view = answer.points, answer.points_model, answer.answer_view
        self.scores, self.rationale, self.verifier_flag = answer.scores, answer.rationale, answer.verifier_flag
        self.document, self.search, self.hits = document.view, document.search, document.hits
        runner = self.judge_runner
        self.network_banner, self.progress = runner.network_banner, runner.progress
        self.cancel_button = runner.cancel_button
        refresh_queue_statistics(self, certainty=False, requery=False)  # the queue was just read
        self._wire_parts()
        self._build_menus()

        splitter = QSplitter()
        splitter.addWidget(self.queue_pane)
        splitter.addWidget(self.answer_pane)
        splitter.addWidget(self.document_pane)
        splitter.setSizes([420, 860, 320])  # the answer and its points get the room; the queue and document
        splitter.setStretchFactor(1, 1)  # take what is wanted, and the middle grows with the window
        self.dashboard = Dashboard(project, lambda: (self.settings.min_correctness, self.settings.min_relevance))
        self.tabs = QTabWidget()
        self.tabs.addTab(splitter, "Review")
        self.tabs.addTab(self.dashboard, "Dashboard")
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.dashboard.generators.regressionOpened.connect(lambda *opened: open_side_by_side(self, *opened))
        self.setCentralWidget(self.tabs)
        self.clock = ActivityClock(self._on_active_time, self)
        QApplication.instance().installEventFilter(self.clock)
        if first_answer:
            self.open_answer(first_answer)
        elif self.queue_model.rows:
            self.table.selectRow(0)
        self.backup_keeper = BackupKeeper(self)  # on open, then every few minutes after a change

    @property
    def worker(self) -> JudgeWorker | None:
        """The judge run in progress, if any."""
        return self.judge_runner.worker

    # ------------------------------------------------------------------ building

    def _wire_parts(self) -> None:
        self.queue_pane.answerChosen.connect(self._on_answer_chosen)
        answer = self.answer_pane
        answer.passageRequested.connect(self.document_pane.show_passage)
        answer.answer_view.pointClicked.connect(self._on_answer_point_clicked)
        answer.answer_view.pointRequested.connect(lambda: review_actions.add_point_from_selection(self))
        answer.points.tagPressed.connect(lambda tag: review_actions.tag_current_point(self, tag))
        answer.points.missingPressed.connect(lambda: review_actions.add_missing_from_selection(self))
        answer.points.acceptPressed.connect(lambda: review_actions.accept_judge_tag(self))
        answer.points.movePressed.connect(lambda step: review_actions.move_to_point(self, step))
        answer.points.selectionModel().currentRowChanged.connect(self._on_point_changed)
        answer.points.clicked.connect(self._on_point_clicked)
        answer.rationale.linkActivated.connect(lambda _link: self.open_judge_dialog())  # the model picker
        answer.correctness.activated.connect(lambda: review_actions.rate_answer(self))
        answer.relevance.activated.connect(lambda: review_actions.rate_answer(self))
        answer.comment.editingFinished.connect(lambda: review_actions.comment_answer(self))
        answer.submit_button.clicked.connect(self.submit)
        self.document_pane.missingRequested.connect(lambda: review_actions.add_missing_from_selection(self))
        self.search.returnPressed.connect(self._on_search_entered)
        self.judge_runner.answerJudged.connect(self._on_answer_judged)
        self.judge_runner.runEnded.connect(lambda: self.queue_model.reset(self.service.queue()))
        self.queue_model.modelReset.connect(self._prepare_timer.start)  # the next row may be another answer
        self.queue_model.layoutChanged.connect(self._prepare_timer.start)

    def _build_menus(self) -> None:
        def action(text: str, shortcut: QKeySequence | str, slot: Callable[[], object], menu: QMenu) -> QAction:
            act = QAction(text, self)
            act.setShortcut(QKeySequence(shortcut))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(slot)
            menu.addAction(act)
            return act

        review = self.menuBar().addMenu("&Review")
        self.undo_action = action("Undo", QKeySequence.StandardKey.Undo, lambda: review_actions.undo(self), review)
        self.redo_action = action("Redo", "Ctrl+Shift+Z", lambda: review_actions.redo(self), review)
        review.addSeparator()
        action(
            "Make a data point of the selected answer text",
            "Ctrl+Shift+N",
            lambda: review_actions.add_point_from_selection(self),
            review,
        )
        action("Edit data point…", "F2", lambda: review_actions.edit_point(self), review)
        action("Split data point…", "Ctrl+Shift+S", lambda: review_actions.split_point(self), review)
        action("Merge with next data point", "Ctrl+Shift+M", lambda: review_actions.merge_point(self), review)
        action("Delete data point", QKeySequence.StandardKey.Delete, lambda: review_actions.delete_point(self), review)
        action("Comment on data point…", "Ctrl+Shift+C", lambda: review_actions.comment_point(self), review)
        review.addSeparator()
        action("Submit review", "Ctrl+Return", self.submit, review)
        attach_signoff(self, review)  # sign off / reopen the open answer's review
        action("Search document", QKeySequence.StandardKey.Find, self.document_pane.focus_search, review)
        action("Next answer", "Ctrl+Down", lambda: self._move_answer(1), review)
        action("Previous answer", "Ctrl+Up", lambda: self._move_answer(-1), review)
        action("Least certain first", "Ctrl+Shift+U", lambda: least_certain_first(self), review)
        action("Side by side with another generator", "Ctrl+Shift+B", lambda: open_side_by_side(self), review)
        review.addSeparator()  # settling disagreements, and reviewers against gold
        review.addAction("Adjudicate disagreements…", self.open_adjudication)
        review.addAction("Reviewers against gold…", self.open_qualification)
        project = self.menuBar().addMenu("&Project")
        self.blind_action = QAction("Blind review (hide the judge until submitted)", self, checkable=True)
        self.blind_action.setChecked(self.service.mode == BLIND)
        self.blind_action.toggled.connect(lambda blind: review_actions.set_blind(self, blind))
        project.addAction(self.blind_action)
        action("Run the judge…", "Ctrl+J", self.open_judge_dialog, project)
        action("Export the reviewed set…", "Ctrl+E", lambda: export_from_dialog(self, self.project, self.say), project)
        project.addAction("Triage thresholds…", self.open_thresholds_dialog)
        project.addAction("Backups…", lambda: BackupsDialog(self, self.backup_keeper).exec())
        project.addAction("Review a random sample…", lambda: draw_random_sample(self))
        help_menu = self.menuBar().addMenu("&Help")
        action("Keyboard shortcuts", "F1", self.show_shortcuts, help_menu)
        help_menu.addAction("About Assay", lambda: about_dialog(self, self.settings.model).exec())
        self.guidelines_panel = attach_guidelines(self, help_menu)  # Shift+F1: at the selected point's tag

    def show_shortcuts(self) -> QDialog:
        actions = [a for menu in self.menuBar().findChildren(QMenu) for a in menu.actions()]
        sheet = shortcut_sheet(self, actions)
        sheet.open()
        return sheet

    # ------------------------------------------------------------------ showing an answer

    def open_answer(self, answer_id: str) -> None:
        """Select an answer in the queue (and so open it)."""
        if not self.queue_pane.select_answer(answer_id):
            self.say(f"No answer {answer_id} in this project.")

    def _on_answer_chosen(self, answer_id: str) -> None:
        self.finish_opening()  # the answer left was opened before another is shown
        prepared = self._take_prepared(answer_id)
        if self.state is not None:
            self.clock.flush()
        if prepared is not None:
            self.show_state(prepared.state, keep_point=False, prepared=prepared)
            self._opening = prepared.state  # saved right after the frame that shows it (event())
            QApplication.instance().installEventFilter(self)  # or before any input, if that comes first
        else:
            review_actions.call_and_show(self, lambda: self.service.open(answer_id), keep_point=False)
        self.points.setFocus()

    def _take_prepared(self, answer_id: str) -> PreparedAnswer | None:
        """The prepared answer if it is this one and still fresh; either way it is used up."""
        prepared, self.prepared = self.prepared, None
        fresh = (
            prepared is not None
            and prepared.state.answer.id == answer_id
            and prepared.changes == self.service.changes(answer_id)  # nothing saved since that changes it
            and self.isVisible()  # else no frame comes to open it after
        )
        return prepared if fresh else None

    def finish_opening(self) -> None:
        """Open (save as opened) the answer shown from a preview, if not done yet; were it any different
        now (another process saved since), it is shown again."""
        preview, self._opening = self._opening, None
        if preview is None:
            return
        QApplication.instance().removeEventFilter(self)
        opened = self.service.open(preview.answer.id)
        if opened != preview:  # point ids may differ, then the selection must point at the saved ones
            self.show_state(opened)
        else:
            self.state = opened
        self.queue_model.update_row(self.service.queue_row(preview.answer.id))  # now in review

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.UpdateRequest and self._opening is not None:
            QTimer.singleShot(0, self.finish_opening)  # after this frame: the answer is on screen
        return handled

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in INPUT:
            self.finish_opening()  # a key or click acts on the saved points, never on a preview
        return False

    def _prepare_next(self) -> None:
        """Read the next answer the way the reviewer moves, while they read this one."""
        self.prepared = None
        if self._opening is not None or self.state is None:
            return
        row = self.table.currentIndex().row() + self._direction
        if not 0 <= row < self.queue_model.rowCount():
            return
        answer_id = self.queue_model.answer_at(row).id
        changes = self.service.changes(answer_id)
        try:
            state = self.service.preview(answer_id)
        except AssayError:
            return  # gone meanwhile: moving there will say so
        answer = state.answer
        same_document = answer.document_id == self.document.document_id
        passages = self.document.passages if same_document else self.service.passages(answer)
        first = state.points[0] if state.points else None
        self.document_pane.prepare_what_it_is_about(state, first)
        if first is not None:
            self.answer_pane.verifier_flag.prepare(self.project, answer.id)
        citations = find_citations(answer.text, passages)
        terms = self.answer_view.terms if same_document else read_contract(passages).terms
        self.prepared = PreparedAnswer(
            state,
            changes,
            reference_standing(self.project.sessions, answer.id),
            passages,
            citations,
            self.answer_view.render(answer.text, state.points, first.point.id if first else None, citations, terms),
        )

    def show_state(self, state: ReviewState, keep_point: bool = True, prepared: PreparedAnswer | None = None) -> None:
        """Show the open answer's state in the panes; `keep_point` keeps the selected row. What a
        prepared answer holds is taken from it, not read again."""
        row = self.points.currentIndex().row() if keep_point else 0
        answer_changed = self.state is None or self.state.answer.id != state.answer.id
        document_changed = self.state is None or self.state.answer.document_id != state.answer.document_id
        self.state = state
        answer = state.answer
        if document_changed:
            passages = prepared.passages if prepared is not None else self.service.passages(answer)
            self.document_pane.show_document(answer.document, answer.document_id, passages)
            reading = self.document_pane.reading
            self.answer_view.terms = reading.terms if reading is not None else ()
        if prepared is not None:
            self.citations = prepared.citations
        elif answer_changed or document_changed:
            self.citations = find_citations(answer.text, self.document.passages)
        self.document.mark({c for p in state.points for c in p.citations}, answer.gold_spans)
        standing = prepared.standing if prepared is not None else reference_standing(self.project.sessions, answer.id)
        self._showing_state = True  # the point is shown once below, not again as its row is selected
        try:
            self.answer_pane.show_state(state, standing, row)
        finally:
            self._showing_state = False
        self._show_point(standing, prepared.rendered if prepared is not None else None)
        self.undo_action.setEnabled(self.service.can_undo)
        self.redo_action.setEnabled(self.service.can_redo)
        if prepared is None:  # a prepared answer's row changes once it is opened (finish_opening)
            self.queue_model.update_row(self.service.queue_row(answer.id))
        self._prepare_timer.start()  # again after every change: a save makes the prepared answer stale

    def current_point(self) -> ReviewPoint | None:
        row = self.points.currentIndex().row()
        return self.state.points[row] if self.state is not None and 0 <= row < len(self.state.points) else None

    def _on_point_changed(self, *_: object) -> None:
        if self.state is not None and not self._showing_state:
            self._show_point(
                reference_standing(self.project.sessions, self.state.answer.id)
            )  # a stress test may have run

    def _show_point(self, standing: Standing | None, rendered: RenderedAnswer | None = None) -> None:
        """The selected point: what the judge and the verifier said, where it is in the answer (as
        `rendered` ahead if it marks this point), and its evidence in the document, most relevant first."""
        assert self.state is not None
        point = self.current_point()
        if point is not None:
            self.answer_pane.show_point(self.project, self.state.answer.id, point, standing)
        if rendered is not None and rendered.current == (point.point.id if point else None):
            self.answer_view.show_rendered(rendered)
        else:
            self.answer_pane.show_answer(self.state, point, self.citations)
        self.document_pane.show_what_it_is_about(self.state, point)

    def _on_point_clicked(self, index: QModelIndex) -> None:
        point = self.current_point()
        if point is not None and index.column() == 5 and point.citations:
            self.document_pane.show_passage(point.citations[0])

    def _on_answer_point_clicked(self, point_id: int) -> None:
        if self.state is not None:
            self.points.selectRow(next(i for i, p in enumerate(self.state.points) if p.point.id == point_id))

    def _move_answer(self, step: int) -> None:
        self._direction = 1 if step > 0 else -1
        self.queue_pane.move(step)

    def _on_search_entered(self) -> None:
        if self.state is not None:
            self.document_pane.search_document(self.state.answer.document)

    def _on_tab_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.dashboard:
            self.dashboard.refresh()  # computed when looked at, not at every tag

    def _on_active_time(self, seconds: float) -> None:
        if self.state is not None:
            self.finish_opening()
            self.service.add_active_time(self.state.answer.id, seconds)
            self._prepare_timer.start()  # the save made the prepared answer stale

    def submit(self) -> None:
        answer_id = self.state.answer.id if self.state is not None else None
        review_actions.submit(self)
        show_training_feedback(self, self.project, self.service.reviewer, answer_id)  # training mode, gold only

    def open_adjudication(self) -> AdjudicationView:
        self.adjudication = open_adjudication(self, self.project, self.service.reviewer)
        return self.adjudication

    def open_qualification(self) -> QualificationDialog:
        dialog = QualificationDialog(self.project, self.service.reviewer, self)
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
        self.queue_model.triage_rule = (min_correctness, min_relevance)
        self.queue_model.reset(self.service.queue())
        self.say(
            f"Triage: cleared when the judge's correctness ≥ {min_correctness:.2f} and relevance ≥ {min_relevance:.2f}."
        )

    def export(self, fmt: str, out: Path, redact: Redact = keep_everything) -> bool:
        """Export the reviewed set to `out`; False (and said why) if nothing was exported."""
        return export_project(self.project, fmt, out, redact, self.say)

    def open_judge_dialog(self) -> None:
        self.judge_runner.open_dialog(self.state.answer.id if self.state else None, self.service.reviewer)

    def start_judge(self, settings: JudgeSettings, answer_ids: list[str] | None) -> JudgeWorker:
        """Run the judge without blocking the window; progress and Cancel live in the status bar."""
        return self.judge_runner.start_judge(settings, answer_ids)

    def _on_answer_judged(self, answer_id: str) -> None:
        """The queue row gets its scores; the open answer gets the judge's tags if still untouched."""
        self.finish_opening()
        self.queue_model.update_row(self.service.queue_row(answer_id), judged=True)
        if self.state is not None and self.state.answer.id == answer_id:
            adopted = self.service.adopt_judge(answer_id)
            self.show_state(adopted or self.service.state(answer_id), keep_point=adopted is None)
        self._prepare_timer.start()  # the verdict saved made the prepared answer stale

    # ------------------------------------------------------------------ the rest

    def say(self, sentence: str) -> None:
        """Expected problems are one sentence here, never a crash or a dialog."""
        self.message.setText(sentence)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Nothing to save: every action already is. Record the last active seconds, stop a run."""
        self.finish_opening()
        self.clock.flush()
        QApplication.instance().removeEventFilter(self.clock)
        self._prepare_timer.stop()
        self.dashboard.stop()
        self.dashboard.wait()
        self.judge_runner.stop_and_wait()
        super().closeEvent(event)
