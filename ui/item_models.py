"""Qt item models over app results: the answer queue and the data points of one answer."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor

from app.review import QueueRow, ReviewPoint
from app.scores import Scores, shown, triage_bucket
from models.vocabulary import ReviewStatus, Tag

Index = QModelIndex | QPersistentModelIndex

# Colour plus a symbol and a word: a tag is never told by colour alone.
TAG_STYLE: dict[Tag | None, tuple[str, str]] = {
    Tag.CORRECT: ("✓ correct", "#c9efd2"),
    Tag.INCORRECT: ("✗ incorrect", "#f6c6c6"),
    Tag.IRRELEVANT: ("∅ irrelevant", "#fbe3a6"),
    Tag.MISSING: ("+ missing", "#cadcfa"),
    None: ("? untagged", "#e4e4e4"),
}


def tag_text(tag: Tag | None) -> str:
    return TAG_STYLE[tag][0]


class _TableModel(QAbstractTableModel):
    """Rows of a list, columns named by HEADERS."""

    HEADERS: tuple[str, ...] = ()

    def _rows(self) -> list[Any]:
        raise NotImplementedError

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's names
        return 0 if parent.isValid() else len(self._rows())

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None


class AnswerQueueModel(_TableModel):
    """Every answer of the project: the judge's verdict and scores, and this reviewer's status.

    Every column fits the queue pane: the document is chosen above the table; the question is in
    each row's tooltip, in the review pane, and found by the filter box. Cells are computed once
    per row, and sorting happens here in Python (QueueFilterModel passes it on): a queue of 10,000
    answers sorts in milliseconds instead of a Qt sort calling data() for every comparison."""

    HEADERS = ("Answer", "Judge", "Corr.", "F1", "Review", "Cert.", "Sample")
    HEADER_TIPS = (
        "The answer's id",
        "The latest judge run: ✓ cleared or ⚑ flagged by the triage thresholds (Project menu); — not judged",
        "The judge's correctness: the share of the answer's points it tagged correct",
        "The judge's relevance (F1 of precision and recall)",
        "Your review: ✎ started, ✔ reviewed (submitted)",
        "The judges' calibrated certainty",
        "The random draw the answer belongs to (Project ▸ Review a random sample)",
    )
    SCORES = (2, 3, 5)
    CERTAINTY = 5  # the column "least certain first" sorts by

    def __init__(self, rows: list[QueueRow], triage_rule: tuple[float, float] = (1.0, 0.8)) -> None:
        super().__init__()
        self.triage_rule = triage_rule  # (min correctness, min relevance): the user's thresholds
        # Per answer: the judge's calibrated certainty, and the random draw it belongs to (app results).
        self.certainty: dict[str, float | None] = {}
        self.sampled: dict[str, int] = {}
        self.rows: list[QueueRow] = []
        self._cells: list[tuple[Any, ...]] = []
        self.reset(rows)

    def reset(self, rows: list[QueueRow]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self._cells = [self._row_cells(row) for row in self.rows]
        self.endResetModel()

    def update_row(self, row: QueueRow) -> None:
        index = next((i for i, r in enumerate(self.rows) if r.id == row.id), None)
        if index is None:
            return
        self.rows[index] = row
        self._cells[index] = self._row_cells(row)
        self.dataChanged.emit(self.index(index, 0), self.index(index, len(self.HEADERS) - 1))

    def _rows(self) -> list[Any]:
        return self.rows

    def _row_cells(self, row: QueueRow) -> tuple[Any, ...]:
        draw = self.sampled.get(row.id)
        sample = f"random #{draw}" if draw is not None else ""
        return (*_cells(row, self.triage_rule), self.certainty.get(row.id), sample)

    def haystack(self, row: int) -> str:
        """What the filter box searches: every cell, the document and the whole question, lower-cased."""
        answer = self.rows[row]
        return " ".join([*(str(c) for c in self._cells[row]), answer.document, answer.question]).lower()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.layoutAboutToBeChanged.emit()
        paired = sorted(
            zip(self.rows, self._cells, strict=True),
            key=lambda pair: _sort_key(pair[1][column]),
            reverse=order == Qt.SortOrder.DescendingOrder,
        )
        self.rows = [row for row, _ in paired]
        self._cells = [cells for _, cells in paired]
        self.layoutChanged.emit()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            return self.HEADER_TIPS[section]
        return super().headerData(section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        value = self._cells[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return shown(value) if index.column() in self.SCORES else str(value)
        if role == Qt.ItemDataRole.ToolTipRole:
            row = self.rows[index.row()]
            done = f"{row.reviewers_done} review{'s' * (row.reviewers_done != 1)} submitted"
            return f"{row.id} · {row.document}\n{short_question(row.question)}\n{done}"
        if role == Qt.ItemDataRole.BackgroundRole and index.column() == 1 and value in JUDGE_COLOURS:
            return QColor(JUDGE_COLOURS[value])
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in self.SCORES:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


FLAGGED, CLEARED = "⚑ flagged", "✓ cleared"
JUDGE_COLOURS = {FLAGGED: "#fde2c8", CLEARED: "#dcf2e0"}  # not the tag colours: a verdict on the answer
QUEUE_STATUS = {
    ReviewStatus.UNREVIEWED: "—",
    ReviewStatus.IN_REVIEW: "✎ started",
    ReviewStatus.SUBMITTED: "✔ reviewed",
}


def short_question(question: str) -> str:
    """The question without LegalBench's "Consider the <contract>; " lead: the contract is named elsewhere."""
    lead, sep, rest = question.partition("; ")
    return rest if sep and lead.startswith("Consider ") and len(lead) < 250 else question


