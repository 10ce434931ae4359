"""The adjudicator's window: the answers whose reviewers disagree, most disputed first, and for the
chosen one each data point with every reviewer's tag, comment and citations side by side (as
"Reviewer A", "Reviewer B" unless names are asked for).

Keyboard first, with the review's keys: 1 correct · 2 incorrect · 3 irrelevant · 4 missing decide the
selected disputed point and go to the next one; 0 or Delete leaves a point some reviewer does not
have out of the consensus; G, E, B set the reason recorded with the next decision (guideline
unclear, reviewer error, both defensible); J/K move. Each decision is one call to
app.review.adjudication (one short transaction, audited); the last one of an answer writes its
consensus and the next answer opens.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.project import Project
from app.review import adjudication
from app.review.adjudication import REASONS, Case, CasePoint
from models.vocabulary import Tag
from ui.item_models import TAG_STYLE

DECIDE_KEYS = {
    Qt.Key.Key_1: Tag.CORRECT,
    Qt.Key.Key_2: Tag.INCORRECT,
    Qt.Key.Key_3: Tag.IRRELEVANT,
    Qt.Key.Key_4: Tag.MISSING,
}
LEAVE_OUT_KEYS = (Qt.Key.Key_0, Qt.Key.Key_Delete, Qt.Key.Key_Backspace)
REASON_KEYS = {Qt.Key.Key_G: REASONS[0], Qt.Key.Key_E: REASONS[1], Qt.Key.Key_B: REASONS[2]}
NO_POINT = "— no such point"


def _queue_text(case: Case) -> str:
    """A queue row: the question's own words (after a "Consider the … Agreement;" preamble), then how
    disputed the answer is and what is left to decide."""
    question = case.question.split(";", 1)[-1].strip() or case.question
    return (
        f"{question}\ndisagreement {case.disagreement:.2f} · {len(case.undecided)} of {len(case.disputed)} "
        f"to decide · {case.answer_id}"
    )


class PointTable(QTableWidget):
    """The answer's data points, one row each; it turns the adjudication keys into signals."""

    decided = Signal(object)  # Tag, or None to leave the point out
    reasonPressed = Signal(str)  # noqa: N815 - Qt signal names
    movePressed = Signal(int)  # noqa: N815

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        key = event.key()
        if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
            super().keyPressEvent(event)
        elif key in DECIDE_KEYS:
            self.decided.emit(DECIDE_KEYS[Qt.Key(key)])
        elif key in LEAVE_OUT_KEYS:
            self.decided.emit(None)
        elif key in REASON_KEYS:
            self.reasonPressed.emit(REASON_KEYS[Qt.Key(key)])
        elif key == Qt.Key.Key_J:
            self.movePressed.emit(1)
        elif key == Qt.Key.Key_K:
            self.movePressed.emit(-1)
        else:
            super().keyPressEvent(event)


