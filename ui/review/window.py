"""The reviewer's window: the answer queue, the answer split into data points, and the contract.

Keyboard first: 1 correct · 2 incorrect · 3 irrelevant · 4 missing (from the text selected in the
document) · Enter accept the judge's tag and move on · J/K next/previous point · Ctrl+Z/Ctrl+Shift+Z
undo/redo · Ctrl+F search the document · Ctrl+Enter submit. Every action is saved at once.
"""

from __future__ import annotations

import html
import time
from pathlib import Path

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.citations import find_citations
from app.errors import AssayError
from app.exports import Redact, export
from app.judging import Progress, RunSummary, destination, is_on_premise
from app.project import Project
from app.redaction import keep_everything
from app.review import BLIND, ReviewService, ReviewState
from app.scores import shown
from app.settings import Settings, save_settings
from app.standing import reference_standing, standing_of_model
from models.vocabulary import ReviewStatus, Tag
from ui.review.answer_view import CONTEXT_COLOUR, UNCOVERED_COLOUR, AnswerView
from ui.backups_dialog import BackupKeeper, BackupsDialog
from ui.dashboard import Dashboard
from ui.review.document_pane import show_what_it_is_about
from ui.review.document_view import DocumentView
from ui.export_dialog import ExportDialog
from ui.help import about_dialog, shortcut_sheet
from ui.item_models import TAG_STYLE, AnswerQueueModel, DataPointTableModel, QueueFilterModel
from ui.judge_dialog import JudgeDialog, JudgeWorker
from ui.review.queue_pane import document_chooser, fit_queue_columns
from ui.review.sample_actions import draw_random_sample, least_certain_first, refresh_queue_statistics
from ui.review.verifier_flags import VerifierFlagLabel

IDLE_AFTER_SECONDS = 60  # no key or mouse for this long: the reviewer is away, the clock stops
CORRECTNESS_LABELS = [
    "—",
    "1 Completely incorrect",
    "2 Mostly incorrect",
    "3 Equally correct and incorrect",
    "4 Mostly correct",
    "5 Completely correct",
]
RELEVANCE_LABELS = [
    "—",
    "1 Completely irrelevant",
    "2 Mostly irrelevant",
    "3 Equally relevant and irrelevant",
    "4 Mostly relevant",
    "5 Completely relevant",
]
TAG_KEYS = {Qt.Key.Key_1: Tag.CORRECT, Qt.Key.Key_2: Tag.INCORRECT, Qt.Key.Key_3: Tag.IRRELEVANT}


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


class DataPointView(QTableView):
    """The data point list; it turns the review keys into past-tense signals."""

    tagPressed = Signal(object)  # Tag  # noqa: N815 - Qt signal names
    missingPressed = Signal()  # noqa: N815
    acceptPressed = Signal()  # noqa: N815
    movePressed = Signal(int)  # noqa: N815

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        key = event.key()
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            super().keyPressEvent(event)
        elif key in TAG_KEYS:
            self.tagPressed.emit(TAG_KEYS[key])
        elif key == Qt.Key.Key_4:
            self.missingPressed.emit()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.acceptPressed.emit()
        elif key == Qt.Key.Key_J:
            self.movePressed.emit(1)
        elif key == Qt.Key.Key_K:
            self.movePressed.emit(-1)
        else:
            super().keyPressEvent(event)


class ActivityClock(QObject):
    """Counts the seconds a reviewer is actually at work on the open answer (idle time excluded)."""

    def __init__(self, flush, parent: QObject) -> None:
        # Parented to the window: when the window goes, Qt removes the clock from the
        # application's event filters with it, so no filter ever points at a deleted object.
        super().__init__(parent)
        self._flush = flush
        self.last_activity = time.monotonic()
        self.pending = 0.0
        self._last_tick = time.monotonic()
        self.timer = QTimer(self, interval=5000)
        self.timer.timeout.connect(self._on_timer_timeout)
        self.timer.start()

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() in (QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.Wheel):
            self.last_activity = time.monotonic()
        return False

    def _on_timer_timeout(self) -> None:
        now = time.monotonic()
        if now - self.last_activity <= IDLE_AFTER_SECONDS:
            self.pending += now - self._last_tick
        self._last_tick = now
        if self.pending >= 30:
            self.flush()

    def flush(self) -> None:
        seconds, self.pending = self.pending, 0.0
        self._last_tick = time.monotonic()
        if seconds > 0:
            self._flush(seconds)


