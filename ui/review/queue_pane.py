"""The answer queue's widgets: the document chooser above it, and columns that fit the pane."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QComboBox, QHeaderView, QTableView, QWidget

from app.review import QueueRow


def document_chooser(rows: list[QueueRow]) -> QComboBox:
    """All documents, or one: a contract's name is too long for a queue column."""
    box = QComboBox()
    counts = Counter(row.document for row in rows)
    box.addItem(f"All documents ({len(counts)}) · {len(rows)} answers", None)
    for document, count in sorted(counts.items(), key=lambda item: item[0].lower()):
        box.addItem(f"{document.rsplit('.', 1)[0]} · {count}", document)
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
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 8)  # one line a row
    table.setWordWrap(False)
    header = table.horizontalHeader()
    header.setMinimumSectionSize(36)
    header.setResizeContentsPrecision(100)  # a 10,000-answer queue: measure a screenful, not every row
    header.setStretchLastSection(False)
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)

    def fit_panel() -> None:  # again when a sample draw or a judge run widens a column
        columns = sum(max(table.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in range(header.count()))
        margins = panel.layout().contentsMargins() if panel.layout() else None
        side = (margins.left() + margins.right()) if margins else 0
        panel.setMinimumWidth(columns + table.verticalScrollBar().sizeHint().width() + 2 * table.frameWidth() + side)

    table.model().modelReset.connect(fit_panel)
    table.model().layoutChanged.connect(fit_panel)
    fit_panel()
