"""Qt item models over app results: the answer queue and the data points of one answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QStandardItem, QStandardItemModel

from app.figures.rater_names import rater_name
from app.figures.scores import Scores, answer_verdict, shown
from app.judging.standing import Standing, figure_lines, real_label_note
from app.plain_text import plain_text
from app.review.service import JudgeCounts, QueueRow, RaterTag, ReviewPoint
from models.vocabulary import RaterKind, ReviewStatus
from ui.cell_words import TAG_STYLE, citation_lines, header_lines, tag_text

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
        "⚑ flagged, ○ to read (it confirmed only some points); — not judged",
        "The judge's correctness: the share of the answer's points it tagged correct",
        "The judge's relevance (F1 of precision and recall)",
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
    ) -> None:
        super().__init__()
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
            return self.HEADER_TIPS[section]
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
            return shown(value) if index.column() in self.SCORES else str(value)
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
    correctness = scores.correctness if scores else None
    f1 = scores.f1 if scores else None
    judge = "—" if counts is None else VERDICTS[answer_verdict(counts, *triage_rule)]
    return (row.id, judge, correctness, f1, SIGNED if row.signed else QUEUE_STATUS[row.status])


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers as numbers, undefined scores ("—") after every number, text as text."""
    if value is None:
        return (2, 0)
    return (0, value) if isinstance(value, int | float) else (1, str(value))


