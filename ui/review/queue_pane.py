"""The left-hand pane: the answer queue, filtered by document and by words, triaged by the judge's
scores; choosing a row opens that answer. Its columns fit their contents and the pane fits them.
It follows the review session: rows change as their answers do, and the open answer's row is selected."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.review.service import QueueRow
from app.review.session import Changes, ReviewSession
from ui.item_models import AnswerQueueModel

T = TypeVar("T")
FILTER_AFTER_MS = 250  # the queue is filtered once the typing pauses this long


def document_chooser(rows: list[QueueRow], titles: dict[str, str] | None = None) -> QComboBox:
    """All documents, or one, by the name a reader knows (its title where its file name is an id)."""
    box = QComboBox()
    counts = Counter(row.document for row in rows)
    titles = titles or {}
    box.addItem(f"All documents ({len(counts)}) · {len(rows)} answers", None)
    named = {document: titles.get(document) or document.rsplit(".", 1)[0] for document in counts}
    for document, count in sorted(counts.items(), key=lambda item: named[item[0]].lower()):
        box.addItem(f"{named[document]} · {count}", document)
        box.setItemData(box.count() - 1, document, Qt.ItemDataRole.ToolTipRole)
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(20)  # the pane sets the width, not the longest contract name
    return box


def fit_queue_columns(table: QTableView, panel: QWidget) -> None:
    """Every column as wide as its contents, and the queue's pane wide enough for all of them."""
    table.horizontalHeader().setSortIndicator(0, Qt.SortOrder.AscendingOrder)
    table.setSortingEnabled(True)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().hide()
    # Three lines a row: the question's start over two, then the document. Fixed, so that 100,000 rows
    # cost nothing to lay out; what does not fit is elided, and whole in the row's tooltip.
    table.verticalHeader().setDefaultSectionSize(3 * table.fontMetrics().lineSpacing() + 8)
    table.setWordWrap(True)
    table.setTextElideMode(Qt.TextElideMode.ElideRight)
    answer_width = table.fontMetrics().horizontalAdvance("Does the agreement provide that") + 12
    header = table.horizontalHeader()
    header.setMinimumSectionSize(36)
    header.setResizeContentsPrecision(100)  # a 10,000-answer queue: measure a screenful, not every row
    header.setStretchLastSection(False)
    # Measured once per reset or sort, then widened only by the rows that change: a column in
    # ResizeToContents mode re-measures a hundred rows at every change, ~30 ms per reviewed answer.
    header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)

    def fit_panel() -> None:  # again when a sample draw or a judge run widens a column
        columns = sum(header.sectionSize(c) for c in range(header.count()))
        margins = panel.layout().contentsMargins() if panel.layout() else None
        side = (margins.left() + margins.right()) if margins else 0
        panel.setMinimumWidth(columns + table.verticalScrollBar().sizeHint().width() + 2 * table.frameWidth() + side)

    def fit_columns() -> None:
        for column in range(header.count()):
            header.resizeSection(column, max(table.sizeHintForColumn(column), header.sectionSizeHint(column)))
        header.resizeSection(0, min(header.sectionSize(0), answer_width))
        model = table.model()
        if isinstance(model, AnswerQueueModel):  # a column with nothing in it yet is no figure: hidden till it has
            header.setSectionHidden(model.CERTAINTY, all(c is None for c in model.certainty.values()))
            header.setSectionHidden(model.HEADERS.index("Sample"), not model.sampled)
        fit_panel()

    def widen(top_left: QModelIndex, bottom_right: QModelIndex) -> None:
        widened = False
        for column in range(top_left.column(), bottom_right.column() + 1):
            if column == 0:
                continue  # the answer's column keeps its width: its text is elided, whole in the tooltip
            for row in range(top_left.row(), bottom_right.row() + 1):
                wanted = table.sizeHintForIndex(table.model().index(row, column)).width() + 1  # + the grid line
                if wanted > header.sectionSize(column):
                    header.resizeSection(column, wanted)
                    widened = True
        if widened:
            fit_panel()

    table.model().modelReset.connect(fit_columns)
    table.model().layoutChanged.connect(fit_columns)
    table.model().dataChanged.connect(widen)
    fit_columns()


