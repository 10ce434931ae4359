"""Two generators' answers to one question side by side: the answers in columns, their data points in
aligned rows (a point only one answer makes is marked so), each point's tags; the reviewer tags points
in either column with the review keys and records which answer is better.

Keys: 1 correct · 2 incorrect · 3 irrelevant · Enter the judge's tag, on the point selected (its
column says which answer) · J/K next/previous row · A left better · B right better · T tie (the reason
typed beside them goes with it) · Ctrl+Down/Ctrl+Up next/previous question. Blind comparison names
the columns Answer A and Answer B and draws which is left (app/review/pairwise.py).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.review.pairwise import PairwiseReview, SharedQuestion, SideBySide
from app.review.service import ReviewPoint, ReviewService, ReviewState
from models.vocabulary import Tag
from ui.item_models import TAG_STYLE

if TYPE_CHECKING:
    from ui.review.window import ReviewWindow

TAG_KEYS = {Qt.Key.Key_1: Tag.CORRECT, Qt.Key.Key_2: Tag.INCORRECT, Qt.Key.Key_3: Tag.IRRELEVANT}
PREFERENCE_KEYS = {Qt.Key.Key_A: "left", Qt.Key.Key_B: "right", Qt.Key.Key_T: "tie"}
RELATED_MARK = "≈ "  # before a point shown beside a related one of the other answer
ONLY_COLOUR = "#fff4d6"  # a point the other answer does not make
ABSENT_COLOUR = "#f3f3f3"
NOTE_COLOUR = "#666"
LEFT, RIGHT = 0, 2  # the columns of each side's point; its tags are in the column after it


class AlignedTable(QTableWidget):
    """The aligned points; it turns the review keys into past-tense signals."""

    tagPressed = Signal(object)  # noqa: N815 - Qt signal names
    acceptPressed = Signal()  # noqa: N815
    preferencePressed = Signal(str)  # noqa: N815 - left, right or tie

    def keyPressEvent(self, event) -> None:  # noqa: N802 - Qt's name
        key = event.key()
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            super().keyPressEvent(event)
        elif key in TAG_KEYS:
            self.tagPressed.emit(TAG_KEYS[key])
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.acceptPressed.emit()
        elif key in PREFERENCE_KEYS:
            self.preferencePressed.emit(PREFERENCE_KEYS[key])
        elif key in (Qt.Key.Key_J, Qt.Key.Key_K):
            row = self.currentRow() + (1 if key == Qt.Key.Key_J else -1)
            self.setCurrentCell(min(max(row, 0), self.rowCount() - 1), max(self.currentColumn(), 0))
        else:
            super().keyPressEvent(event)

    def __init__(self, rows: int, columns: int) -> None:
        super().__init__(rows, columns)
        # Wrapped points take the height their column's width needs, once the columns have settled.
        self._fit = QTimer(self, singleShot=True, interval=0)
        self._fit.timeout.connect(self.resizeRowsToContents)
        self.horizontalHeader().sectionResized.connect(lambda *_: self._fit.start())
        self.setStyleSheet("QTableWidget::item { padding: 4px; }")  # rows of wrapped text need air


class SideBySideWindow(QMainWindow):
    """One reviewer comparing the answers of two generators, question by question."""

    answerChanged = Signal(str)  # noqa: N815 - a point of this answer was tagged here

    def __init__(self, service: ReviewService, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pairwise = PairwiseReview(service)
        self.view: SideBySide | None = None
        self.questions: list[SharedQuestion] = []
        self.setWindowTitle(f"Assay — side by side — {service.reviewer}")
        self.resize(1500, 900)
        self.message = QLabel()
        self.statusBar().addWidget(self.message, 1)

        self.position = QLabel()
        self.pair = QComboBox()
        self.pair.activated.connect(lambda _i: self._open_current(self.pair.currentData()))
        self.blind = QCheckBox("Blind (hide which model wrote each answer)")
        self.blind.setChecked(self.pairwise.blind)
        self.blind.toggled.connect(self._on_blind_toggled)
        self.question = QLabel(wordWrap=True)
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answers = [QTextBrowser(), QTextBrowser()]
        self.table = AlignedTable(0, 4)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(True)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        for column, mode in enumerate((QHeaderView.ResizeMode.Stretch, QHeaderView.ResizeMode.ResizeToContents) * 2):
            header.setSectionResizeMode(column, mode)
        self.table.tagPressed.connect(self._on_tag_pressed)
        self.table.acceptPressed.connect(self._on_accept_pressed)
        self.table.preferencePressed.connect(self.prefer)
        self.reason = QLineEdit(placeholderText="why (optional); Enter, then A, B or T")
        self.reason.returnPressed.connect(self.table.setFocus)  # back to the keys
        self.buttons = {
            "left": QPushButton("A is better  (A)"),
            "tie": QPushButton("Tie  (T)"),
            "right": QPushButton("B is better  (B)"),
        }
        for choice, button in self.buttons.items():
            button.setCheckable(True)
            button.clicked.connect(lambda _c=False, choice=choice: self.prefer(choice))
        self.preference = QLabel()
        self.legend = QLabel(
            f"<span style='background:{ONLY_COLOUR}'>&nbsp;only this answer makes the point&nbsp;</span> · "
            f"{RELATED_MARK}beside a related point of the other answer, not the same one · "
            f"<span style='background:{ABSENT_COLOUR}; color:{NOTE_COLOUR}'>&nbsp;— not in this answer&nbsp;</span>"
            f"<span style='color:{NOTE_COLOUR}'> · keys on a point: 1 correct · 2 incorrect · 3 irrelevant · "
            "Enter the judge's tag · A, B, T the better answer</span>"
        )

        top = QHBoxLayout()
        top.addWidget(self.position)
        top.addWidget(QLabel("generators"))
        top.addWidget(self.pair)
        top.addStretch()
        top.addWidget(self.blind)
        answers = QSplitter()
        for browser in self.answers:
            answers.addWidget(browser)
        choice = QHBoxLayout()
        choice.addWidget(QLabel("<b>Which answer is better?</b>"))
        for button in self.buttons.values():
            choice.addWidget(button)
        choice.addWidget(self.reason, 1)
        choice.addWidget(self.preference)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(answers)
        body.addWidget(self.table)
        body.setSizes([300, 500])
        layout = QVBoxLayout()
        layout.addLayout(top)
        layout.addWidget(self.question)
        layout.addWidget(body, 1)
        layout.addWidget(self.legend)
        layout.addLayout(choice)
        central = QWidget()
        central.setLayout(layout)
        self.setCentralWidget(central)
        self._add_keys()

    def _add_keys(self) -> None:
        def key(shortcut: str, slot: Callable[[], object]) -> None:
            act = QAction(self)
            act.setShortcut(QKeySequence(shortcut))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(slot)
            self.addAction(act)

        key("Ctrl+Down", lambda: self.move(1))
        key("Ctrl+Up", lambda: self.move(-1))

    # ------------------------------------------------------------------ opening

    def open_question(self, answer_id: str | None = None, pair: tuple[str, str] | None = None) -> bool:
        """Show the question the answer answers (the first shared question when None); False and a
        sentence when it has no second generator's answer."""
        self.questions = self.pairwise.questions()
        if not self.questions:
            self.say("No question here was answered by two generators: import a second answer file.")
            return False
        found = self.questions[0] if answer_id is None else self.pairwise.question_of(answer_id)
        if found is None:
            self.say(f"Only one generator answered the question of {answer_id}.")
            return False
        self._show_question(found, pair)
        return True

    def move(self, step: int) -> None:
        if self.view is None:
            return
        ids = [q.question_id for q in self.questions]
        at = ids.index(self.view.question.question_id) + step
        if 0 <= at < len(ids):
            self._show_question(self.questions[at], None)

    def _show_question(self, question: SharedQuestion, pair: tuple[str, str] | None) -> None:
        try:
            self.view = self.pairwise.open(question, pair)
        except AssayError as exc:
            self.say(str(exc))
            return
        self.reason.setText(self.view.preference.reason or "" if self.view.preference else "")
        self.show_view(self.view, keep_cell=False)

    def _open_current(self, pair: tuple[str, str] | None) -> None:
        if self.view is not None:
            self._show_question(self.view.question, pair)

    def _on_blind_toggled(self, blind: bool) -> None:
        self.pairwise.set_blind(blind)
        self._open_current(None)

    # ------------------------------------------------------------------ showing

    def show_view(self, view: SideBySide, keep_cell: bool = True) -> None:
        self.view = view
        row, column = (self.table.currentRow(), self.table.currentColumn()) if keep_cell else (0, LEFT)
        where = [q.question_id for q in self.questions].index(view.question.question_id) + 1
        self.position.setText(f"Question {where} of {len(self.questions)}")
        self.pair.blockSignals(True)
        self.pair.clear()
        for a, b in view.pairs:
            self.pair.addItem("two answers, names hidden" if view.blind else f"{a} · {b}", (a, b))
        chosen = tuple(sorted((view.left.generator, view.right.generator)))
        self.pair.setCurrentIndex(max(self.pair.findData(chosen), 0))
        self.pair.setEnabled(len(view.pairs) > 1)
        self.pair.blockSignals(False)
        self.question.setText(
            f"<b>{html.escape(view.question.question)}</b><br>"
            f"<span style='color:{NOTE_COLOUR}'>{html.escape(view.question.document)}</span>"
        )
        for browser, column_of in zip(self.answers, (view.left, view.right), strict=True):
            state = column_of.state
            browser.setHtml(
                f"<b>{html.escape(column_of.label)}</b> "
                f"<span style='color:{NOTE_COLOUR}'>{_scores(state)}</span><br>"
                + html.escape(state.answer.text).replace("\n", "<br>")
            )
        left, right = (
            (view.left.label, view.right.label) if view.blind else (f"A: {view.left.label}", f"B: {view.right.label}")
        )
        self.table.setHorizontalHeaderLabels([left, "tags", right, "tags"])
        self.table.setRowCount(len(view.rows))
        judge_visible = view.left.state.judge_visible
        for n, aligned in enumerate(view.rows):
            for side, index, column_of in ((LEFT, aligned.left, view.left), (RIGHT, aligned.right, view.right)):
                point = column_of.state.points[index] if index is not None else None
                self._fill(n, side, point, not aligned.aligned, judge_visible)
            if not aligned.same:  # laid out beside each other to read, not the same point
                related = self.table.item(n, RIGHT)
                related.setText(f"{RELATED_MARK}{related.text()}")
                related.setToolTip("Related wording, not the same point: each answer makes its own.")
        self.table.resizeRowsToContents()
        self._show_preference(view)
        if view.rows:
            self.table.setCurrentCell(min(max(row, 0), len(view.rows) - 1), column if column in (LEFT, RIGHT) else LEFT)
        self.table.setFocus()

    def _fill(self, row: int, side: int, point: ReviewPoint | None, alone: bool, judge_visible: bool) -> None:
        if point is None:
            text = QTableWidgetItem("— not in this answer")
            text.setForeground(QColor(NOTE_COLOUR))
            text.setBackground(QColor(ABSENT_COLOUR))
            tags = QTableWidgetItem("")
            tags.setBackground(QColor(ABSENT_COLOUR))
        else:
            text = QTableWidgetItem(point.point.text)
            if alone:
                text.setBackground(QColor(ONLY_COLOUR))
                text.setToolTip("Only this answer makes this point.")  # a related one may stand beside it
            tag = point.point.tag
            shown = [f"you: {TAG_STYLE[tag][0]}" if tag else "you: —"]
            if judge_visible and point.judge_tag is not None:
                shown.append(f"judge: {TAG_STYLE[point.judge_tag][0]}")
            tags = QTableWidgetItem("\n".join(shown))
            tags.setBackground(QColor(TAG_STYLE[tag][1]))
            others = [f"{t.rater}: {t.tag.value}" for t in point.others]
            if others:
                tags.setToolTip("\n".join(others))
        self.table.setItem(row, side, text)
        self.table.setItem(row, side + 1, tags)

    def _show_preference(self, view: SideBySide) -> None:
        chosen = None
        if view.preference is not None:
            left = view.answer_ids[0]
            chosen = (
                "tie" if view.preference.preferred is None else "left" if view.preference.preferred == left else "right"
            )
        for choice, button in self.buttons.items():
            button.setChecked(choice == chosen)
        names = {"left": "A is better", "right": "B is better", "tie": "a tie"}
        self.preference.setText(f"recorded: {names[chosen]}" if chosen else "no preference yet")

    def say(self, sentence: str) -> None:
        self.message.setText(sentence)

    # ------------------------------------------------------------------ acting

    def _selected(self) -> tuple[str, ReviewPoint] | None:
        """The answer and point of the selected cell, if it holds one."""
        if self.view is None or self.table.currentRow() < 0:
            return None
        aligned = self.view.rows[self.table.currentRow()]
        left = self.table.currentColumn() < RIGHT
        column, index = (self.view.left, aligned.left) if left else (self.view.right, aligned.right)
        if index is None:
            return None
        return column.state.answer.id, column.state.points[index]

    def _on_tag_pressed(self, tag: Tag) -> None:
        self._change(lambda answer, point: self.pairwise.service.set_tag(answer, point, tag))

    def _on_accept_pressed(self) -> None:
        self._change(self.pairwise.service.accept_judge)

    def _change(self, change: Callable[[str, int], object]) -> None:
        selected = self._selected()
        if self.view is None or selected is None:
            self.say("Select a data point of either answer first.")
            return
        answer_id, point = selected
        try:
            change(answer_id, point.point.id)
        except AssayError as exc:
            self.say(str(exc))
            return
        self.say("")
        self.answerChanged.emit(answer_id)
        row, column = self.table.currentRow(), self.table.currentColumn()
        self.show_view(self.pairwise.refresh(self.view))
        self.table.setCurrentCell(min(row + 1, self.table.rowCount() - 1), column)

    def prefer(self, choice: str) -> None:
        """Record the preference (A left better, B right better, or a tie) with the reason typed."""
        if self.view is None:
            return
        try:
            view = self.pairwise.prefer(self.view, choice, self.reason.text())
        except AssayError as exc:
            self.say(str(exc))
            return
        self.say("Preference saved.")
        self.show_view(view)


def open_side_by_side(
    window: ReviewWindow, answer_id: str | None = None, a: str | None = None, b: str | None = None
) -> SideBySideWindow:
    """From the review window: the open answer's question side by side (or `answer_id`'s, with the
    generators `a` on the left and `b` on the right unless blind), in one window kept for the session."""
    side = getattr(window, "side_by_side", None)
    if side is None:
        side = SideBySideWindow(window.service, window)
        side.answerChanged.connect(lambda answer_id: _show_if_open(window, answer_id))
        window.side_by_side = side
    target = answer_id or (window.state.answer.id if window.state is not None else None)
    if side.open_question(target, (a, b) if a and b else None):
        side.show()
        side.raise_()
        side.activateWindow()
    else:
        window.say(side.message.text())
    return side


def _show_if_open(window: ReviewWindow, answer_id: str) -> None:
    """The review window shows the answer just tagged side by side as it now is."""
    if window.state is not None and window.state.answer.id == answer_id:
        window.show_state(window.service.state(answer_id))


def _scores(state: ReviewState) -> str:
    correctness = state.scores.correctness
    shown = "—" if correctness is None else f"{correctness:.0%}"
    count = len(state.points)
    return f"{count} point{'s' if count != 1 else ''} · your correctness {shown}"
