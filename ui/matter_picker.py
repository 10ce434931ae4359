"""The matter picker above the review queue: every matter, or one, whose answers alone the queue and
its document chooser then show. Hidden when the project has no matters."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from app.review.session import Changes
from ui.review.queue_pane import QueuePane, document_chooser


class MatterPicker(QComboBox):
    """All matters, or one: the queue shows that matter's answers (the database shows a login only
    the matters it is on; this narrows further, it walls nothing)."""

    def __init__(self, pane: QueuePane) -> None:
        super().__init__()
        self.pane = pane
        found = pane.session.documents_by_matter()
        self.addItem(f"All matters ({sum(m is not None for m, _ in found)})", None)
        for matter, documents in found:
            label = "Unassigned documents" if matter is None else matter.label
            archived = " · archived" if matter is not None and matter.archived_at else ""
            self.addItem(f"{label} · {len(documents)} documents{archived}", frozenset(documents))
            self.setItemData(self.count() - 1, label, Qt.ItemDataRole.ToolTipRole)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(20)
        self.currentIndexChanged.connect(self._show)
        pane.session.subscribe(self._on_changes)  # after the pane's own: the queue read anew, then narrowed
        self.setVisible(any(matter is not None for matter, _ in found))

    def _on_changes(self, changes: Changes) -> None:
        if (changes.queue or changes.project) and self.currentData() is not None:
            self._show()

    def _show(self) -> None:
        documents = self.currentData()
        rows = self.pane.session.queue()
        if documents is not None:
            rows = [row for row in rows if row.document in documents]
        self.pane.model.set_document(None)
        self.pane.model.reset(rows)
        chooser, fresh = self.pane.documents, document_chooser(rows)
        chooser.blockSignals(True)  # the model's document filter was cleared just above
        chooser.clear()
        for i in range(fresh.count()):
            chooser.addItem(fresh.itemText(i), fresh.itemData(i))
            chooser.setItemData(i, fresh.itemData(i, Qt.ItemDataRole.ToolTipRole), Qt.ItemDataRole.ToolTipRole)
        chooser.blockSignals(False)
        if not self.pane.table.currentIndex().isValid() and self.pane.model.rowCount():
            self.pane.table.selectRow(0)


def add_matter_picker(pane: QueuePane) -> MatterPicker:
    """Put the matter picker at the top of the queue pane, above its document chooser."""
    picker = MatterPicker(pane)
    layout = pane.layout()
    layout.insertWidget(layout.indexOf(pane.documents), picker)
    return picker
