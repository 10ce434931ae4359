"""Qt item models over app results: the answer queue (here) and the data points of one answer
(ui/point_model.py, named here too for those who import it from here)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from app.figures.scores import Scores, answer_verdict, shown
from app.review.service import JudgeCounts, QueueRow
from models.vocabulary import ReviewStatus
from ui.cell_words import tag_text as tag_text
from ui.point_model import DataPointTableModel as DataPointTableModel

Index = QModelIndex | QPersistentModelIndex


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

    Every column fits the queue pane: an answer is named by its question's start and its document's
    name (its id, the whole question and the reviews in the row's tooltip; the filter box finds
    words of the question), the document is chosen above the table. The model sorts and filters
    itself over its list of rows, so that a queue of 100,000 answers opens with no Python call per
    row (a QSortFilterProxyModel asks filterAcceptsRow of each, at every reset and sort). A row's
    cells are computed when it is first shown, sorted or searched; the judge's tag counts they need
    are read a page of rows at a time, or all at once when a sort or a search needs every row."""

    HEADERS = ("Answer", "Judge", "Corr.", "F1", "Review", "Cert.", "Sample")
    HEADER_TIPS = (
        "The answer: its question's start and its document (its id in each row's tooltip; sorted by id)",
        "The judge that speaks for the project (Project ▸ Raters…): ✓ cleared by the triage thresholds, "
        "⚑ flagged, ○ to read (it confirmed only some points, or none); — not judged",
        "The judge's correctness: the share of the answer's points it tagged correct. Where it left points "
        "unchecked, how many it confirmed (“2 of 5”): no score until every point is checked",
        "The judge's relevance (F1 of precision and recall); — while points are left unchecked",
        "Your review: ✎ started, ✔ reviewed (submitted), ✔ signed off (locked until reopened)",
        "The judges' calibrated certainty",
        "The random draw the answer belongs to (Project ▸ Review a random sample)",
    )
    SCORES = (2, 3, 5)
    CERTAINTY = 5  # the column "least certain first" sorts by
    PAGE = 200  # rows whose judge counts are read together: a screenful and more

    def __init__(
        self,
        rows: list[QueueRow],
        count_judge_tags: Callable[[Sequence[str] | None], dict[str, JudgeCounts]],
        triage_rule: tuple[float, float] = (1.0, 0.8),
        sampled: dict[str, int] | None = None,
        judge_role: Callable[[], str] = lambda: "Judge",
    ) -> None:
        super().__init__()
        self.judge_role = judge_role  # the word for the rater that speaks: "Claim checker" is never "Judge"
        self.count_judge_tags = count_judge_tags  # of these answers, or of every answer if None
        self.triage_rule = triage_rule  # (min correctness, min relevance): the user's thresholds
        # Per answer: the judge's calibrated certainty, and the random draw it belongs to (app results).
        self.certainty: dict[str, float | None] = {}
        self.sampled: dict[str, int] = dict(sampled or {})
        self.rows: list[QueueRow] = []  # in the order sorted
        self.document: str | None = None  # the filter: None, every document
        self.words = ""  # the filter box's text, lower-cased
        self.titles: dict[str, str] = {}  # a document's name as a reader knows it (Project.document_titles)
        self._sorted_by = (0, Qt.SortOrder.AscendingOrder)
        self._shown: list[int] | None = None  # the rows the filter lets through; None: every row
        self._index: dict[str, int] | None = None  # each answer's place in self.rows, made when asked
        self._where: dict[int, int] | None = None  # and the row it is shown at, when filtered
        self.reset(rows)

    def reset(self, rows: list[QueueRow]) -> None:
        """New rows (and new judge counts), sorted and filtered as before."""
        self.beginResetModel()
        self.rows = list(rows)
        self._cells: list[tuple[Any, ...] | None] = [None] * len(self.rows)
        self._counts: dict[str, JudgeCounts] = {}
        self._counted: set[str] | None = set()  # answers whose counts were read; None: every answer's
        self._arrange()
        self.endResetModel()

    # ------------------------------------------------------------------ rows shown

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802 - Qt's names
        if parent.isValid():
            return 0
        return len(self.rows) if self._shown is None else len(self._shown)

    def answer_at(self, shown_row: int) -> QueueRow:
        return self.rows[self._source(shown_row)]

    def row_of(self, answer_id: str) -> int | None:
        """Where an answer is shown; None if the filter hides it."""
        row = self._row_index(answer_id)
        if row is None or self._shown is None:
            return row
        if self._where is None:
            self._where = {row: shown for shown, row in enumerate(self._shown)}
        return self._where.get(row)

    def _row_index(self, answer_id: str) -> int | None:
        """An answer's place in self.rows."""
        if self._index is None:
            self._index = {answer.id: row for row, answer in enumerate(self.rows)}
        return self._index.get(answer_id)

    def _source(self, shown_row: int) -> int:
        return shown_row if self._shown is None else self._shown[shown_row]

    # ------------------------------------------------------------------ sorting and filtering

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if (column, order) != self._sorted_by:  # QTableView.sortByColumn asks twice; a reset sorts anew
            self._rearrange(lambda: setattr(self, "_sorted_by", (column, order)))

    def set_document(self, document: str | None) -> None:
        self._rearrange(lambda: setattr(self, "document", document))

    def set_words(self, words: str) -> None:
        self._rearrange(lambda: setattr(self, "words", words.lower()))

    def _rearrange(self, change: Callable[[], object]) -> None:
        """Sort or filter anew; the selection stays on its answers (or goes, when they are hidden)."""
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        kept = [(self.answer_at(index.row()).id, index.column()) for index in before]
        change()
        self._arrange()
        after = [(self.row_of(answer_id), column) for answer_id, column in kept]
        self.changePersistentIndexList(
            before, [QModelIndex() if row is None else self.index(row, column) for row, column in after]
        )
        self.layoutChanged.emit()

    def _arrange(self) -> None:
        column, order = self._sorted_by
        if column == 0:
            key: Callable[[int], Any] = lambda row: self.rows[row].id  # noqa: E731 - no counts needed
        else:
            self._count_every_answer()
            key = lambda row: _sort_key(self.cells(row)[column])  # noqa: E731
        ordered = sorted(range(len(self.rows)), key=key, reverse=order == Qt.SortOrder.DescendingOrder)
        self.rows = [self.rows[row] for row in ordered]
        self._cells = [self._cells[row] for row in ordered]
        document, words = self.document, self.words
        if words:
            self._count_every_answer()
        self._shown = (
            None
            if document is None and not words
            else [
                row
                for row, answer in enumerate(self.rows)
                if (document is None or answer.document == document) and (not words or words in self.haystack(row))
            ]
        )
        self._where = self._index = None

    # ------------------------------------------------------------------ cells

    def _count_every_answer(self) -> None:
        if self._counted is not None:
            self._counts = self.count_judge_tags(None)
            self._counted = None

    def _count_page(self, shown_row: int) -> None:
        """Read the judge counts of this row and of the rows shown after it, if not read yet."""
        counted = self._counted
        if counted is None or self.answer_at(shown_row).id in counted:
            return
        end = min(shown_row + self.PAGE, self.rowCount())
        page = [answer.id for answer in map(self.answer_at, range(shown_row, end)) if answer.id not in counted]
        self._counts.update(self.count_judge_tags(page))
        counted.update(page)

    def cells(self, row: int) -> tuple[Any, ...]:
        """The cells of a row (of self.rows), its judge counts read."""
        found = self._cells[row]
        if found is None:
            found = self._cells[row] = self._row_cells(self.rows[row])
        return found

    def update_row(self, row: QueueRow, judged: bool = False) -> None:
        """An answer's row anew: its review changed, or (`judged`) a judge run tagged it."""
        index = self._row_index(row.id)
        if index is None:
            return
        if judged or (self._counted is not None and row.id not in self._counted):
            self._counts.pop(row.id, None)
            self._counts.update(self.count_judge_tags([row.id]))
            if self._counted is not None:
                self._counted.add(row.id)
        self.rows[index] = row
        self._cells[index] = self._row_cells(row)
        shown = self.row_of(row.id)
        if shown is not None:
            self.dataChanged.emit(self.index(shown, 0), self.index(shown, len(self.HEADERS) - 1))

    def _rows(self) -> list[Any]:
        return self.rows

    def _row_cells(self, row: QueueRow) -> tuple[Any, ...]:
        draw = self.sampled.get(row.id)
        sample = f"random #{draw}" if draw is not None else ""
        counts = self._counts.get(row.id)
        return (*_cells(row, counts, self.triage_rule), self.certainty.get(row.id), sample)

    def haystack(self, row: int) -> str:
        """What the filter box searches: every cell, the document and the whole question, lower-cased."""
        answer = self.rows[row]
        return " ".join([*(str(c) for c in self.cells(row)), answer.document, answer.question]).lower()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            role_word = self.judge_role()  # "The judge's correctness" → "The claim checker's correctness"
            return re.sub(r"\bThe judge(?=[ '])", f"The {role_word.lower()}", self.HEADER_TIPS[section])
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and section == 1:
            return self.judge_role().replace(" ", "\n")  # "Claim / checker": the column as narrow as its cells
        return super().headerData(section, orientation, role)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = self._source(index.row())
        if self._cells[row] is None:
            self._count_page(index.row())
        value = self.cells(row)[index.column()]
        if role == Qt.ItemDataRole.DisplayRole and index.column() == 0:  # as a person knows it, not by its id
            answer = self.rows[row]
            document = self.titles.get(answer.document) or document_name(answer.document)
            return f"{question_start(answer.question)}\n{document}"
        if role == Qt.ItemDataRole.DisplayRole:
            return shown(value) if index.column() in self.SCORES and not isinstance(value, str) else str(value)
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 2 and isinstance(value, str):
            return f"{value} points confirmed; the rest were not checked, so the answer has no score yet"
        if role == Qt.ItemDataRole.ToolTipRole:
            answer = self.rows[row]
            done = f"{answer.reviewers_done} review{'s' * (answer.reviewers_done != 1)} submitted"
            return f"{answer.id} · {answer.document}\n{short_question(answer.question)}\n{done}"
        if role == Qt.ItemDataRole.BackgroundRole and index.column() == 1 and value in JUDGE_COLOURS:
            return QColor(JUDGE_COLOURS[value])
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in self.SCORES:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


