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

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.figures.rater_names import role_name
from app.review import keymap
from app.review.pairwise import PairwiseReview, SharedQuestion, SideBySide
from app.review.service import ReviewPoint, ReviewState
from app.review.session import Changes, ReviewSession
from models.vocabulary import Tag
from ui.cell_words import TAG_STYLE
from ui.review.answer_html import keys_html
from ui.review.point_table import Cell, CellsModel, PointTable
from ui.screen_fit import fit_to_screen

RELATED_MARK = "≈ "  # before a point shown beside a related one of the other answer
ONLY_COLOUR = "#fff4d6"  # a point the other answer does not make
ABSENT_COLOUR = "#f3f3f3"
NOTE_COLOUR = "#666"
LEFT, RIGHT = 0, 2  # the columns of each side's point; its tags are in the column after it


class SideBySideWindow(QMainWindow):
    """One reviewer comparing the answers of two generators, question by question; a tag given here
    goes through the review session, so the review window shows it too (and a tag given there, here)."""

    def __init__(self, session: ReviewSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.pairwise = PairwiseReview(session.service)
        self.view: SideBySide | None = None
        self.questions: list[SharedQuestion] = []
        self.setWindowTitle(f"Assay — side by side — {session.reviewer}")
        self.resize(1500, 900)
        self._leave_room()
        fit_to_screen(self)  # never larger than a laptop's screen
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
        self.model = CellsModel(self)
        self.model.set_rows(["", "tags", "", "tags"], [])
        self.keys = keymap.bind(keymap.SIDE_BY_SIDE, session, self)
        self.table = PointTable(self.keys, select_rows=False, fit_rows=True)
        self.table.setModel(self.model)
        self.table.setStyleSheet("QTableView::item { padding: 4px; }")  # rows of wrapped text need air
        header = self.table.horizontalHeader()
        for column, mode in enumerate((QHeaderView.ResizeMode.Stretch, QHeaderView.ResizeMode.ResizeToContents) * 2):
            header.setSectionResizeMode(column, mode)
        self.reason = QLineEdit(placeholderText="why (optional); Enter, then A, B or T")
        self.reason.returnPressed.connect(self._on_reason_entered)  # back to the keys
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
            f"<br><span style='color:{NOTE_COLOUR}'>{keys_html(keymap.SIDE_BY_SIDE)}</span>",
            wordWrap=True,  # the window fits a laptop's screen
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
        session.subscribe(self._on_changes)

    def _leave_room(self) -> None:
        """A window over the review, not in place of it: at most nine tenths of the screen each way, so the
        review window shows around it (at 1366 × 768 it covered the whole screen)."""
        screen = self.screen()
        if screen is not None:
            room = screen.availableGeometry()
            self.resize(min(self.width(), room.width() * 9 // 10), min(self.height(), room.height() * 9 // 10))

    def place_over(self, window: QWidget) -> None:
        """Over the middle of `window` (the review), within the screen: the review shows around it."""
        frame = self.frameGeometry()
        frame.moveCenter(window.frameGeometry().center())
        screen = self.screen()
        if screen is not None:  # moved back inside where the review hangs off the screen
            room = screen.availableGeometry()
            frame.moveLeft(min(max(frame.left(), room.left()), room.right() - frame.width() + 1))
            frame.moveTop(min(max(frame.top(), room.top()), room.bottom() - frame.height() + 1))
        QMainWindow.move(self, frame.topLeft())  # QWidget's move: this window's own move() goes to a question

    def _on_changes(self, changes: Changes) -> None:
        """A tag given in the review window (or undone there) shows here when its answer is shown."""
        if changes.source is self:  # shown already; a refusal is said here
            if changes.message:
                self.say(changes.message)
            return
        if self.view is None or not self.isVisible():
            return
        if set(changes.rows) & set(self.view.answer_ids):
            self.show_view(self.pairwise.refresh(self.view))

    def _add_keys(self) -> None:
        def key(shortcut: str, slot: Callable[[], object]) -> None:
            act = QAction(self)
            act.setShortcut(QKeySequence(shortcut))
            act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            act.triggered.connect(slot)
            self.addAction(act)

        key(keymap.shortcut(keymap.WindowKeys.move_answer, 1), lambda: self.move(1))
        key(keymap.shortcut(keymap.WindowKeys.move_answer, -1), lambda: self.move(-1))
        # A, B, T, Esc and Ctrl+W anywhere in this window but a text field (one takes its letters as text):
        # after Enter in the reason field, wherever the focus went, the next key records the preference.
        for b in keymap.bindings(keymap.SIDE_BY_SIDE):
            for shortcut in b.keys if b.anywhere else ():
                key(shortcut, lambda _checked=False, b=b: self.keys.press(b))  # triggered passes `checked` first

    def _on_reason_entered(self) -> None:
        self.activateWindow()
        self.table.setFocus()
        if not self.table.currentIndex().isValid():
            self.table.select_cell(0, LEFT)

    # ------------------------------------------------------------------ opening

    def open_question(self, answer_id: str | None = None, pair: tuple[str, str] | None = None) -> bool:
        """Show the question the answer answers (the first shared question when None); False and a
        sentence when it has no second generator's answer."""
        self.say("")  # nothing said about another answer stays
        self.questions = self.pairwise.questions()
        if not self.questions:
            self.say("No question here was answered by two generators: import a second answer file.")
            return False
        found = self.questions[0] if answer_id is None else self.pairwise.question_of(answer_id)
        self._show_question(found or self.questions[0], pair)
        if found is None:  # the questions that have two are one key away: J / K go through them
            self.say(
                f"Only one generator answered the question of the answer open in the review, so here is the "
                f"first of the {len(self.questions)} questions two generators answered "
                f"({keymap.shortcut(keymap.WindowKeys.move_answer, 1)} / "
                f"{keymap.shortcut(keymap.WindowKeys.move_answer, -1)} for the others)."
            )
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
        row, column = (self.table.current_row(), self.table.current_column()) if keep_cell else (0, LEFT)
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
        rows = []
        judge_visible = view.left.state.judge_visible
        for aligned in view.rows:
            cells: list[Cell] = []
            for index, column_of in ((aligned.left, view.left), (aligned.right, view.right)):
                point = column_of.state.points[index] if index is not None else None
                cells += _cells(point, not aligned.aligned, judge_visible)
            if not aligned.same:  # laid out beside each other to read, not the same point
                cells[RIGHT] = Cell(
                    text=f"{RELATED_MARK}{cells[RIGHT].text}",
                    background=cells[RIGHT].background,
                    foreground=cells[RIGHT].foreground,
                    tooltip="Related wording, not the same point: each answer makes its own.",
                )
            rows.append(cells)
        self.model.set_rows([left, "tags", right, "tags"], rows)
        self.table.resizeRowsToContents()
        self._show_preference(view)
        if view.rows:
            self.table.select_cell(row, column if column in (LEFT, RIGHT) else LEFT)
        self.table.setFocus()

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
        row = self.table.current_row()
        if self.view is None or row < 0:
            return None
        aligned = self.view.rows[row]
        left = self.table.current_column() < RIGHT
        column, index = (self.view.left, aligned.left) if left else (self.view.right, aligned.right)
        if index is None:
            return None
        return column.state.answer.id, column.state.points[index]

    # The keys of the table (app/review/keymap.py SideBySideKeys: A, B and T are `prefer`, Esc `close`).

    def move_cell(self, step: int) -> None:
        self.table.select_cell(self.table.current_row() + step, self.table.current_column())

    def tag_selected(self, tag: Tag) -> None:
        self._change(lambda answer, point: self.session.tag(answer, point, tag, source=self))

    def accept_judge_selected(self) -> None:
        self._change(lambda answer, point: self.session.accept_judge_of(answer, point, source=self))

    def _change(self, change: Callable[[str, int], bool]) -> None:
        selected = self._selected()
        if self.view is None or selected is None:
            self.say("Select a data point of either answer first.")
            return
        answer_id, point = selected
        if not change(answer_id, point.point.id):
            return  # the session said why
        self.say("")
        row, column = self.table.current_row(), self.table.current_column()
        self.show_view(self.pairwise.refresh(self.view))
        self.table.select_cell(row + 1, column)

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


def _cells(point: ReviewPoint | None, alone: bool, judge_visible: bool) -> list[Cell]:
    """A side's two cells of a row: the point's text, and its tags (yours, the judge's)."""
    if point is None:
        return [
            Cell(text="— not in this answer", foreground=NOTE_COLOUR, background=ABSENT_COLOUR),
            Cell(background=ABSENT_COLOUR),
        ]
    tag = point.point.tag
    shown = [f"you: {TAG_STYLE[tag][0]}" if tag else "you: —"]
    if judge_visible and point.judge_tag is not None:
        shown.append(f"{role_name(point.judge).lower()}: {TAG_STYLE[point.judge_tag][0]}")  # "claim checker: …"
    others = [f"{t.rater}: {t.tag.value}" for t in point.others]
    return [
        Cell(
            text=point.point.text,
            background=ONLY_COLOUR if alone else None,
            tooltip="Only this answer makes this point." if alone else None,  # a related one may stand beside it
        ),
        Cell(text="\n".join(shown), background=TAG_STYLE[tag][1], tooltip="\n".join(others) or None),
    ]


def _scores(state: ReviewState) -> str:
    correctness = state.scores.correctness
    shown = "—" if correctness is None else f"{correctness:.0%}"
    count = len(state.points)
    return f"{count} point{'s' if count != 1 else ''} · your correctness {shown}"
