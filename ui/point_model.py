"""The Qt item model of one answer's data points, as the review's points table shows them: the
reference judge's view and the reviewer's, then a column for every other rater of the same points."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QStandardItem, QStandardItemModel

from app.figures.rater_names import abstention_cell, rater_name, role_name
from app.judging.standing import Standing, figure_lines, real_label_note
from app.plain_text import plain_text
from app.review.service import RaterTag, ReviewPoint
from models.vocabulary import RaterKind
from ui.cell_words import TAG_STYLE, citation_lines, header_lines, tag_text


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

    def judge_role(self) -> str:
        """What the rater whose tags the judge column shows is: "Claim checker", "Jury" or "Judge"."""
        name = self.standing.run if self.standing is not None and self.standing.run else None
        return role_name(name or next((p.judge for p in self.points if p.judge), None))

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
                for role in _CELL_ROLES:  # a new item holds nothing: a role with no value is not set
                    if (value := self._data(row, column, role)) is not None:
                        item.setData(value, role)
                self.setItem(row, column, item)

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
        if orientation == Qt.Orientation.Horizontal and section == self.JUDGE and role == Qt.ItemDataRole.DisplayRole:
            who = self.judge_role()  # the claim checker is never called "Judge"
            if self.standing is None:
                return who
            said = f"{who} ⚠ demo" if self.standing.demonstration else f"{who} ({self.standing.short})"
            return header_lines(said)
        if orientation == Qt.Orientation.Horizontal and section == self.JUDGE and role == Qt.ItemDataRole.ToolTipRole:
            return self.standing_tip() if self.standing is not None else None
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
                if said := abstention_cell(point.judge_rationale):  # read, not tagged: never "—" (not checked)
                    return said
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
        if role == Qt.ItemDataRole.ToolTipRole and column == self.CITED and (point.passages or self.written[row]):
            return self.CITED_TIP
        return None

    def cited_lines(self, row: int) -> list[str]:
        """The answer's citations of a point ("Section 3 → par_8"), then the reviewer's own citations, then
        the judge's evidence the answer did not cite, marked ("evidence par_11"): never one for the other."""
        written = self.written[row] if row < len(self.written) else ()
        lines = [f"{text} → {', '.join(ids[:2])}" if ids else f"{text} (not found)" for text, ids in written]
        cited = {pid for _text, ids in written for pid in ids}
        point = self.points[row]
        mine = [c for c in point.citations if c not in cited]
        return lines + mine + [self.EVIDENCE_MARK + c for c in point.evidence if c not in cited and c not in mine]

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
