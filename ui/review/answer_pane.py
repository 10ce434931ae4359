"""The middle pane: the open answer's question and text, its data points with the review keys, the
judge's rationale and the verifier's flag on the selected point, live scores, rubric results, the
holistic ratings and a comment on the whole answer. Everything it shows it reads from the review
session; the verifier's flag has the session's claim checker read an answer off the window's thread."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.figures.rater_names import VERIFIER
from app.ingest.citations import Citation
from app.review import keymap
from app.review.session import Changes, Prepared, ReviewSession
from models.vocabulary import CORRECTNESS_LABELS, RELEVANCE_LABELS, RaterKind, ReviewStatus
from ui.point_model import DataPointTableModel
from ui.review.answer_html import RATIONALE_COLOUR, legend_html, rationale_html, rubrics_html, scores_html
from ui.review.answer_view import AnswerView, RenderedAnswer
from ui.review.comment_box import CommentBox
from ui.review.point_table import PointTable
from ui.review.verifier_flags import VerifierFlagLabel


def written_citations(points: list, citations: list[Citation]) -> list[tuple[tuple[str, tuple[str, ...]], ...]]:
    """Per point, the citations the answer writes inside it or in its lead-in: (as written, passages)."""
    out = []
    for p in points:
        spans = [(p.point.span_start, p.point.span_end), (p.point.context_start, p.point.context_end)]
        inside = [
            c
            for c in citations
            if any(s is not None and e is not None and s <= c.start and c.end <= e for s, e in spans)
        ]
        out.append(tuple(dict.fromkeys((" ".join(c.written.split()), c.passages) for c in inside)))
    return out


class AnswerPane(QWidget):
    """Shows the session's open answer and selected point, and turns its keys and fields into the
    session's actions; what needs another pane goes out as a signal."""

    passageRequested = Signal(str)  # noqa: N815 - a citation in the answer, or the verifier's evidence, was clicked
    missingRequested = Signal()  # noqa: N815 - 4: the text selected in the document is missing
    submitRequested = Signal()  # noqa: N815 - the Submit button was pressed
    judgeRequested = Signal()  # noqa: N815 - the rationale's link to the model picker was clicked

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self._showing = False  # the table's selection is being set from the session, not by the reviewer
        self.question = QLabel(wordWrap=True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)  # a question's ' or & is shown as typed
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer_view = AnswerView()
        self.answer_view.citationClicked.connect(self.passageRequested)
        self.answer_view.pointClicked.connect(session.select_point)
        self.answer_view.pointRequested.connect(self.add_point_from_selection)
        self.points_model = DataPointTableModel()
        self.points = PointTable(keymap.bind(keymap.REVIEW, session, self))  # 4: add_missing_from_selection
        self.points.setModel(self.points_model)
        self.points.selectionModel().currentRowChanged.connect(self._on_row_changed)
        self.points.clicked.connect(self._on_point_clicked)
        # Rows as tall as their wrapped text: an answer has a handful of points, measuring them is cheap.
        self.points.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header = self.points.horizontalHeader()
        header.setTextElideMode(Qt.TextElideMode.ElideNone)  # Qt elides a header's lines as one: "Judge (not st…"
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        header.setHighlightSections(False)  # a selected row made every header bold, and wider than measured: cut
        # The point's text takes the room, and keeps a readable width when a rater's column, the
        # confidence or the guidelines panel appear; every other column is as narrow as its cells and its
        # (multi-line) header, the citations and raters' columns wrap to give way. A rater's column hides
        # from the header's context menu.
        model = self.points_model
        self.points.keep_readable(
            1, lambda column: column == model.CITED or column >= len(model.FIXED), self._gives_way
        )
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._column_menu)
        self.hidden_columns: set[str] = set()  # hidden by the reviewer (a column, a rater): kept for the next answers
        self.shown_columns: set[str] = set()  # and showed these, hidden till then (a confidence that never varies)
        self.points_model.modelReset.connect(self._hide_columns)

        self.scores = QLabel(wordWrap=True)
        self.rubrics = QLabel(wordWrap=True)
        self.rationale = QLabel(wordWrap=True)
        self.rationale.setStyleSheet(f"color: {RATIONALE_COLOUR};")
        self.rationale.linkActivated.connect(lambda _link: self.judgeRequested.emit())  # the model picker
        self.verifier_flag = VerifierFlagLabel(self.passageRequested.emit, session.claim_findings)
        self.correctness = QComboBox()
        self.correctness.addItems(CORRECTNESS_LABELS)
        self.relevance = QComboBox()
        self.relevance.addItems(RELEVANCE_LABELS)
        for combo in (self.correctness, self.relevance):  # narrow enough for the queue and the document beside
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        self.comment = CommentBox("Comment on the whole answer (saved as you leave it)")
        self.correctness.activated.connect(lambda: session.rate(*self.ratings()))
        self.relevance.activated.connect(lambda: session.rate(*self.ratings()))
        self.comment.editingFinished.connect(lambda: session.comment(self.comment.text()))  # on leaving it
        self.submit_button = QPushButton("Submit review  (Ctrl+Enter)")
        self.submit_button.clicked.connect(self.submitRequested)
        ratings = QHBoxLayout()  # the ratings, then the comment with the button: narrow enough for a laptop
        ratings.addWidget(QLabel("Overall: correctness"))
        ratings.addWidget(self.correctness)
        ratings.addWidget(QLabel("relevance"))
        ratings.addWidget(self.relevance)
        ratings.addStretch()
        closing = QHBoxLayout()
        closing.addWidget(self.comment, 1)
        closing.addWidget(self.submit_button)

        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<b>Question</b>"))
        layout.addWidget(self.question)
        layout.addWidget(QLabel("<b>Answer</b>"))
        layout.addWidget(self.answer_view, 2)
        layout.addWidget(QLabel(legend_html(), wordWrap=True))
        layout.addWidget(self.points, 3)
        layout.addWidget(self.rationale)
        layout.addWidget(self.verifier_flag)
        layout.addWidget(self.scores)
        layout.addWidget(self.rubrics)
        layout.addLayout(ratings)
        layout.addLayout(closing)

        session.subscribe(self._on_changes)

    # ------------------------------------------------------------------ showing the session

    def _on_changes(self, changes: Changes) -> None:
        session = self.session
        if changes.project:
            self.verifier_flag.forget()  # of the file replaced
        if session.state is None:
            return
        if changes.opened or changes.project:
            reading = session.reading
            self.answer_view.terms = reading.terms if reading is not None else ()
        if changes.opened or changes.answer or changes.project:
            self.show_state()
            rendered = changes.prepared.rendered if changes.prepared is not None else None
            self.show_point(rendered if isinstance(rendered, RenderedAnswer) else None)
        elif changes.point:
            self._select_row()
            self.show_point()

    def show_state(self) -> None:
        """Everything but the selected point: the question, the points (the session's selected), the
        scores, the rubric results, the ratings and the comment."""
        state = self.session.state
        assert state is not None
        self.question.setText(state.answer.question)
        self.points_model.doubtful = self.session.doubtful_raters()
        self.points_model.set_points(state.points, written_citations(state.points, self.session.citations or []))
        self.points_model.set_standing(self.session.standing)
        self._select_row()
        self.scores.setText(scores_html(state))
        rubrics = rubrics_html(state)
        self.rubrics.setText(rubrics)
        self.rubrics.setVisible(bool(rubrics))
        self.correctness.setCurrentIndex(state.holistic_correctness or 0)
        self.relevance.setCurrentIndex(state.holistic_relevance or 0)
        self.comment.setText(state.comment or "")
        self.submit_button.setEnabled(state.status is not ReviewStatus.SUBMITTED)

    def _select_row(self) -> None:
        if self.session.state is not None and self.session.state.points:
            self._showing = True
            try:
                self.points.selectRow(self.session.row)
            finally:
                self._showing = False

    def show_point(self, rendered: RenderedAnswer | None = None) -> None:
        """The selected point: what the judge and the verifier said, and where it is in the answer (as
        `rendered` ahead if it marks this point)."""
        session, state = self.session, self.session.state
        assert state is not None
        point = session.current_point
        if point is not None:
            self.points_model.set_standing(session.standing)
            self.rationale.setText(rationale_html(point, session.standing))
            self.verifier_flag.show_point(state.answer.id, point.point.span_start, point.point.span_end)
        current = point.point.id if point is not None else None
        if rendered is not None and rendered.current == current:
            self.answer_view.show_rendered(rendered)
        else:
            self.answer_view.show_answer(state.answer.text, state.points, current, session.citations)

    def prepare(self, prepared: Prepared) -> RenderedAnswer:
        """Read ahead what showing a prepared answer needs: the verifier's findings, its text rendered."""
        state = prepared.state
        first = state.points[0] if state.points else None
        if first is not None:
            self.verifier_flag.prepare(state.answer.id)
        terms = prepared.reading.terms if prepared.reading is not None else ()
        return self.answer_view.render(
            state.answer.text, state.points, first.point.id if first else None, prepared.citations, terms
        )

    # ------------------------------------------------------------------ the reviewer's input

    def add_missing_from_selection(self) -> None:
        """4: the text selected in the document is a missing point (the window reads the document pane)."""
        self.missingRequested.emit()

    def _on_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._showing and current.isValid():
            self.session.select(current.row(), source=self)

    def _on_point_clicked(self, index: QModelIndex) -> None:
        point = self.session.current_point
        if point is not None and index.column() == 5 and point.passages:
            self.passageRequested.emit(point.passages[0])

    def add_point_from_selection(self) -> None:
        """Make a data point of the answer text selected in the answer pane."""
        span = self.answer_view.selected_span() if self.session.state is not None else None
        if span is None:
            self.session.say("Select the answer text to make a data point of, in the answer pane.")
        elif self.session.add_point(*span):
            self.points.setFocus()

    def column_menu(self) -> QMenu:
        """Show or hide columns: every column but the point's number and text."""
        model, header = self.points_model, self.points.horizontalHeader()
        menu = QMenu(self)
        menu.setToolTipsVisible(True)
        for column in range(2, model.columnCount()):
            label = " ".join(str(model.headerData(column, Qt.Orientation.Horizontal)).split())
            if column in self.points.hidden_for_width:
                label += "  (hidden for width)"
            action = menu.addAction(label)
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(column))
            action.setToolTip(str(model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)))
            action.toggled.connect(lambda shown, column=column: self.show_column(column, shown))
        return menu

    def _column_menu(self, position: QPoint) -> None:
        self.column_menu().exec(self.points.horizontalHeader().mapToGlobal(position))

    def show_column(self, column: int, shown: bool) -> None:
        """Show or hide a column; it stays so for the next answers (a rater's, wherever it is)."""
        self.points.horizontalHeader().setSectionHidden(column, not shown)
        name = self.points_model.HEADERS[column]
        (self.hidden_columns.discard if shown else self.hidden_columns.add)(name)
        (self.shown_columns.add if shown else self.shown_columns.discard)(name)

    def _gives_way(self, column: int) -> bool:
        """A juror's column (a judge run's, not the claim checker's nor a person's) is hidden when the
        table is too narrow for it beside a readable text, unless the reviewer chose to show it."""
        model = self.points_model
        if column < len(model.FIXED) or column >= model.columnCount():
            return False
        rater = model.raters[column - len(model.FIXED)]
        juror = rater.kind is RaterKind.JUDGE and rater.rater != VERIFIER and not rater.rater.startswith("jury:")
        return juror and rater.rater not in self.shown_columns

    def _hide_columns(self) -> None:
        header, model = self.points.horizontalHeader(), self.points_model
        for column in range(2, model.columnCount()):
            hidden = model.HEADERS[column] in self.hidden_columns
            if column in self.points.hidden_for_width and self._gives_way(column):
                hidden = True  # as the table left it for want of room: it shows it again when there is room
            if column == model.CONFIDENCE and model.no_confidence_figure:  # one value on every point is no figure
                hidden = hidden or model.HEADERS[column] not in self.shown_columns
            if header.isSectionHidden(column) != hidden:  # each change lays out every row again: 2 ms an answer
                header.setSectionHidden(column, hidden)

    def ratings(self) -> tuple[int | None, int | None]:
        """The holistic correctness and relevance chosen, None where not rated."""
        return self.correctness.currentIndex() or None, self.relevance.currentIndex() or None