def _cells(row: QueueRow, triage_rule: tuple[float, float]) -> tuple[Any, ...]:
    scores = Scores(*row.judge_counts) if row.judge_counts else None
    correctness = scores.correctness if scores else None
    f1 = scores.f1 if scores else None
    judge = "—" if scores is None else (CLEARED if triage_bucket(scores, *triage_rule) == "cleared" else FLAGGED)
    return (row.id, judge, correctness, f1, QUEUE_STATUS[row.status])


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers as numbers, undefined scores ("—") after every number, text as text."""
    if value is None:
        return (2, 0)
    return (0, value) if isinstance(value, int | float) else (1, str(value))


class QueueFilterModel(QSortFilterProxyModel):
    """Filters the queue by document and by what the reviewer types; sorting is the source model's own."""

    document: str | None = None  # None: every document

    def set_document(self, document: str | None) -> None:
        self.beginFilterChange()
        self.document = document
        self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:  # noqa: N802 - Qt's name
        source = self.sourceModel()
        if self.document is not None and source.rows[source_row].document != self.document:
            return False
        wanted = self.filterRegularExpression().pattern().lower()
        return not wanted or wanted in source.haystack(source_row)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sourceModel().sort(column, order)


class DataPointTableModel(_TableModel):
    """The data points of the answer under review: the judge's view beside the reviewer's."""

    HEADERS = ("#", "Data point", "Judge", "Conf.", "Yours", "Citations")

    def __init__(self) -> None:
        super().__init__()
        self.points: list[ReviewPoint] = []

    def _rows(self) -> list[Any]:
        return self.points

    def set_points(self, points: list[ReviewPoint]) -> None:
        self.beginResetModel()
        self.points = points
        self.endResetModel()

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        point = self.points[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return str(index.row() + 1)
            if column == 1:
                return point.point.text + (f"\n💬 {point.point.comment}" if point.point.comment else "")
            if column == 2:
                return tag_text(point.judge_tag) if point.judge_tag else "—"
            if column == 3:
                return f"{point.judge_confidence:.2f}" if point.judge_confidence is not None else "—"
            if column == 4:
                return tag_text(point.point.tag)
            return ", ".join(point.citations)
        if role == Qt.ItemDataRole.BackgroundRole and column in (2, 4):
            tag = point.judge_tag if column == 2 else point.point.tag
            if column == 2 and tag is None:
                return None
            return QColor(TAG_STYLE[tag][1])
        if role == Qt.ItemDataRole.ToolTipRole and column in (1, 2):
            return point.judge_rationale or point.point.text
        return None