FLAGGED, CLEARED, UNCONFIRMED = "⚑ flagged", "✓ cleared", "○ to read"
VERDICTS = {"flagged": FLAGGED, "cleared": CLEARED, "unconfirmed": UNCONFIRMED}
JUDGE_COLOURS = {FLAGGED: "#fde2c8", CLEARED: "#dcf2e0"}  # not the tag colours: a verdict on the answer
QUEUE_STATUS = {
    ReviewStatus.UNREVIEWED: "—",
    ReviewStatus.IN_REVIEW: "✎ started",
    ReviewStatus.SUBMITTED: "✔ reviewed",
}
SIGNED = "✔ signed off"  # submitted and signed: locked until reopened


def short_question(question: str) -> str:
    """The question without LegalBench's "Consider the <contract>; " lead: the contract is named elsewhere."""
    lead, sep, rest = question.partition("; ")
    return rest if sep and lead.startswith("Consider ") and len(lead) < 250 else question


def question_start(question: str, limit: int = 60) -> str:
    """The question's first words, cut at a word within `limit` characters, with "…" if cut."""
    text = " ".join(short_question(question).split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[: limit + 1] else text[:limit]
    return cut.rstrip(" ,;:.") + "…"


def document_name(document: str) -> str:
    """A document's short name: its file name without the extension."""
    name = document.rsplit("/", 1)[-1]
    stem, dot, extension = name.rpartition(".")
    return stem if dot and stem and len(extension) <= 4 else name


def _cells(row: QueueRow, counts: JudgeCounts | None, triage_rule: tuple[float, float]) -> tuple[Any, ...]:
    scores = Scores(*counts[:4]) if counts else None
    correctness: float | str | None = scores.correctness if scores else None
    f1 = scores.f1 if scores else None
    if counts and counts[4]:  # points left unchecked: a score over the others would read as the answer's
        correctness, f1 = confirmed_share(counts), None
    judge = "—" if counts is None else VERDICTS[answer_verdict(counts, *triage_rule)]
    return (row.id, judge, correctness, f1, SIGNED if row.signed else QUEUE_STATUS[row.status])


def confirmed_share(counts: JudgeCounts) -> str:
    """How many of an answer's points the rater confirmed, when it left some unchecked: "2 of 5"."""
    return f"{counts[0]} of {sum(counts)}"


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers as numbers, undefined scores ("—") after every number, text as text."""
    if value is None:
        return (2, 0)
    return (0, value) if isinstance(value, int | float) else (1, str(value))
