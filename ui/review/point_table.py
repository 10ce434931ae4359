"""One points table for every review view: the open answer's points (answer_pane), two answers'
points side by side (side_by_side) and a disputed answer's points (adjudication_view).

`PointTable` is the view: rows of wrapped text, one selected; a key of its view's keymap
(app/review/keymap.py) calls the function the key is bound to (keymap.Keys); rows take the height
their text needs once the columns have settled. `keep_readable` keeps the column a lawyer reads (the
point's text) at a readable width however many columns appear beside it: they wrap, then scroll.
`CellsModel` is the model the side-by-side and adjudication tables fill with `Cell`s (as Orange's
PyTableModel: one reusable table model); the review pane's DataPointTableModel (ui/point_model.py) is
its richer sibling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtGui import QColor, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QWidget

from app.review import keymap

Index = QModelIndex | QPersistentModelIndex
READABLE = 240  # px: the point's text never narrower, even at 1366 × 768 with every column shown
NARROWEST_WRAP = 72  # px: a wrapping column (citations, a rater's tags) narrows to this, then the table scrolls


@dataclass(frozen=True, kw_only=True)
class Cell:
    """A table cell as the reviewer sees it: its words, its colours, its tooltip."""

    text: str = ""
    background: str | None = None
    foreground: str | None = None
    tooltip: str | None = None


class CellsModel(QAbstractTableModel):
    """Rows of Cells under a row of headers."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headers: list[str] = []
        self.rows: list[list[Cell]] = []

    def set_rows(self, headers: Sequence[str], rows: Sequence[Sequence[Cell]]) -> None:
        self.beginResetModel()
        self.headers = list(headers)
        self.rows = [list(row) for row in rows]
        self.endResetModel()

    def cell(self, row: int, column: int) -> Cell:
        return self.rows[row][column]

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's names
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.headers)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.headers[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        cell = self.rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return cell.text
        if role == Qt.ItemDataRole.BackgroundRole and cell.background:
            return QColor(cell.background)
        if role == Qt.ItemDataRole.ForegroundRole and cell.foreground:
            return QColor(cell.foreground)
        if role == Qt.ItemDataRole.ToolTipRole:
            return cell.tooltip
        return None


def key_name(event: QKeyEvent) -> str | None:
    """The key as the keymap writes it ("1", "Return", "Del"), or None when a modifier is held (those
    are the window's shortcuts, or the table's own)."""
    if event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier:
        return None
    return QKeySequence(event.key()).toString()


class PointTable(QTableView):
    """A table of data points that reads the keys of its view (keymap.REVIEW, SIDE_BY_SIDE or
    ADJUDICATION), each calling what it is bound to (`keys`); other keys are the table's own."""

    _fitting = False  # the columns are being sized: their resizing is ours

    def __init__(self, keys: keymap.Keys, *, select_rows: bool = True, fit_rows: bool = False) -> None:
        super().__init__()
        self.keys = keys
        behaviour = QAbstractItemView.SelectionBehavior
        self.setSelectionBehavior(behaviour.SelectRows if select_rows else behaviour.SelectItems)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)  # a point's text wraps, never "…"
        self.verticalHeader().hide()
        if fit_rows:  # wrapped points take the height their column's width needs, once the columns settle
            self._fit = QTimer(self, singleShot=True, interval=0)
            self._fit.timeout.connect(self.resizeRowsToContents)
            self.horizontalHeader().sectionResized.connect(lambda *_: self._fit.start())

    def keep_readable(
        self, column: int, wraps: Callable[[int], bool], gives_way: Callable[[int], bool] = lambda _c: False
    ) -> None:
        """Give `column` the room the others leave, never less than READABLE px: every other column is
        as wide as its contents; when that leaves the text less than half the table, the columns that
        `wraps` (the citations, a rater's tags) give way, to NARROWEST_WRAP px or their header's width;
        when the text would still be narrower than READABLE, the columns that `gives_way` (a juror's)
        are hidden, widest first, and shown again once there is room; past that the table scrolls sideways."""
        self._readable, self._wraps, self._gives_way = column, wraps, gives_way
        self.hidden_for_width: set[int] = set()  # hidden here for want of room, not by the reviewer
        self._header_widths: dict[str, int] = {}  # by header: a hidden one has no size hint, yet asks its room back
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # measured here, not by Qt
        header.setStretchLastSection(False)
        self._fit_columns = QTimer(self, singleShot=True, interval=0)
        self._fit_columns.timeout.connect(self.fit_columns)
        header.sectionResized.connect(self._on_section_resized)
        header.sectionCountChanged.connect(lambda *_: self._fit_columns.start())
        header.geometriesChanged.connect(self._fit_columns.start)  # a header's lines changed

    def setModel(self, model: Any) -> None:  # noqa: N802 - Qt's name
        super().setModel(model)
        for signal in ("modelReset", "layoutChanged", "dataChanged", "headerDataChanged"):
            getattr(model, signal).connect(lambda *_: self._refit())

    def _refit(self) -> None:
        if hasattr(self, "_fit_columns"):
            self._fit_columns.start()

    def _on_section_resized(self, _column: int, old: int, new: int) -> None:
        if not self._fitting and (old == 0 or new == 0):  # a column shown or hidden
            self._fit_columns.start()

    def fit_columns(self) -> None:
        """Size the columns now (see keep_readable)."""
        model, header = self.model(), self.horizontalHeader()
        if model is None or not hasattr(self, "_readable"):
            return
        self.hidden_for_width &= set(range(model.columnCount()))
        shown = [
            c
            for c in range(model.columnCount())
            if c != self._readable and (not header.isSectionHidden(c) or c in self.hidden_for_width)
        ]
        wanted = {c: max(self.sizeHintForColumn(c), self._header_width(c)) for c in shown}
        viewport = self.viewport().width()
        widths = self._narrowed(wanted, viewport)
        hidden: set[int] = set()
        giving_way = sorted((c for c in shown if self._gives_way(c)), key=lambda c: wanted[c])
        while giving_way and sum(widths.values()) > viewport - READABLE:  # the text would scroll: the widest goes
            hidden.add(giving_way.pop())
            widths = self._narrowed({c: w for c, w in wanted.items() if c not in hidden}, viewport)
        self._fitting = True
        try:
            for c in shown:
                if (c in hidden) != header.isSectionHidden(c):  # each change lays out every row again
                    header.setSectionHidden(c, c in hidden)
            self.hidden_for_width = hidden
            self._say_hidden(len(hidden))
            for c in widths:
                if header.sectionSize(c) != widths[c]:
                    header.resizeSection(c, widths[c])
            text = max(READABLE, viewport - sum(widths.values()))
            if header.sectionSize(self._readable) != text:
                header.resizeSection(self._readable, text)
        finally:
            self._fitting = False

    def _header_width(self, column: int) -> int:
        header = self.horizontalHeader()
        said = str(self.model().headerData(column, Qt.Orientation.Horizontal))
        if not header.isSectionHidden(column):
            self._header_widths[said] = header.sectionSizeHint(column)
        return self._header_widths.get(said, 0)

    def _narrowed(self, wanted: dict[int, int], viewport: int) -> dict[int, int]:
        """The columns' widths: a wrapping column narrows to its header's widest line (a header never wraps
        further), at least NARROWEST_WRAP; the text is given half the table, or READABLE px, before any
        column narrows."""
        header = self.horizontalHeader()
        floor = {c: min(wanted[c], max(NARROWEST_WRAP, header.sectionSizeHint(c))) for c in wanted if self._wraps(c)}
        room = viewport - max(READABLE, viewport // 2)
        widths = dict(wanted)
        cap = max(wanted.values(), default=0)
        while sum(widths.values()) > room and any(widths[c] > floor[c] for c in floor):
            cap -= 4  # the widest wrapping columns narrow together
            widths.update({c: max(floor[c], min(wanted[c], cap)) for c in floor})
        return widths

    def _say_hidden(self, count: int) -> None:
        """The header's tooltip says how many columns gave way, and how to bring one back."""
        said = (
            f"{count} juror column{'s' * (count != 1)} hidden for width; right-click the header to show"
            if count
            else ""
        )
        if self.horizontalHeader().toolTip() != said:
            self.horizontalHeader().setToolTip(said)

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Resize:  # the window, a pane or a scroll bar that came or went
            self._refit()
        return super().viewportEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        name = key_name(event)
        found = self.keys.binding(name) if name else None
        if found is None:
            super().keyPressEvent(event)
        else:
            self.keys.press(found)

    def current_row(self) -> int:
        return self.currentIndex().row()

    def current_column(self) -> int:
        return self.currentIndex().column()

    def select_cell(self, row: int, column: int) -> None:
        model = self.model()
        if model is not None and model.rowCount():
            row = min(max(row, 0), model.rowCount() - 1)
            self.setCurrentIndex(model.index(row, max(column, 0)))
