"""The middle pane: the open answer's question and text, its data points with the review keys, the
judge's rationale and the verifier's flag on the selected point, live scores, rubric results, the
holistic ratings and a comment on the whole answer."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.ingest.citations import Citation
from app.judging.standing import Standing
from app.project import Project
from app.review.service import ReviewPoint, ReviewState
from models.vocabulary import CORRECTNESS_LABELS, RELEVANCE_LABELS, ReviewStatus, Tag
from ui.item_models import DataPointTableModel
from ui.review.answer_html import RATIONALE_COLOUR, legend_html, rationale_html, rubrics_html, scores_html
from ui.review.answer_view import AnswerView
from ui.review.verifier_flags import VerifierFlagLabel

TAG_KEYS = {Qt.Key.Key_1: Tag.CORRECT, Qt.Key.Key_2: Tag.INCORRECT, Qt.Key.Key_3: Tag.IRRELEVANT}


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


class AnswerPane(QWidget):
    """Shows one ReviewState; the window wires its widgets' signals to the review actions."""

    passageRequested = Signal(str)  # noqa: N815 - a citation in the answer, or the verifier's evidence, was clicked

    def __init__(self) -> None:
        super().__init__()
        self.question = QLabel(wordWrap=True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)  # a question's ' or & is shown as typed
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer_view = AnswerView()
        self.answer_view.citationClicked.connect(self.passageRequested)
        self.points_model = DataPointTableModel()
        self.points = DataPointView()
        self.points.setModel(self.points_model)
        self.points.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.points.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.points.verticalHeader().hide()
        self.points.setWordWrap(True)
        self.points.setTextElideMode(Qt.TextElideMode.ElideNone)  # a point's text wraps, never "…"
        # Rows as tall as their wrapped text: an answer has a handful of points, measuring them is cheap.
        self.points.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header = self.points.horizontalHeader()
        header.setTextElideMode(Qt.TextElideMode.ElideNone)  # Qt elides a header's lines as one: "Judge (not st…"
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignCenter)
        header.setHighlightSections(False)  # a selected row made every header bold, and wider than measured: cut
        # The point's text takes the room; every other column is as narrow as its cells and its
        # (multi-line) header. A rater's column hides from the header's context menu.
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.setStretchLastSection(False)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._column_menu)
        self.hidden_columns: set[str] = set()  # hidden by the reviewer (a column, a rater): kept for the next answers
        self.shown_columns: set[str] = set()  # and showed these, hidden till then (a confidence that never varies)
        self.points_model.modelReset.connect(self._hide_columns)

        self.scores = QLabel()
        self.rubrics = QLabel(wordWrap=True)
        self.rationale = QLabel(wordWrap=True)
        self.rationale.setStyleSheet(f"color: {RATIONALE_COLOUR};")
        self.verifier_flag = VerifierFlagLabel(self.passageRequested.emit)
        self.correctness = QComboBox()
        self.correctness.addItems(CORRECTNESS_LABELS)
        self.relevance = QComboBox()
        self.relevance.addItems(RELEVANCE_LABELS)
        for combo in (self.correctness, self.relevance):  # narrow enough for the queue and the document beside
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(10)
        self.comment = QLineEdit(placeholderText="Comment on the whole answer (saved when you leave the field)")
        self.submit_button = QPushButton("Submit review  (Ctrl+Enter)")
        ratings = QHBoxLayout()
        ratings.addWidget(QLabel("Holistic correctness"))
        ratings.addWidget(self.correctness)
        ratings.addWidget(QLabel("relevance"))
        ratings.addWidget(self.relevance)
        ratings.addStretch()
        ratings.addWidget(self.submit_button)

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
        layout.addWidget(self.comment)

    def show_state(self, state: ReviewState, standing: Standing | None, row: int) -> None:
        """Everything but the answer text (which needs the document's passages): the question, the
        points with `row` selected, the scores, the rubric results, the ratings and the comment."""
        self.question.setText(state.answer.question)
        self.points_model.set_points(state.points)
        self.points_model.set_standing(standing)
        if state.points:
            self.points.selectRow(min(max(row, 0), len(state.points) - 1))
        self.scores.setText(scores_html(state))
        rubrics = rubrics_html(state)
        self.rubrics.setText(rubrics)
        self.rubrics.setVisible(bool(rubrics))
        self.correctness.setCurrentIndex(state.holistic_correctness or 0)
        self.relevance.setCurrentIndex(state.holistic_relevance or 0)
        self.comment.setText(state.comment or "")
        self.submit_button.setEnabled(state.status is not ReviewStatus.SUBMITTED)

    def show_answer(self, state: ReviewState, current: ReviewPoint | None, citations: list[Citation]) -> None:
        """The answer text, each point in its tag colour, the current one marked, citations linked."""
        self.answer_view.show_answer(state.answer.text, state.points, current.point.id if current else None, citations)

    def show_point(self, project: Project, answer_id: str, point: ReviewPoint, standing: Standing | None) -> None:
        """What the judge and the verifier said about the selected point."""
        self.points_model.set_standing(standing)
        self.rationale.setText(rationale_html(point, standing))
        self.verifier_flag.show_point(project, answer_id, point.point.span_start, point.point.span_end)

    def column_menu(self) -> QMenu:
        """Show or hide columns: every column but the point's number and text."""
        model, header = self.points_model, self.points.horizontalHeader()
        menu = QMenu(self)
        menu.setToolTipsVisible(True)
        for column in range(2, model.columnCount()):
            label = " ".join(str(model.headerData(column, Qt.Orientation.Horizontal)).split())
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

    def _hide_columns(self) -> None:
        header, model = self.points.horizontalHeader(), self.points_model
        for column in range(2, model.columnCount()):
            header.setSectionHidden(column, model.HEADERS[column] in self.hidden_columns)
        if model.same_confidence is not None and model.HEADERS[model.CONFIDENCE] not in self.shown_columns:
            header.setSectionHidden(model.CONFIDENCE, True)  # one value on every point is no figure

    def ratings(self) -> tuple[int | None, int | None]:
        """The holistic correctness and relevance chosen, None where not rated."""
        return self.correctness.currentIndex() or None, self.relevance.currentIndex() or None
