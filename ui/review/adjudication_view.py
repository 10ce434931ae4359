"""The adjudicator's window: the answers whose reviewers disagree, most disputed first, and for the
chosen one each data point with every reviewer's tag, comment and citations side by side (as
"Reviewer A", "Reviewer B" unless names are asked for).

Keyboard first, with the review's keys: 1 correct · 2 incorrect · 3 irrelevant · 4 missing decide the
selected disputed point and go to the next one; 0 or Delete leaves a point some reviewer does not
have out of the consensus; G, E, B set the reason recorded with the next decision (guideline
unclear, reviewer error, both defensible); J/K move. Each decision is one call to the review session
(app.review.adjudication: one short transaction, audited), which also reads the cases waiting; the
last one of an answer writes its consensus and the next answer opens.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.errors import AssayError
from app.review import keymap
from app.review.adjudication import REASONS, Case, CasePoint
from app.review.session import ReviewSession
from models.vocabulary import Tag
from ui.cell_words import TAG_STYLE
from ui.review.answer_html import keys_html
from ui.review.point_table import Cell, CellsModel, PointTable
from ui.screen_fit import fit_to_screen

NO_POINT = "— no such point"
GREY = "#8a8a8a"  # an agreed point: nothing to decide


def _queue_text(case: Case) -> str:
    """A queue row: the question's own words (after a "Consider the … Agreement;" preamble), then how
    disputed the answer is and what is left to decide."""
    question = case.question.split(";", 1)[-1].strip() or case.question
    return (
        f"{question}\ndisagreement {case.disagreement:.2f} · {len(case.undecided)} of {len(case.disputed)} "
        f"to decide · {case.answer_id}"
    )


class AdjudicationView(QDialog):
    """Adjudicate the project's disagreements as `adjudicator` (refused, in one sentence, when the
    project names its adjudicators and this is not one of them)."""

    def __init__(self, session: ReviewSession, adjudicator: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.adjudicator = adjudicator
        self.case: Case | None = None
        self.setWindowTitle(f"Adjudication — {adjudicator}")
        self.resize(1400, 760)
        fit_to_screen(self)  # never larger than a laptop's screen

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
        self.model = CellsModel(self)
        self.points = PointTable(keymap.bind(keymap.ADJUDICATION, session, self), fit_rows=True)
        self.points.setModel(self.model)
        palette = self.points.palette()  # a light selection: the dark text and the tag cues stay readable
        palette.setColor(QPalette.ColorRole.Highlight, QColor("#cfe3fb"))
        palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#000000"))
        self.points.setPalette(palette)
        self.keys = QLabel(keys_html(keymap.ADJUDICATION), wordWrap=True)  # keys, never read as counts
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
        if not session.may_adjudicate(adjudicator):
            allowed = ", ".join(session.adjudicators())
            self.say(f"{adjudicator} is not an adjudicator of this project (the adjudicators are {allowed}).")
        self.refresh()

    # ------------------------------------------------------------------ the queue

    def refresh(self, keep: str | None = None) -> None:
        """Read the queue again; open `keep` if it still waits, else the most disputed answer."""
        self.cases = self.session.adjudication_cases()
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
        row = self.points.current_row()
        if case is None:
            self.heading.setText("")
            self.model.set_rows([], [])
            return
        named = self.names.isChecked()
        reviewers = [o.reviewer if named else o.alias for o in case.points[0].opinions]
        self.heading.setText(
            f"<b>{escape(case.question)}</b><br><span style='color:#555'>{escape(case.document)} · answer "
            f"{escape(case.answer_id)} · {len(case.disputed)} disputed of {len(case.points)} data points</span>"
        )
        headers = ["#", "Data point", *reviewers, "Decision"]
        self.model.set_rows(headers, [self._cells(point) for point in case.points])
        header = self.points.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for column in range(2, len(headers)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, 230)
        self.points.resizeRowsToContents()
        if 0 <= row < len(case.points):
            self.points.selectRow(row)

    def _cells(self, point: CasePoint) -> list[Cell]:
        grey = None if point.disputed else GREY
        cells = [
            Cell(text=str(point.number), foreground=grey),
            Cell(text=("(missing) " if point.missing else "") + point.text, foreground=grey, tooltip=point.text),
        ]
        for opinion in point.opinions:
            lines = [TAG_STYLE[opinion.tag][0] if opinion.tag else NO_POINT]
            if opinion.comment:
                lines.append(f"“{opinion.comment}”")
            if opinion.citations:
                lines.append("cites " + ", ".join(opinion.citations))
            colour = (TAG_STYLE[opinion.tag][1] if opinion.tag else "#ffffff") if point.disputed else None
            cells.append(Cell(text="\n".join(lines), background=colour, foreground=grey))
        cells.append(Cell(text=self._decision_text(point), foreground=grey))
        return cells

    @staticmethod
    def _decision_text(point: CasePoint) -> str:
        if not point.disputed:
            return f"agreed: {point.agreed.value if point.agreed else '—'}"
        if point.decision is None:
            return "to decide"
        tag = point.decision.tag.value if point.decision.tag else "left out"
        return f"→ {tag}" + (f"\n{point.decision.reason}" if point.decision.reason else "")

    def current_point(self) -> CasePoint | None:
        row = self.points.current_row()
        return self.case.points[row] if self.case is not None and 0 <= row < len(self.case.points) else None

    def _select(self, number: int) -> None:
        self.points.selectRow(number - 1)

    # The keys of the table (app/review/keymap.py AdjudicationKeys), beside `decide`.

    def choose_reason(self, reason: str) -> None:
        self.reason.setCurrentIndex(self.reason.findData(reason))

    def move_point(self, step: int) -> None:
        if self.case is not None:
            self.points.selectRow(min(max(self.points.current_row() + step, 0), len(self.case.points) - 1))

    # ------------------------------------------------------------------ deciding

    def decide(self, tag: Tag | None) -> bool:
        """Decide the selected point; then the next undecided one, or once the answer is settled the
        next answer waiting. An expected refusal is one sentence below the table."""
        point = self.current_point()
        if self.case is None or point is None:
            return False
        answer_id = self.case.answer_id
        try:
            case = self.session.decide(answer_id, point.number, tag, self.reason.currentData(), self.adjudicator)
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


def open_adjudication(window: QWidget, session: ReviewSession, adjudicator: str) -> AdjudicationView:
    """The adjudication window beside the review window (not modal: the review stays usable)."""
    view = AdjudicationView(session, adjudicator, window)
    view.setWindowModality(Qt.WindowModality.NonModal)
    view.show()
    return view