class AdjudicationView(QDialog):
    """Adjudicate the project's disagreements as `adjudicator` (refused, in one sentence, when the
    project names its adjudicators and this is not one of them)."""

    def __init__(self, project: Project, adjudicator: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.project = project
        self.adjudicator = adjudicator
        self.case: Case | None = None
        self.setWindowTitle(f"Adjudication — {adjudicator}")
        self.resize(1400, 760)

        self.queue = QListWidget()
        self.queue.setWordWrap(True)
        self.queue.setSpacing(2)
        self.queue.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.queue.currentRowChanged.connect(self._on_answer_chosen)
        self.heading = QLabel(wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.names = QCheckBox("Show the reviewers' names")
        self.names.toggled.connect(lambda _shown: self._show_case())
        self.reason = QComboBox()
        self.reason.addItem("no reason given", None)
        for reason in REASONS:
            self.reason.addItem(reason, reason)
        self.points = PointTable()
        self.points.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.points.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.points.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.points.setWordWrap(True)
        self.points.verticalHeader().hide()
        self.points.horizontalHeader().sectionResized.connect(lambda *_: self.points.resizeRowsToContents())
        palette = self.points.palette()  # a light selection: the dark text and the tag cues stay readable
        palette.setColor(QPalette.ColorRole.Highlight, QColor("#cfe3fb"))
        palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#000000"))
        self.points.setPalette(palette)
        self.points.decided.connect(self.decide)
        self.points.reasonPressed.connect(self._on_reason_pressed)
        self.points.movePressed.connect(self._move)
        self.keys = QLabel(
            "1 correct · 2 incorrect · 3 irrelevant · 4 missing · 0 leave out (a point not every reviewer has) · "
            "G guideline unclear · E reviewer error · B both defensible (reason for the next decision) · J/K move"
        )
        self.keys.setStyleSheet("color: #555")
        self.message = QLabel(wordWrap=True)

        options = QHBoxLayout()
        options.addWidget(QLabel("Reason:"))
        options.addWidget(self.reason)
        options.addStretch(1)
        options.addWidget(self.names)
        right = QWidget()
        column = QVBoxLayout(right)
        column.addWidget(self.heading)
        column.addLayout(options)
        column.addWidget(self.points, 1)
        column.addWidget(self.keys)
        column.addWidget(self.message)
        left = QWidget()
        queue_column = QVBoxLayout(left)
        self.queue_title = QLabel()
        queue_column.addWidget(self.queue_title)
        queue_column.addWidget(self.queue)
        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([360, 1040])
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        if not adjudication.may_adjudicate(project, adjudicator):
            allowed = ", ".join(adjudication.adjudicators(project))
            self.say(f"{adjudicator} is not an adjudicator of this project (the adjudicators are {allowed}).")
        self.refresh()

    # ------------------------------------------------------------------ the queue

    def refresh(self, keep: str | None = None) -> None:
        """Read the queue again; open `keep` if it still waits, else the most disputed answer."""
        self.cases = adjudication.waiting(self.project)
        self.queue.blockSignals(True)
        self.queue.clear()
        for case in self.cases:
            item = QListWidgetItem(_queue_text(case))
            item.setToolTip(f"{case.answer_id}: {case.question}\n{case.document}")
            self.queue.addItem(item)
        self.queue.blockSignals(False)
        self.queue_title.setText(
            f"<b>Waiting for adjudication</b> ({len(self.cases)}), most disputed first"
            if self.cases
            else "<b>Nothing waits for adjudication</b>"
        )
        ids = [c.answer_id for c in self.cases]
        if keep in ids:
            self.queue.setCurrentRow(ids.index(keep))
        elif self.cases:
            self.queue.setCurrentRow(0)
        else:
            self.case = None
            self._show_case()

    def _on_answer_chosen(self, row: int) -> None:
        if 0 <= row < len(self.cases):
            self.case = self.cases[row]
            self._show_case()
            self._select(next((p.number for p in self.case.undecided), 1))
            self.points.setFocus()

    # ------------------------------------------------------------------ the case

    def _show_case(self) -> None:
        """Show the case's points, the selected row kept."""
        case = self.case
        row = self.points.currentRow()
        self.points.clear()
        if case is None:
            self.heading.setText("")
            self.points.setRowCount(0)
            self.points.setColumnCount(0)
            return
        named = self.names.isChecked()
        reviewers = [o.reviewer if named else o.alias for o in case.points[0].opinions]
        self.heading.setText(
            f"<b>{escape(case.question)}</b><br><span style='color:#555'>{escape(case.document)} · answer "
            f"{escape(case.answer_id)} · {len(case.disputed)} disputed of {len(case.points)} data points</span>"
        )
        headers = ["#", "Data point", *reviewers, "Decision"]
        self.points.setColumnCount(len(headers))
        self.points.setHorizontalHeaderLabels(headers)
        self.points.setRowCount(len(case.points))
        for row, point in enumerate(case.points):
            self._show_point(row, point)
        header = self.points.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column in range(2, len(headers)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, 230)
        self.points.resizeRowsToContents()
        if 0 <= row < len(case.points):
            self.points.selectRow(row)

    def _show_point(self, row: int, point: CasePoint) -> None:
        grey = QColor("#8a8a8a")
        number = QTableWidgetItem(str(point.number))
        text = QTableWidgetItem(("(missing) " if point.missing else "") + point.text)
        text.setToolTip(point.text)
        cells = [number, text]
        for opinion in point.opinions:
            lines = [TAG_STYLE[opinion.tag][0] if opinion.tag else NO_POINT]
            if opinion.comment:
                lines.append(f"“{opinion.comment}”")
            if opinion.citations:
                lines.append("cites " + ", ".join(opinion.citations))
            cell = QTableWidgetItem("\n".join(lines))
            if point.disputed:
                cell.setBackground(QColor(TAG_STYLE[opinion.tag][1] if opinion.tag else "#ffffff"))
            cells.append(cell)
        cells.append(QTableWidgetItem(self._decision_text(point)))
        for column, cell in enumerate(cells):
            if not point.disputed:
                cell.setForeground(grey)
            self.points.setItem(row, column, cell)

    @staticmethod
    def _decision_text(point: CasePoint) -> str:
        if not point.disputed:
            return f"agreed: {point.agreed.value if point.agreed else '—'}"
        if point.decision is None:
            return "to decide"
        tag = point.decision.tag.value if point.decision.tag else "left out"
        return f"→ {tag}" + (f"\n{point.decision.reason}" if point.decision.reason else "")

    def current_point(self) -> CasePoint | None:
        row = self.points.currentRow()
        return self.case.points[row] if self.case is not None and 0 <= row < len(self.case.points) else None

    def _select(self, number: int) -> None:
        self.points.selectRow(number - 1)

    def _move(self, step: int) -> None:
        if self.case is not None:
            row = min(max(self.points.currentRow() + step, 0), len(self.case.points) - 1)
            self.points.selectRow(row)

    def _on_reason_pressed(self, reason: str) -> None:
        self.reason.setCurrentIndex(self.reason.findData(reason))

    # ------------------------------------------------------------------ deciding

    def decide(self, tag: Tag | None) -> bool:
        """Decide the selected point; then the next undecided one, or once the answer is settled the
        next answer waiting. An expected refusal is one sentence below the table."""
        point = self.current_point()
        if self.case is None or point is None:
            return False
        answer_id = self.case.answer_id
        try:
            case = adjudication.decide(
                self.project, answer_id, point.number, tag, self.reason.currentData(), self.adjudicator
            )
        except AssayError as exc:
            self.say(str(exc))
            return False
        self.reason.setCurrentIndex(0)  # a reason is given for one decision
        if case.settled:
            self.say(f"Consensus written for answer {answer_id}.")
            self.refresh()
            return True
        self.say("")
        self.case = case
        row = self.queue.currentRow()
        self.cases[row] = case
        self.queue.item(row).setText(_queue_text(case))
        self._show_case()
        later = [p.number for p in case.undecided if p.number > point.number] or [p.number for p in case.undecided]
        self._select(later[0] if later else point.number)
        return True

    def say(self, sentence: str) -> None:
        self.message.setText(sentence)


def open_adjudication(window: QWidget, project: Project, adjudicator: str) -> AdjudicationView:
    """The adjudication window beside the review window (not modal: the review stays usable)."""
    view = AdjudicationView(project, adjudicator, window)
    view.setWindowModality(Qt.WindowModality.NonModal)
    view.show()
    return view