class DataPointTableModel(QStandardItemModel):
    """The data points of the answer under review: the reference judge's view and the reviewer's,
    then one column for every other rater who tagged the same points (other judge runs, the jury,
    other reviewers, imported labels), whatever order their tags came in.

    The cells are made once an answer, as items Qt holds: the table sizes its rows and columns to
    their contents, asking each cell for a dozen roles, 2,000 calls into Python an answer (10 ms of a
    move to the next answer) where a model answered them one by one."""

    FIXED = ("#", "Data point", "Judge", "Conf.", "Yours", "Cited")
    HEADERS = FIXED
    JUDGE = 2
    CONFIDENCE = 3
    CITED = 5
    EVIDENCE_MARK = "evidence "  # a passage the judge found, which the answer did not cite
    CITED_TIP = (
        "What the answer cites for this point (or in its lead-in), as it wrote it, and the passage it resolves to. "
        f"Lines marked “{EVIDENCE_MARK.strip()}” are the passages the judge or the claim checker found closest: "
        "its evidence, not the answer's citations."
    )

    def __init__(self) -> None:
        super().__init__()
        self.points: list[ReviewPoint] = []
        # per point, the citations the answer writes in it or its lead-in: (as written, passage ids)
        self.written: list[tuple[tuple[str, tuple[str, ...]], ...]] = []
        self.raters: list[RaterTag] = []  # one per extra column: the rater's name and kind
        self.standing: Standing | None = None  # how good the judge whose tags are shown is
        self.same_confidence: float | None = None  # set when every point has this one confidence: no figure
        self.no_confidence_figure = False  # every point has the same confidence, or none has any: hidden
        self.doubtful: dict[str, str] = {}  # raters near chance or not measured: greyed, their standing said
        self.setColumnCount(len(self.FIXED))  # before any answer: the view sets each column's resize mode

    def set_standing(self, standing: Standing | None) -> None:
        if standing == self.standing:
            return  # a changed header re-measures every column sized to its contents
        self.standing = standing
        self.blockSignals(True)  # the judge's tooltips tell its standing: read when shown, nothing to redraw
        try:
            for row in range(len(self.points)):
                self._fill(row, self.JUDGE, (Qt.ItemDataRole.ToolTipRole,))
        finally:
            self.blockSignals(False)
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, self.JUDGE, self.JUDGE)

    def standing_tip(self) -> str:
        if self.standing is None:
            return "No judge has tagged this answer."
        lines = [f"{self.standing.run}: {self.standing.text}"]
        if note := real_label_note(self.standing.real):  # measured on human labels: that first
            lines.append(note)
            if self.standing.figures:
                lines.append("Planted errors (latest stress test):")
        lines += figure_lines(self.standing.figures)
        if self.standing.demonstration:
            verdict = "close to chance" if self.standing.measured else "unmeasured, maybe no better than chance"
            lines.append(f"Its tags are {verdict}: run a capable model (a GGUF file or an API).")
        return "\n".join(lines)

    def set_points(
        self, points: list[ReviewPoint], written: Sequence[tuple[tuple[str, tuple[str, ...]], ...]] = ()
    ) -> None:
        """The answer's points; `written`, per point, the citations the answer writes for it."""
        self.beginResetModel()
        self.blockSignals(True)  # one reset for the views, not a signal an item
        try:
            self.written = list(written) + [()] * (len(points) - len(written))
            self._set_points(points)
        finally:
            self.blockSignals(False)
        self.endResetModel()

    def _set_points(self, points: list[ReviewPoint]) -> None:
        self.points = points
        seen: dict[str, RaterTag] = {}
        for point in points:
            for tag in point.others:
                if tag.rater != point.judge:
                    seen.setdefault(tag.rater, tag)
        # Judges (runs, jury, a verifier) before people, each group by name.
        self.raters = sorted(seen.values(), key=lambda t: (t.kind is RaterKind.HUMAN, t.rater))
        self.HEADERS = self.FIXED + tuple(t.rater for t in self.raters)
        confidences = {p.judge_confidence for p in points if p.judge_confidence is not None}
        self.same_confidence = confidences.pop() if len(points) > 1 and len(confidences) == 1 else None
        self.no_confidence_figure = len(points) > 1 and len(confidences) <= 1
        self.setRowCount(0)
        self.setColumnCount(len(self.HEADERS))
        self.setRowCount(len(points))
        for row in range(len(points)):
            for column in range(len(self.HEADERS)):
                item = QStandardItem()
                item.setFlags(_CELL_FLAGS)
                self.setItem(row, column, item)
                self._fill(row, column, _CELL_ROLES)

    def _fill(self, row: int, column: int, roles: Sequence[Qt.ItemDataRole]) -> None:
        item = self.item(row, column)
        for role in roles:
            item.setData(self._data(row, column, role), role)

    def confidence_tip(self) -> str:
        if not self.no_confidence_figure:
            return "The judge's confidence in its tag"
        if self.same_confidence is None:
            return "The judge gave no confidence on this answer: the column is hidden (right-click the header)."
        return (
            f"The judge gave every point of this answer the same confidence ({self.same_confidence:.2f}): "
            "it tells no tag from another, so the column is hidden (right-click the header to show it)."
        )

    def tag_of(self, row: int, rater: str) -> RaterTag | None:
        """A rater's tag on a point (or, marked earlier, on the point it replaced)."""
        return next((t for t in self.points[row].others if t.rater == rater), None)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and section == self.JUDGE and self.standing is not None:
            if role == Qt.ItemDataRole.DisplayRole:
                text = f"Judge ({self.standing.short})" if not self.standing.demonstration else "Judge ⚠ demo"
                return header_lines(text)
            if role == Qt.ItemDataRole.ToolTipRole:
                return self.standing_tip()
        if orientation == Qt.Orientation.Horizontal and section >= len(self.FIXED):
            rater = self.raters[section - len(self.FIXED)]
            doubt = self.doubtful.get(rater.rater)
            if role == Qt.ItemDataRole.DisplayRole:
                said = "" if doubt is None else " · near chance" if doubt.startswith("near") else " · not measured"
                return header_lines(rater_name(rater.rater) + said)
            if role == Qt.ItemDataRole.ForegroundRole and doubt is not None:
                return QColor("#8a8a8a")  # shown, but never a finding
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"{rater.rater} ({rater.kind.value}): its tag on the same data point" + (
                    f"\n{doubt}" if doubt else ""
                )
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.ToolTipRole:
            if section == self.CITED:
                return self.CITED_TIP
            return self.confidence_tip() if section == self.CONFIDENCE else None
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def _data(self, row: int, column: int, role: int) -> Any:
        point = self.points[row]
        if column >= len(self.FIXED):
            return self._rater_cell(row, self.raters[column - len(self.FIXED)].rater, role)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return str(row + 1)
            if column == 1:
                text = plain_text(point.point.text)  # an answer's Markdown (**not**) as the words it marks
                return text + (f"\n✎ Your comment: {point.point.comment}" if point.point.comment else "")
            if column == 2:
                if point.judge_tag:
                    return tag_text(point.judge_tag)
                earlier = self.tag_of(row, point.judge or "")
                return _earlier_text(earlier) if earlier else "—"
            if column == 3:
                meaningful = point.judge_confidence is not None and self.same_confidence is None
                return f"{point.judge_confidence:.2f}" if meaningful else "—"
            if column == 4:
                return tag_text(point.point.tag)
            return citation_lines(self.cited_lines(row))
        if role == Qt.ItemDataRole.BackgroundRole and column in (2, 4):
            tag = point.judge_tag if column == 2 else point.point.tag
            if column == 2 and tag is None:
                return None
            return QColor(TAG_STYLE[tag][1])
        if role == Qt.ItemDataRole.ToolTipRole and column == self.JUDGE and point.judge_tag is not None:
            return (point.judge_rationale or tag_text(point.judge_tag)) + "\n\n" + self.standing_tip()
        if role == Qt.ItemDataRole.ToolTipRole and column in (1, 2):
            return point.judge_rationale or point.point.text
        if role == Qt.ItemDataRole.ToolTipRole and column == self.CONFIDENCE:
            return self.confidence_tip()
        if role == Qt.ItemDataRole.ToolTipRole and column == self.CITED and (point.citations or self.written[row]):
            return self.CITED_TIP
        return None

    def cited_lines(self, row: int) -> list[str]:
        """The answer's citations of a point ("Section 3 → par_8"), then the judge's evidence the answer did
        not cite, marked ("evidence par_11"): never one for the other."""
        written = self.written[row] if row < len(self.written) else ()
        lines = [f"{text} → {', '.join(ids[:2])}" if ids else f"{text} (not found)" for text, ids in written]
        cited = {pid for _text, ids in written for pid in ids}
        point = self.points[row]
        if point.point.source_id is None:  # the reviewer's own point: the passages are the reviewer's citations
            return lines + [c for c in point.citations if c not in cited]
        return lines + [self.EVIDENCE_MARK + c for c in point.citations if c not in cited]

    def _rater_cell(self, row: int, rater: str, role: int) -> Any:
        found = self.tag_of(row, rater)
        if role == Qt.ItemDataRole.DisplayRole:
            return "—" if found is None else (_earlier_text(found) if found.earlier else tag_text(found.tag))
        if role == Qt.ItemDataRole.BackgroundRole and found is not None and not found.earlier:
            return QColor(TAG_STYLE[found.tag][1])
        if role == Qt.ItemDataRole.ToolTipRole and found is not None:
            lines = [f"{rater}: {found.tag.value}" + (" (on the point this one replaced)" if found.earlier else "")]
            if found.confidence is not None:
                lines.append(f"confidence {found.confidence:.2f}")
            if found.rationale:
                lines.append(found.rationale)
            return "\n".join(lines)
        return None


_CELL_FLAGS = Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemNeverHasChildren
_CELL_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.BackgroundRole, Qt.ItemDataRole.ToolTipRole)


def _earlier_text(tag: RaterTag) -> str:
    """A tag given before the reviewer split, merged or edited the point: context, not a tag of it."""
    return f"({tag_text(tag.tag)}, before edit)"
