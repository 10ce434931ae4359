"""The answer as a lawyer reads it: Markdown rendered (bold, italics, lists, headings), each data
point in its tag colour, each point's lead-in greyed before it, and the answer's own text that no
data point holds underlined in red, so nothing the answer asserts can pass unseen. A term its
contract defines is underlined with dots: its definition on hover, a click shows where it is defined.

The document is built with QTextCursor rather than from HTML, so that every character shown is
known to be a character of the answer at a known offset: a selection maps back to exact answer
offsets (to make a data point of it) and a click to the point under the mouse.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QTextBrowser

from app.ingest.citations import Citation
from app.ingest.contract_terms import ContractReading, DefinedTerm
from app.review.service import ReviewPoint
from models.segmentation import answer_lines
from models.vocabulary import Tag
from ui.cell_words import TAG_STYLE, tag_text
from ui.review.document_view import TERM_COLOUR, term_tooltip

CONTEXT_COLOUR = "#7a7a7a"
UNCOVERED_COLOUR = "#b00020"
MARKER_COLOUR = "#555555"
# **bold**, __bold__, *italic*, _italic_, `code`: the delimiters are hidden, the words keep their offsets.
_INLINE = re.compile(
    r"(?P<b>\*\*|__)(?=\S)(?P<btext>.+?)(?<=\S)(?P=b)"
    r"|(?<![\w*])(?P<i>[*_])(?=\S)(?P<itext>[^*_]+?)(?<=\S)(?P=i)(?![\w*])"
    r"|`(?P<code>[^`]+)`"
)


@dataclass
class _Style:
    """What one character of the answer looks like."""

    hidden: bool = False
    bold: bool = False
    italic: bool = False
    code: bool = False
    point: int | None = None  # index into the points shown
    context: bool = False
    uncovered: bool = False
    link: str | None = None
    term: DefinedTerm | None = None

    def key(self) -> tuple:
        return (self.bold, self.italic, self.code, self.point, self.context, self.uncovered, self.link, self.term)


@dataclass
class RenderedAnswer:
    """An answer laid out in a document, with what maps the document back to the answer."""

    document: QTextDocument
    current: int | None  # the id of the point marked as selected
    spans: list[tuple[int, int, int]]  # (answer start, end, point id) of the points shown
    uncovered: list[tuple[int, int]]  # answer text in no data point nor its context
    doc_starts: list[int] = field(default_factory=list)  # runs of answer text in the document: where each
    runs: list[tuple[int, int, int]] = field(default_factory=list)  # starts there; (doc start, length, answer start)
    current_at: int | None = None  # where the current point starts in the document


class AnswerView(QTextBrowser):
    """The answer pane. Emits pointClicked(point id) and citationClicked(citation id), the latter for
    a citation's passage and for the passage defining a term clicked."""

    pointClicked = Signal(int)  # noqa: N815 - Qt signal names
    citationClicked = Signal(str)  # noqa: N815
    pointRequested = Signal()  # noqa: N815 - "make a data point of the selection", from the context menu

    def __init__(self) -> None:
        super().__init__()
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_anchor_clicked)
        self.rendered = RenderedAnswer(self.document(), None, [], [])
        self.terms: Sequence[DefinedTerm] = ()  # those of the document the answer is about
        self._terms_read: tuple[Sequence[DefinedTerm], ContractReading] | None = None

    def _on_anchor_clicked(self, url: QUrl) -> None:
        self.citationClicked.emit(url.toString().removeprefix("cite:").removeprefix("term:"))

    @property
    def uncovered(self) -> list[tuple[int, int]]:
        """Answer text in no data point nor its context."""
        return self.rendered.uncovered

    # ------------------------------------------------------------------ showing

    def show_answer(
        self, text: str, points: Sequence[ReviewPoint], current: int | None, citations: Sequence[Citation] = ()
    ) -> None:
        """Render the answer with its data points; `current` is the id of the point selected."""
        self.show_rendered(self.render(text, points, current, citations))

    def show_rendered(self, rendered: RenderedAnswer) -> None:
        """Show an answer rendered (perhaps ahead, while the reviewer read another), its current point in view."""
        self.rendered = rendered  # the view does not own the document: this keeps it
        self.setDocument(rendered.document)
        if rendered.current_at is not None:
            here = self.textCursor()
            here.setPosition(rendered.current_at)
            self.setTextCursor(here)
            self.ensureCursorVisible()

    def render(
        self,
        text: str,
        points: Sequence[ReviewPoint],
        current: int | None,
        citations: Sequence[Citation] = (),
        terms: Sequence[DefinedTerm] | None = None,
    ) -> RenderedAnswer:
        """The answer in a document of its own, each point in its tag colour, the current one marked;
        `terms` are its document's defined terms (by default `self.terms`)."""
        styles = [_Style() for _ in text]
        for start, end, term in self._reading(self.terms if terms is None else terms).terms_used(text):
            for i in range(start, end):
                styles[i].term = term
        self._mark_markdown(text, styles)
        shown = [p for p in points if p.point.span_start is not None and p.point.span_end is not None]
        shown.sort(key=lambda p: p.point.span_start or 0)
        spans = []
        for number, p in enumerate(shown):
            start, end = p.point.span_start or 0, p.point.span_end or 0
            spans.append((start, end, p.point.id))
            for i in range(max(start, 0), min(end, len(text))):
                styles[i].point = number
            cs, ce = p.point.context_start, p.point.context_end
            if cs is not None and ce is not None:
                for i in range(max(cs, 0), min(ce, len(text))):
                    styles[i].context = styles[i].context or styles[i].point is None
        for citation in citations:
            if citation.resolved:
                for i in range(citation.start, min(citation.end, len(text))):
                    styles[i].link = f"cite:{citation.passages[0]}"
        uncovered = self._mark_uncovered(text, styles)
        labels = sorted((p.point.span_end or 0, n, p) for n, p in enumerate(shown, start=1))

        document = QTextDocument()
        document.setUndoRedoEnabled(False)  # shown, never edited
        document.setDefaultFont(self.font())
        document.setDocumentMargin(self.document().documentMargin())
        rendered = RenderedAnswer(document, current, spans, uncovered)
        cursor = QTextCursor(document)
        for index, line in enumerate(answer_lines(text)):
            if index:
                cursor.insertBlock()
            block = QTextBlockFormat()
            block.setLeftMargin(7 * line.indent)
            block.setTopMargin(8 if line.gap_before else 1)
            cursor.setBlockFormat(block)
            i = line.start
            while i < line.end:
                if styles[i].hidden:
                    i += 1
                    continue
                j = i + 1
                while j < line.end and not styles[j].hidden and styles[j].key() == styles[i].key():
                    j += 1
                labels = _insert_labels(cursor, labels, i, current)
                point = shown[styles[i].point] if styles[i].point is not None else None
                if point is not None and point.point.id == current and rendered.current_at is None:
                    rendered.current_at = cursor.position()
                self._insert(rendered, cursor, text, i, j, styles[i], line, point, current)
                i = j
            labels = _insert_labels(cursor, labels, line.end, current)
        for point in (p for p in points if p.point.span_start is None):
            cursor.insertBlock()
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(TAG_STYLE[Tag.MISSING][1]))
            cursor.insertText(f"{tag_text(Tag.MISSING)}: {point.point.text}", fmt)
        return rendered

    def _reading(self, terms: Sequence[DefinedTerm]) -> ContractReading:
        """The terms as a reading, kept while they are the same: it compiles their pattern once."""
        if self._terms_read is None or self._terms_read[0] is not terms:
            self._terms_read = (terms, ContractReading(tuple(terms), (), ()))
        return self._terms_read[1]

    def _insert(self, rendered, cursor, text, start, end, style, line, point, current) -> None:
        fmt = QTextCharFormat()
        if line.heading and line.heading < 7:
            fmt.setFontPointSize(self.font().pointSizeF() * (1.35 if line.heading <= 2 else 1.15))
        if style.bold or line.heading:
            fmt.setFontWeight(QFont.Weight.Bold)
        fmt.setFontItalic(style.italic)
        if style.code:
            fmt.setFontFamilies(["monospace"])
        if start < line.body:  # the list marker: part of the answer, shown plainly
            fmt.setForeground(QColor(MARKER_COLOUR))
        if point is not None:
            fmt.setBackground(QColor(TAG_STYLE[point.point.tag][1]))
            if point.point.id == current:
                fmt.setFontUnderline(True)
                fmt.setUnderlineColor(QColor("#1d3557"))
                fmt.setFontWeight(QFont.Weight.DemiBold if not style.bold else QFont.Weight.Bold)
        elif style.context:
            fmt.setForeground(QColor(CONTEXT_COLOUR))
            fmt.setFontItalic(True)
            fmt.setToolTip("lead-in: read with the data points under it")
        elif style.uncovered:
            fmt.setForeground(QColor(UNCOVERED_COLOUR))
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.WaveUnderline)
            fmt.setUnderlineColor(QColor(UNCOVERED_COLOUR))
            fmt.setToolTip("in no data point: select it and press Ctrl+Shift+N to make it one")
        if style.link:
            fmt.setAnchor(True)
            fmt.setAnchorHref(style.link)
            fmt.setForeground(QColor("#1d4ed8"))
        elif style.term is not None:
            fmt.setAnchor(True)
            fmt.setAnchorHref(f"term:{style.term.passage}")
            said = fmt.toolTip()  # a lead-in's or uncovered text's note stays beside the definition
            fmt.setToolTip(term_tooltip(style.term) + (f"<p>{said}</p>" if said else ""))
            if fmt.underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline and not fmt.fontUnderline():
                fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
                fmt.setUnderlineColor(QColor(TERM_COLOUR))
        rendered.doc_starts.append(cursor.position())
        rendered.runs.append((cursor.position(), end - start, start))
        cursor.insertText(text[start:end].replace("\r", ""), fmt)

    @staticmethod
    def _mark_markdown(text: str, styles: list[_Style]) -> None:
        for line in answer_lines(text):
            for i in range(line.start, line.body):
                styles[i].hidden = line.heading > 0  # "###" goes; a list marker stays
            for m in _INLINE.finditer(text, line.body, line.end):
                inner = "btext" if m.group("b") else "itext" if m.group("i") else "code"
                a, b = m.span(inner)
                for i in [*range(m.start(), a), *range(b, m.end())]:
                    styles[i].hidden = True
                for i in range(a, b):
                    styles[i].bold |= inner == "btext"
                    styles[i].italic |= inner == "itext"
                    styles[i].code |= inner == "code"

    @staticmethod
    def _mark_uncovered(text: str, styles: list[_Style]) -> list[tuple[int, int]]:
        """Runs of the answer's words that are in no point and no lead-in (list markers aside)."""
        runs = []
        for line in answer_lines(text):
            i = line.body
            while i < line.end:
                if styles[i].point is None and not styles[i].context and not styles[i].hidden and not text[i].isspace():
                    j = i
                    while j < line.end and styles[j].point is None and not styles[j].context:
                        j += 1
                    while text[j - 1].isspace() or styles[j - 1].hidden:
                        j -= 1
                    if any(ch.isalnum() for ch in text[i:j]):
                        runs.append((i, j))
                        for k in range(i, j):
                            styles[k].uncovered = not styles[k].hidden
                    i = j
                i += 1
        return runs

    # ------------------------------------------------------------------ reading back

    def answer_offset(self, position: int) -> int | None:
        """The answer offset of a document position, or None outside the answer's own text."""
        index = bisect.bisect_right(self.rendered.doc_starts, position) - 1
        if index < 0:
            return None
        doc_start, length, answer_start = self.rendered.runs[index]
        return answer_start + position - doc_start if position < doc_start + length else None

    def selected_span(self) -> tuple[int, int] | None:
        """The answer text selected, as (start, end) offsets into the answer."""
        cursor = self.textCursor()
        if not cursor.hasSelection():
            return None
        first, last = cursor.selectionStart(), cursor.selectionEnd()
        offsets = [
            answer_start + i
            for doc_start, length, answer_start in self.rendered.runs
            for i in range(length)
            if first <= doc_start + i < last
        ]
        return (min(offsets), max(offsets) + 1) if offsets else None

    def select_answer_text(self, start: int, end: int) -> None:
        """Select answer text by its offsets, as a reviewer dragging over it would."""
        positions = [
            doc_start + i
            for doc_start, length, answer_start in self.rendered.runs
            for i in range(length)
            if start <= answer_start + i < end
        ]
        cursor = self.textCursor()
        cursor.setPosition(min(positions))
        cursor.setPosition(max(positions) + 1, QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)

    def contextMenuEvent(self, event) -> None:  # noqa: N802 - Qt's name
        menu = self.createStandardContextMenu(event.pos())
        if self.selected_span() is not None:
            menu.insertSeparator(menu.actions()[0])
            make = menu.addAction("Make a data point of the selection  (Ctrl+Shift+N)")
            menu.insertAction(menu.actions()[0], make)
            make.triggered.connect(self.pointRequested.emit)
        menu.exec(event.globalPos())

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().mouseReleaseEvent(event)
        if event.button() != Qt.MouseButton.LeftButton or self.textCursor().hasSelection():
            return
        if self.anchorAt(event.position().toPoint()):
            return
        offset = self.answer_offset(self.cursorForPosition(event.position().toPoint()).position())
        for start, end, point_id in self.rendered.spans:
            if offset is not None and start <= offset < end:
                self.pointClicked.emit(point_id)
                return


def _insert_labels(cursor: QTextCursor, labels: list, upto: int, current: int | None) -> list:
    """Each point's number and tag, in superscript, where its text ends."""
    while labels and labels[0][0] <= upto:
        _end, number, point = labels.pop(0)
        fmt = QTextCharFormat()
        fmt.setVerticalAlignment(QTextCharFormat.VerticalAlignment.AlignSuperScript)
        fmt.setForeground(QColor("#1d3557" if point.point.id == current else "#333333"))
        if point.point.id == current:
            fmt.setFontWeight(QFont.Weight.Bold)
        cursor.insertText(f"[{number} {TAG_STYLE[point.point.tag][0]}]", fmt)
    return labels
