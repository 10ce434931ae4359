"""One points table for every review view: the open answer's points (answer_pane), two answers'
points side by side (side_by_side) and a disputed answer's points (adjudication_view).

`PointTable` is the view: rows of wrapped text, one selected, the review keys read from the keymap
(app/review/keymap.py) of its view and announced as `keyPressed(binding)`; rows take the height
their text needs once the columns have settled. `CellsModel` is the model the side-by-side and
adjudication tables fill with `Cell`s (as Orange's PyTableModel: one reusable table model); the
review pane's DataPointTableModel (ui/item_models.py) is its richer sibling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget

from app.review import keymap

Index = QModelIndex | QPersistentModelIndex


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

    def set_row(self, row: int, cells: Sequence[Cell]) -> None:
        self.rows[row] = list(cells)
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.headers) - 1))

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
    """A table of data points that reads the review keys of its view (keymap.REVIEW, SIDE_BY_SIDE or
    ADJUDICATION) and announces each as keyPressed(binding); other keys are the table's own."""

    keyPressed = Signal(object)  # noqa: N815 - a keymap.Binding

    def __init__(self, view: str, *, select_rows: bool = True, fit_rows: bool = False) -> None:
        super().__init__()
        self.view = view
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

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        name = key_name(event)
        found = keymap.binding(self.view, name) if name else None
        if found is None:
            super().keyPressEvent(event)
        else:
            self.keyPressed.emit(found)

    def current_row(self) -> int:
        return self.currentIndex().row()

    def current_column(self) -> int:
        return self.currentIndex().column()

    def select_cell(self, row: int, column: int) -> None:
        model = self.model()
        if model is not None and model.rowCount():
            row = min(max(row, 0), model.rowCount() - 1)
            self.setCurrentIndex(model.index(row, max(column, 0)))