class QueuePane(QWidget):
    """The queue of answers; emits answerChosen(answer id) when the reviewer chooses another row."""

    answerChosen = Signal(str)  # noqa: N815 - Qt signal names

    def __init__(
        self, session: ReviewSession, triage_rule: tuple[float, float], sampled: dict[str, int] | None = None
    ) -> None:
        super().__init__()
        self.session = session
        self._following = False  # the row is being selected to follow the session, not chosen
        # The random draws are given with the rows: arranging 100,000 rows once, not twice, to open.
        self.model = AnswerQueueModel(
            session.queue(),
            session.judge_counts,
            triage_rule=triage_rule,
            sampled=sampled,
            judge_role=session.judge_role,
        )
        self.model.titles = session.document_titles()
        self.filter = QLineEdit(placeholderText="Filter: id, question, flagged, reviewed…")
        # Filtered once the typing pauses, and nothing opens until the reviewer picks a row (Enter or a
        # click): every key stays in the field, however fast it comes.
        self._typed = QTimer(self, singleShot=True, interval=FILTER_AFTER_MS)
        self._typed.timeout.connect(self._on_filter_typed)
        self.filter.textChanged.connect(self._typed.start)
        self.filter.returnPressed.connect(self._on_filter_entered)
        self.documents = document_chooser(self.model.rows, self.model.titles)
        self.documents.currentIndexChanged.connect(
            lambda: self._filter(self.model.set_document, self.documents.currentData())
        )
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row_changed)
        layout = QVBoxLayout(self)
        self.heading = QLabel()
        layout.addWidget(self.heading)
        layout.addWidget(self.documents)
        layout.addWidget(self.filter)
        layout.addWidget(self.table)
        fit_queue_columns(self.table, self)
        self.model.modelReset.connect(self._show_count)
        self.model.layoutChanged.connect(self._show_count)  # a filter or a sort
        self._show_count()
        session.subscribe(self._on_changes)

    def _show_count(self) -> None:
        """The answers shown, and of how many when a filter (a document, words) hides some."""
        shown, every = self.model.rowCount(), len(self.model.rows)
        counted = f"{every:,}" if shown == every else f"{shown:,} of {every:,} shown"
        self.heading.setText(f"<b>Answers</b> · {counted}")

    def _on_changes(self, changes: Changes) -> None:
        if changes.queue or changes.project:
            self.model.titles = self.session.document_titles()  # an import may have brought documents
        if changes.sampled:
            self.refresh_statistics()
        elif changes.queue or changes.project:
            self.model.reset(self.session.queue())  # a reset forgets the selected row: the open answer's again
        for answer_id in changes.rows:
            self.model.update_row(self.session.queue_row(answer_id), judged=changes.judged)
        if changes.opened or changes.queue or changes.sampled:
            self._follow()
        if changes.advance:
            self.move(changes.advance)

    def refresh_statistics(self) -> None:
        """Each answer's random draw and its calibrated certainty, read again (the certainty reads every
        label: when asked for, not at every opening of the window), with the rows."""
        self.model.certainty = self.session.review_certainty()
        self.model.sampled = self.session.sampled_answers()
        self.model.reset(self.session.queue())

    def _follow(self) -> None:
        """Select the open answer's row (undo may have opened another answer) without opening it again."""
        answer_id = self.session.answer_id
        current = self.table.currentIndex()
        if answer_id is None or (current.isValid() and self.model.answer_at(current.row()).id == answer_id):
            return
        row = self.model.row_of(answer_id)
        if row is not None:
            self._following = True
            try:
                self.table.selectRow(row)
            finally:
                self._following = False

    def answer_beside(self, step: int) -> str | None:
        """The answer `step` rows from the selected one, if the queue as shown has one there."""
        row = self.table.currentIndex().row() + step
        return self.model.answer_at(row).id if 0 <= row < self.model.rowCount() else None

    def _filter(self, set_filter: Callable[[T], None], value: T, open_first: bool = True) -> None:
        """Filter the queue; when the open answer's row is hidden, the first answer shown opens
        (`open_first`: a document chosen), or none until one is picked (words typed)."""
        set_filter(value)
        if open_first and not self.table.currentIndex().isValid() and self.model.rowCount():
            self.table.selectRow(0)

    def _on_filter_typed(self) -> None:
        self._filter(self.model.set_words, self.filter.text(), open_first=False)

    def _on_filter_entered(self) -> None:
        """Enter in the filter: the words filter now, and the first answer shown opens."""
        self._typed.stop()
        self._on_filter_typed()
        if self.model.rowCount():
            self.table.selectRow(0)
            self.table.setFocus()

    def _on_current_row_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if current.isValid() and not self._following:
            self.answerChosen.emit(self.model.answer_at(current.row()).id)

    def select_answer(self, answer_id: str) -> bool:
        """Select an answer's row (and so open it); False if the queue, as filtered, has no such answer."""
        row = self.model.row_of(answer_id)
        if row is not None:
            self.table.selectRow(row)
        return row is not None

    def move(self, step: int) -> None:
        """Select the answer `step` rows down (up if negative) from the open answer, if there is one."""
        current = self.table.currentIndex()
        opened = self.session.answer_id
        if not current.isValid() and opened is not None:  # no row selected (a judge run's end re-read the queue)
            found = self.model.row_of(opened)
            current = self.model.index(found, 0) if found is not None else current
        row = current.row() + step
        if 0 <= row < self.model.rowCount():
            self.table.selectRow(row)