class ThresholdsDialog(QDialog):
    """LeMAJ's triage rule, as the user wants it: correctness and relevance (F1) thresholds."""

    def __init__(self, parent: QWidget, min_correctness: float, min_relevance: float) -> None:
        super().__init__(parent)
        self.setWindowTitle("Triage thresholds")
        self.correctness = QDoubleSpinBox(minimum=0, maximum=1, singleStep=0.05, decimals=2, value=min_correctness)
        self.relevance = QDoubleSpinBox(minimum=0, maximum=1, singleStep=0.05, decimals=2, value=min_relevance)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        form.addRow(QLabel("An answer is <b>cleared</b> when the judge's scores reach both; the rest are flagged."))
        form.addRow("Correctness at least", self.correctness)
        form.addRow("Relevance (F1) at least", self.relevance)
        form.addRow(buttons)

    def values(self) -> tuple[float, float]:
        return self.correctness.value(), self.relevance.value()


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
        self.worker: JudgeWorker | None = None
        self.setWindowTitle(f"Assay — {reviewer} — {project.url.rsplit('/', 1)[-1]}")
        self.resize(1500, 900)
        self._build_queue()
        refresh_queue_statistics(self, certainty=False, requery=False)  # the queue was just read
        self._build_review_pane()
        self._build_document_pane()
        self._build_actions()
        self._build_status_bar()

        splitter = QSplitter()
        splitter.addWidget(self.queue_panel)
        splitter.addWidget(self.review_panel)
        splitter.addWidget(self.document_panel)
        splitter.setSizes([470, 560, 470])
        self.dashboard = Dashboard(project, lambda: (self.settings.min_correctness, self.settings.min_relevance))
        self.tabs = QTabWidget()
        self.tabs.addTab(splitter, "Review")
        self.tabs.addTab(self.dashboard, "Dashboard")
        self.tabs.currentChanged.connect(self._on_tab_changed)
        self.setCentralWidget(self.tabs)
        self.clock = ActivityClock(self._on_active_time, self)
        QApplication.instance().installEventFilter(self.clock)
        if first_answer:
            self.open_answer(first_answer)
        elif self.queue_model.rows:
            self.table.selectRow(0)
        self.backup_keeper = BackupKeeper(self)  # on open, then every few minutes after a change

    # ------------------------------------------------------------------ building

    def _build_queue(self) -> None:
        rule = (self.settings.min_correctness, self.settings.min_relevance)
        self.queue_model = AnswerQueueModel(self.service.queue(), triage_rule=rule)
        self.proxy = QueueFilterModel(self)
        self.proxy.setSourceModel(self.queue_model)
        self.filter = QLineEdit(placeholderText="Filter: id, question, flagged, reviewed…")
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.documents = document_chooser(self.queue_model.rows)
        self.documents.currentIndexChanged.connect(lambda: self.proxy.set_document(self.documents.currentData()))
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.selectionModel().currentRowChanged.connect(self._on_queue_row_changed)
        self.queue_panel = QWidget()
        layout = QVBoxLayout(self.queue_panel)
        layout.addWidget(QLabel("<b>Answers</b>"))
        layout.addWidget(self.documents)
        layout.addWidget(self.filter)
        layout.addWidget(self.table)
        fit_queue_columns(self.table, self.queue_panel)

    def _build_review_pane(self) -> None:
        self.question = QLabel(wordWrap=True)
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer_view = AnswerView()
        self.answer_view.citationClicked.connect(self.show_passage)
        self.answer_view.pointClicked.connect(self._on_answer_point_clicked)
        self.answer_view.pointRequested.connect(self.add_point_from_selection)
        self.points_model = DataPointTableModel()
        self.points = DataPointView()
        self.points.setModel(self.points_model)
        self.points.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.points.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.points.verticalHeader().hide()
        self.points.setWordWrap(True)
        header = self.points.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column in (0, 2, 3, 4, 5):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.points.tagPressed.connect(self._on_tag_pressed)
        self.points.missingPressed.connect(self.add_missing_from_selection)
        self.points.acceptPressed.connect(self._on_accept_pressed)
        self.points.movePressed.connect(self._on_move_pressed)
        self.points.selectionModel().currentRowChanged.connect(self._on_point_changed)
        self.points.clicked.connect(self._on_point_clicked)

        self.scores = QLabel()
        self.rubrics = QLabel(wordWrap=True)
        self.rationale = QLabel(wordWrap=True)
        self.rationale.setStyleSheet("color: #444;")
        self.rationale.linkActivated.connect(lambda _link: self.open_judge_dialog())  # the model picker
        self.verifier_flag = VerifierFlagLabel(self.show_passage)
        self.correctness = QComboBox()
        self.correctness.addItems(CORRECTNESS_LABELS)
        self.relevance = QComboBox()
        self.relevance.addItems(RELEVANCE_LABELS)
        for combo in (self.correctness, self.relevance):  # narrow enough for the queue and the document beside
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        self.correctness.activated.connect(self._on_rating_changed)
        self.relevance.activated.connect(self._on_rating_changed)
        self.comment = QLineEdit(placeholderText="Comment on the whole answer (saved when you leave the field)")
        self.comment.editingFinished.connect(self._on_comment_finished)
        self.submit_button = QPushButton("Submit review  (Ctrl+Enter)")
        self.submit_button.clicked.connect(self.submit)
        ratings = QHBoxLayout()
        ratings.addWidget(QLabel("Holistic correctness"))
        ratings.addWidget(self.correctness)
        ratings.addWidget(QLabel("relevance"))
        ratings.addWidget(self.relevance)
        ratings.addStretch()
        ratings.addWidget(self.submit_button)

        legend = "  ".join(
            f"<span style='background:{c}'>&nbsp;{html.escape(t)}&nbsp;</span>"
            for tag, (t, c) in TAG_STYLE.items()
            if tag
        )
        legend += (
            f"  <span style='color:{CONTEXT_COLOUR}'><i>lead-in</i></span>"
            f"  <span style='color:{UNCOVERED_COLOUR}; text-decoration: underline'>in no data point</span>"
        )
        keys = QLabel(
            f"{legend}<br><span style='color:#555'>1 correct · 2 incorrect · 3 irrelevant · "
            "4 missing (select in document) · Enter accept judge · J/K move · Ctrl+Z undo</span>",
            wordWrap=True,
        )
        self.review_panel = QWidget()
        layout = QVBoxLayout(self.review_panel)
        layout.addWidget(QLabel("<b>Question</b>"))
        layout.addWidget(self.question)
        layout.addWidget(QLabel("<b>Answer</b>"))
        layout.addWidget(self.answer_view, 2)
        layout.addWidget(keys)
        layout.addWidget(self.points, 3)
        layout.addWidget(self.rationale)
        layout.addWidget(self.verifier_flag)
        layout.addWidget(self.scores)
        layout.addWidget(self.rubrics)
        layout.addLayout(ratings)
        layout.addWidget(self.comment)

    def _build_document_pane(self) -> None:
        self.document_title = QLabel()
        self.document = DocumentView()
        self.search = QLineEdit(placeholderText="Search the document (Ctrl+F), ranked by BM25")
        self.search.returnPressed.connect(self._on_search_entered)
        self.hits = QListWidget()
        self.hits.setWordWrap(True)
        self.hits.hide()
        self.hits.itemActivated.connect(self._on_hit_activated)
        self.hits.itemClicked.connect(self._on_hit_activated)
        add = QPushButton("Add selection as missing  (4)")
        add.clicked.connect(self.add_missing_from_selection)
        self.document_panel = QWidget()
        layout = QVBoxLayout(self.document_panel)
        layout.addWidget(self.document_title)
        layout.addWidget(self.search)
        layout.addWidget(self.hits, 1)
        layout.addWidget(self.document, 4)
        layout.addWidget(add)

    def _build_actions(self) -> None:
        def action(text: str, shortcut: QKeySequence | str, slot, menu) -> QAction:
            act = QAction(text, self)
            act.setShortcut(QKeySequence(shortcut))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(slot)
            menu.addAction(act)
            return act

        review = self.menuBar().addMenu("&Review")
        self.undo_action = action("Undo", QKeySequence.StandardKey.Undo, self.undo, review)
        self.redo_action = action("Redo", "Ctrl+Shift+Z", self.redo, review)
        review.addSeparator()
        action("Make a data point of the selected answer text", "Ctrl+Shift+N", self.add_point_from_selection, review)
        action("Edit data point…", "F2", self.edit_point, review)
        action("Split data point…", "Ctrl+Shift+S", self.split_point, review)
        action("Merge with next data point", "Ctrl+Shift+M", self.merge_point, review)
        action("Delete data point", QKeySequence.StandardKey.Delete, self.delete_point, review)
        action("Comment on data point…", "Ctrl+Shift+C", self.comment_point, review)
        review.addSeparator()
        action("Submit review", "Ctrl+Return", self.submit, review)
        action("Search document", QKeySequence.StandardKey.Find, self._on_find_triggered, review)
        action("Next answer", "Ctrl+Down", lambda: self._move_answer(1), review)
        action("Previous answer", "Ctrl+Up", lambda: self._move_answer(-1), review)
        action("Least certain first", "Ctrl+Shift+U", lambda: least_certain_first(self), review)
        project = self.menuBar().addMenu("&Project")
        self.blind_action = QAction("Blind review (hide the judge until submitted)", self, checkable=True)
        self.blind_action.setChecked(self.service.mode == BLIND)
        self.blind_action.toggled.connect(self._on_blind_toggled)
        project.addAction(self.blind_action)
        action("Run the judge…", "Ctrl+J", self.open_judge_dialog, project)
        action("Export the reviewed set…", "Ctrl+E", self.open_export_dialog, project)
        project.addAction("Triage thresholds…", self.open_thresholds_dialog)
        project.addAction("Backups…", lambda: BackupsDialog(self, self.backup_keeper).exec())
        project.addAction("Review a random sample…", lambda: draw_random_sample(self))
        help_menu = self.menuBar().addMenu("&Help")
        action("Keyboard shortcuts", "F1", self.show_shortcuts, help_menu)
        help_menu.addAction("About Assay", lambda: about_dialog(self, self.settings.model).exec())

    def show_shortcuts(self) -> QDialog:
        actions = [a for menu in self.menuBar().findChildren(QMenu) for a in menu.actions()]
        sheet = shortcut_sheet(self, actions)
        sheet.open()
        return sheet

    def _build_status_bar(self) -> None:
        self.message = QLabel()
        self.network_banner = QLabel()
        self.network_banner.setStyleSheet("background:#fde2b8; padding:1px 6px;")
        self.network_banner.hide()
        self.progress = QProgressBar(maximumWidth=220)
        self.progress.hide()
        self.cancel_button = QPushButton("Cancel judge run")
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(self.cancel_judge)
        bar = self.statusBar()
        bar.addWidget(self.message, 1)
        bar.addPermanentWidget(self.network_banner)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)

    # ------------------------------------------------------------------ showing an answer

    def open_answer(self, answer_id: str) -> None:
        """Select an answer in the queue (and so open it)."""
        for row in range(self.proxy.rowCount()):
            if self.proxy.index(row, 0).data() == answer_id:
                self.table.selectRow(row)
                return
        self.say(f"No answer {answer_id} in this project.")

    def _on_queue_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        answer_id = self.queue_model.rows[self.proxy.mapToSource(current).row()].id
        if self.state is not None:
            self.clock.flush()
        self._run(lambda: self.service.open(answer_id), keep_point=False)
        self.points.setFocus()

    def _show(self, state: ReviewState, keep_point: bool = True) -> None:
        row = self.points.currentIndex().row() if keep_point else 0
        document_changed = self.state is None or self.state.answer.document_id != state.answer.document_id
        self.state = state
        answer = state.answer
        self.question.setText(html.escape(answer.question))
        self.points_model.set_points(state.points)
        self.points_model.set_standing(reference_standing(self.project.sessions, answer.id))
        if state.points:
            self.points.selectRow(min(max(row, 0), len(state.points) - 1))
        if document_changed:
            self.document_title.setText(f"<b>{html.escape(answer.document)}</b>")
            self.document.show_document(answer.document_id, self.service.passages(answer))
        self.document.mark({c for p in state.points for c in p.citations}, answer.gold_spans)
        self._render_answer()
        self._render_scores()
        self._render_rubrics()
        self.correctness.setCurrentIndex(state.holistic_correctness or 0)
        self.relevance.setCurrentIndex(state.holistic_relevance or 0)
        self.comment.setText(state.comment or "")
        self.submit_button.setEnabled(state.status is not ReviewStatus.SUBMITTED)
        self.undo_action.setEnabled(self.service.can_undo)
        self.redo_action.setEnabled(self.service.can_redo)
        self.queue_model.update_row(self.service.queue_row(answer.id))
        show_what_it_is_about(self.document, self.project, state, self.current_point())

    def _render_answer(self) -> None:
        assert self.state is not None
        current = self.current_point()
        citations = find_citations(self.state.answer.text, self.document.passages)
        self.answer_view.show_answer(
            self.state.answer.text, self.state.points, current.point.id if current else None, citations
        )

    def _render_rubrics(self) -> None:
        """The answer-level rubrics (DeCE criteria as a checklist, labels for the others)."""
        assert self.state is not None
        lines = []
        for r in self.state.rubric_results:
            score = f" ({r.score:.2f})" if r.score is not None else ""
            lines.append(
                f"<b>{html.escape(r.rubric)}</b> {html.escape(r.label or '')}{score} "
                f"<span style='color:#666'>— {html.escape(r.rater)}</span>"
            )
            for i, c in enumerate(r.payload.get("criteria", ()), start=1):
                mark = "☑" if c.get("satisfied") else "☐"
                lines.append(f"&nbsp;&nbsp;{mark} {i}. {html.escape(c.get('text', ''))} <i>[{c.get('status')}]</i>")
            if r.payload.get("bias_warning"):
                lines.append(f"&nbsp;&nbsp;⚠ {html.escape(r.payload['bias_warning'])}")
        self.rubrics.setText("<br>".join(lines))
        self.rubrics.setVisible(bool(lines))

    def _render_scores(self) -> None:
        assert self.state is not None
        s = self.state.scores
        mode = "blind: the judge is hidden until you submit" if not self.state.judge_visible else "assisted"
        self.scores.setText(
            f"<b>Correctness</b> {shown(s.correctness)} · <b>Precision</b> {shown(s.precision)} · "
            f"<b>Recall</b> {shown(s.recall)} · <b>F1</b> {shown(s.f1)} &nbsp; "
            f"<span style='color:#555'>(C {s.correct} · I {s.incorrect} · Irr {s.irrelevant} · M {s.missing};"
            f" {self.state.status.value.replace('_', ' ')}; {mode})</span>"
        )

    # ------------------------------------------------------------------ review actions

    def current_point(self):
        if self.state is None:
            return None
        row = self.points.currentIndex().row()
        return self.state.points[row] if 0 <= row < len(self.state.points) else None

    def _act(self, change, move: int = 0) -> None:
        """Run one review action on the current point; errors become one sentence in the status bar."""
        point = self.current_point()
        if self.state is None or point is None:
            return
        if self._run(lambda: change(self.state.answer.id, point.point.id)) and move:
            self._on_move_pressed(move)

    def _run(self, call, keep_point: bool = True) -> bool:
        try:
            state = call()
        except AssayError as exc:
            self.say(str(exc))
            return False
        if state is not None:
            self._show(state, keep_point=keep_point)
        self.say("")
        return True

    def _on_tag_pressed(self, tag: Tag) -> None:
        self._act(lambda a, p: self.service.set_tag(a, p, tag), move=1)

    def _on_accept_pressed(self) -> None:
        self._act(self.service.accept_judge, move=1)

    def _on_move_pressed(self, step: int) -> None:
        if self.state is None or not self.state.points:
            return
        row = min(max(self.points.currentIndex().row() + step, 0), len(self.state.points) - 1)
        self.points.selectRow(row)

    def _on_point_changed(self, *_: object) -> None:
        point = self.current_point()
        if point is None:
            return
        why = point.judge_rationale or ""
        standing = reference_standing(self.project.sessions, self.state.answer.id)  # a stress test may have run
        self.points_model.set_standing(standing)
        judge = f"Judge ({standing.text})" if standing and point.judge_tag is not None else "Judge"
        shown_why = why or (f"tagged {point.judge_tag.value}" if point.judge_tag is not None else "")
        capable = ' — <a href="judge">use a capable model…</a>' if standing and standing.demonstration else ""
        text = f"<i>{html.escape(judge)}: {html.escape(shown_why)}</i>{capable}"
        self.rationale.setText(text if shown_why else "")
        self.verifier_flag.show_point(self.project, self.state.answer.id, point.point.span_start, point.point.span_end)
        self._render_answer()
        show_what_it_is_about(self.document, self.project, self.state, point)  # its evidence, most relevant first

    def _on_point_clicked(self, index: QModelIndex) -> None:
        point = self.current_point()
        if point is not None and index.column() == 5 and point.citations:
            self.show_passage(point.citations[0])

    def show_passage(self, citation_id: str) -> None:
        if not self.document.focus_passage(citation_id):
            self.say(f"{citation_id} is not a passage of this document.")

    def add_missing_from_selection(self) -> None:
        if self.state is None:
            return
        text, passages = self.document.selected_text_and_passages()
        if not text:
            text, ok = QInputDialog.getText(self, "Missing data point", "What does the answer leave out?")
            if not ok:
                return
            passages = [self.document.focused] if self.document.focused else []
        answer_id = self.state.answer.id
        if self._run(lambda: self.service.add_missing(answer_id, text, passages)):
            self.points.selectRow(len(self.state.points) - 1)
            self.points.setFocus()

    def add_point_from_selection(self) -> None:
        """Make a data point of the answer text selected in the answer pane."""
        span = self.answer_view.selected_span() if self.state is not None else None
        if span is None:
            self.say("Select the answer text to make a data point of, in the answer pane.")
            return
        answer_id = self.state.answer.id
        if self._run(lambda: self.service.add_point(answer_id, *span)):
            row = next(
                i
                for i, p in enumerate(self.state.points)
                if p.point.span_start is not None and p.point.span_start >= span[0]
            )
            self.points.selectRow(row)
            self.points.setFocus()

    def _on_answer_point_clicked(self, point_id: int) -> None:
        if self.state is not None:
            self.points.selectRow(next(i for i, p in enumerate(self.state.points) if p.point.id == point_id))

    def edit_point(self) -> None:
        point = self.current_point()
        if point is None:
            return
        text, ok = QInputDialog.getMultiLineText(self, "Edit data point", "Data point:", point.point.text)
        if ok:
            self._act(lambda a, p: self.service.edit_text(a, p, text))

    def split_point(self) -> None:
        point = self.current_point()
        if point is None:
            return
        text, ok = QInputDialog.getText(
            self, "Split data point", "Put a | where the data point should be cut:", text=point.point.text
        )
        if ok and "|" in text:
            self._act(lambda a, p: self.service.split(a, p, text.index("|")))

    def merge_point(self) -> None:
        self._act(self.service.merge_with_next)

    def delete_point(self) -> None:
        self._act(self.service.delete)

    def comment_point(self) -> None:
        point = self.current_point()
        if point is None:
            return
        text, ok = QInputDialog.getText(self, "Comment", "Comment on this data point:", text=point.point.comment or "")
        if ok:
            self._act(lambda a, p: self.service.comment_point(a, p, text))

    def undo(self) -> None:
        self._run(self.service.undo)

    def redo(self) -> None:
        self._run(self.service.redo)

    def submit(self) -> None:
        if self.state is not None and self._run(lambda: self.service.submit(self.state.answer.id)):
            self.say("Review submitted.")
            self._move_answer(1)

    def _on_rating_changed(self, *_: object) -> None:
        if self.state is None:
            return
        correctness, relevance = self.correctness.currentIndex() or None, self.relevance.currentIndex() or None
        self._run(lambda: self.service.rate(self.state.answer.id, correctness, relevance))

    def _on_comment_finished(self) -> None:
        if self.state is not None and self.comment.text() != (self.state.comment or ""):
            self._run(lambda: self.service.comment_answer(self.state.answer.id, self.comment.text()))

    def _on_blind_toggled(self, blind: bool) -> None:
        self.service.set_mode(BLIND if blind else "assisted")
        if self.state is not None:
            self._run(lambda: self.service.state(self.state.answer.id))

    def _move_answer(self, step: int) -> None:
        row = self.table.currentIndex().row() + step
        if 0 <= row < self.proxy.rowCount():
            self.table.selectRow(row)

    def _on_tab_changed(self, index: int) -> None:
        if self.tabs.widget(index) is self.dashboard:
            self.dashboard.refresh()  # computed when looked at, not at every tag

    def _on_active_time(self, seconds: float) -> None:
        if self.state is not None:
            self.service.add_active_time(self.state.answer.id, seconds)

    # ------------------------------------------------------------------ document search

    def _on_find_triggered(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def _on_search_entered(self) -> None:
        if self.state is None:
            return
        try:
            hits = self.project.search(self.state.answer.document, self.search.text(), limit=15)
        except AssayError as exc:
            self.say(str(exc))
            return
        self.hits.clear()
        for hit in hits:
            where = f" §{hit.passage.section}" if hit.passage.section else ""
            item = QListWidgetItem(f"{hit.passage.citation_id}{where}  {hit.passage.text[:160]}")
            item.setData(Qt.ItemDataRole.UserRole, hit.passage.citation_id)
            self.hits.addItem(item)
        self.hits.setVisible(bool(hits))
        self.say(f"{len(hits)} passages match." if hits else "No passage of this document matches.")
        if hits:
            self.hits.setCurrentRow(0)
            self.hits.setFocus()

    def _on_hit_activated(self, item: QListWidgetItem) -> None:
        self.show_passage(item.data(Qt.ItemDataRole.UserRole))

    # ------------------------------------------------------------------ triage thresholds

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

    # ------------------------------------------------------------------ exports

    def open_export_dialog(self) -> None:
        url = self.project.url
        folder = Path(url.removeprefix("sqlite:///")).parent if url.startswith("sqlite:///") else None
        dialog = ExportDialog(self, folder)
        if dialog.exec():
            self.export(dialog.fmt, dialog.out(), dialog.redaction())

    def export(self, fmt: str, out: Path, redact: Redact = keep_everything) -> bool:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            export(self.project, fmt, out, redact)
        except (AssayError, OSError) as exc:
            self.say(f"Nothing exported: {exc}")
            return False
        finally:
            QApplication.restoreOverrideCursor()
        self.say(f"Exported to {out}" + (" (redacted)" if redact is not keep_everything else ""))
        return True

    # ------------------------------------------------------------------ judge runs

    def open_judge_dialog(self) -> None:
        dialog = JudgeDialog(
            self,
            selected_answer=self.state.answer.id if self.state else None,
            choice=self.settings.model,
            allowed_hosts=self.project.allowed_hosts(),
            standing=lambda choice: standing_of_model(self.project.sessions, choice),
        )
        if dialog.exec():
            settings = dialog.settings()
            self.settings.model = dialog.picker.choice()
            save_settings(self.settings)
            if settings.allow_network and dialog.picker.host() not in self.project.allowed_hosts():
                self.project.set_host_allowed(dialog.picker.host(), True, self.service.reviewer)
            self.start_judge(settings, dialog.answer_ids())

    def start_judge(self, settings, answer_ids: list[str] | None) -> JudgeWorker:
        """Run the judge without blocking the window; progress and Cancel live in the status bar."""
        return self.start_worker(JudgeWorker(self.project, settings, answer_ids), settings)

    def start_worker(self, worker: JudgeWorker, settings) -> JudgeWorker:
        if self.worker is not None:
            self.say("A judge run is already in progress.")
            return self.worker
        worker.setAutoDelete(False)
        worker.signals.progressed.connect(self._on_judge_progressed)
        worker.signals.loaded.connect(self._on_judge_loaded)
        worker.signals.failed.connect(self._on_judge_failed)
        worker.signals.finished.connect(self._on_judge_finished)
        self.worker = worker
        if settings.backend != "local":
            host = destination(settings)
            where = "on-premise" if is_on_premise(host) else "outside this network"
            self.network_banner.setText(f"⚠ Sending document text to {host} ({where})")
            self.network_banner.show()
        self.progress.setRange(0, 0)
        self.progress.show()
        self.cancel_button.show()
        self.say("Judging… the window stays usable.")
        QThreadPool.globalInstance().start(worker)
        return worker

    def cancel_judge(self) -> None:
        if self.worker is not None:
            self.worker.cancel.set()
            self.say("Stopping the judge after the answer in flight…")

    def _on_judge_loaded(self, device: str) -> None:
        self.progress.setToolTip(device)  # kept beside the bar while the run goes on
        self.say(f"Judging… {device}.")

    def _on_judge_progressed(self, progress: Progress) -> None:
        self.progress.setRange(0, progress.total)
        self.progress.setValue(progress.done)
        eta = _duration(progress.eta_seconds) if progress.eta_seconds is not None else "—"
        self.say(f"Judged {progress.done}/{progress.total} · {progress.tokens_per_second:.0f} tokens/s · ETA {eta}")
        self._on_answer_judged(progress.answer_id)

    def _on_answer_judged(self, answer_id: str) -> None:
        """The queue row gets its scores; the open answer gets the judge's tags if still untouched."""
        self.queue_model.update_row(self.service.queue_row(answer_id))
        if self.state is not None and self.state.answer.id == answer_id:
            adopted = self.service.adopt_judge(answer_id)
            self._show(adopted or self.service.state(answer_id), keep_point=adopted is None)

    def _on_judge_failed(self, message: str) -> None:
        self._judge_done()
        self.say(message)

    def _on_judge_finished(self, summary: RunSummary) -> None:
        self._judge_done()
        stopped = " (cancelled: run it again to resume)" if summary.cancelled else ""
        refused = sum(summary.rejected.values())
        note = f", {refused} judge points refused by validation" if refused else ""
        self.say(f"{summary.rater}: {summary.judged} judged, {summary.failed} failed{note}{stopped}.")
        self.queue_model.reset(self.service.queue())

    def _judge_done(self) -> None:
        self.worker = None
        self.network_banner.hide()
        self.progress.hide()
        self.cancel_button.hide()

    # ------------------------------------------------------------------ the rest

    def say(self, sentence: str) -> None:
        """Expected problems are one sentence here, never a crash or a dialog."""
        self.message.setText(sentence)

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Nothing to save: every action already is. Record the last active seconds, stop a run."""
        self.clock.flush()
        QApplication.instance().removeEventFilter(self.clock)
        self.dashboard.stop()
        self.dashboard.wait()
        if self.worker is not None:
            self.worker.cancel.set()
            QThreadPool.globalInstance().waitForDone(60_000)
        super().closeEvent(event)
