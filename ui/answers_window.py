"""The first window: the project's answers, and for the one selected its question, answer and document."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.project import AnswerSummary, Project

Index = QModelIndex | QPersistentModelIndex


class AnswerTableModel(QAbstractTableModel):
    """The answers of a project, one row each."""

    HEADERS = ("Answer", "Source", "Document", "Question")

    def __init__(self, answers: list[AnswerSummary]) -> None:
        super().__init__()
        self.answers = answers

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's names
        return 0 if parent.isValid() else len(self.answers)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        answer = self.answers[index.row()]
        return (answer.id, answer.source or "", answer.document, answer.question)[index.column()]

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None


class AnswersWindow(QMainWindow):
    """Lists the answers; selecting one shows its question, its text and its document's passages."""

    def __init__(self, project: Project) -> None:
        super().__init__()
        self.project = project
        self.setWindowTitle(f"Assay — {project.url.rsplit('/', 1)[-1]}")
        self.resize(1280, 800)

        self.model = AnswerTableModel(project.answers())
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setFilterKeyColumn(-1)

        self.filter = QLineEdit(placeholderText="Filter answers (id, document, question)…")
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.selectionModel().currentRowChanged.connect(self._on_answer_selected)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(self.filter)
        left_layout.addWidget(self.table)

        self.question = QLabel(wordWrap=True)
        self.question.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer = QPlainTextEdit(readOnly=True)
        self.passages = QListWidget()
        self.passages.setWordWrap(True)
        self.passages.setAlternatingRowColors(True)
        right = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.addWidget(QLabel("<b>Question</b>"))
        top_layout.addWidget(self.question)
        top_layout.addWidget(QLabel("<b>Answer</b>"))
        top_layout.addWidget(self.answer)
        right.addWidget(top)
        right.addWidget(self.passages)

        splitter = QSplitter()
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([560, 720])
        self.setCentralWidget(splitter)
        count = len(self.model.answers)
        self.statusBar().showMessage(f"{count} answers" if count else "No answers yet: run `assay import PATH`")
        if count:
            self.table.selectRow(0)

    def _on_answer_selected(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        summary = self.model.answers[self.proxy.mapToSource(current).row()]
        detail = self.project.answer(summary.id)
        if detail is None:
            return
        self.question.setText(detail.question)
        self.answer.setPlainText(detail.text)
        self.passages.clear()
        for passage in self.project.passages(detail.document_id):
            where = passage.section or passage.heading_path
            label = f"[{passage.citation_id}]{f'  {where}' if where else ''}\n{passage.text}"
            self.passages.addItem(QListWidgetItem(label))
