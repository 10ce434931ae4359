"""The contract, passage by passage: citation ids, headings, footnotes; cited, gold and current
passages marked; text selected here becomes a missing data point citing its passages."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QColor, QFont, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QTextBrowser, QTextEdit

from app.ingest.contract_terms import ContractReading, DefinedTerm, Reference
from app.ingest.ocr import LOW_CONFIDENCE as LOW_OCR_CONFIDENCE
from app.project import Passage
from models.vocabulary import PassageKind

CITED = QColor("#fff4c2")
ABOUT = QColor("#e6e0fa")  # found by search for what the point says: no citation vouches for it
GOLD = QColor("#dff3e4")
FOCUS = QColor("#ffd36e")
TERM_COLOUR = QColor("#1d3557")  # a defined term's dotted underline
REFERENCE_COLOUR = QColor("#1d4ed8")  # a cross-reference to a part of this document
UNRESOLVED_COLOUR = QColor("#8a8a8a")  # one to a part the document does not have


class DocumentView(QTextBrowser):
    """A read-only view of one document's passages, one block each; the table of contents is one
    line until clicked, since a contract's contents fill a screen before its first clause.

    Given the contract's reading, each defined term is underlined with dots where it is used (its
    definition on hover, a click goes to where it is defined) and each cross-reference is a link to
    the passage it resolves to, or greyed when the document has no such part."""

    def __init__(self) -> None:
        super().__init__()
        self.setOpenLinks(False)
        self.anchorClicked.connect(self._on_anchor_clicked)
        self.document_id: int | None = None
        self.passages: list[Passage] = []
        self.reading: ContractReading | None = None
        self._references_in: dict[str, list[Reference]] = {}  # citation id -> its references
        self.contents_shown = False
        self._block_of: dict[str, int] = {}  # citation id -> block number
        self._passage_at_block: dict[int, str] = {}
        self._marked: tuple[set[str], list[dict] | None] = (set(), None)
        self._marks: list[QTextEdit.ExtraSelection] = []
        self._focus: QTextEdit.ExtraSelection | None = None

    def show_document(self, document_id: int, passages: list[Passage], reading: ContractReading | None = None) -> None:
        if document_id == self.document_id:
            return
        self.document_id, self.passages, self.reading = document_id, passages, reading
        self._references_in = {}
        for reference in reading.references if reading is not None else ():
            self._references_in.setdefault(reference.passage, []).append(reference)
        self.contents_shown = False
        self._render()

    def show_contents(self, shown: bool = True) -> None:
        """Unfold (or fold) the table of contents; marks and the focused passage stay."""
        focused = self.focused
        self.contents_shown = shown
        self._render()
        self.mark(*self._marked)
        if focused:
            self.focus_passage(focused)

    def _render(self) -> None:
        self._block_of.clear()
        self._passage_at_block.clear()
        self.clear()
        cursor = QTextCursor(self.document())
        heading_format, id_format, body_format, note_format = _formats()
        last_heading = None
        first = True
        contents = [p for p in self.passages if p.kind is PassageKind.TOC]
        for passage in self.passages:
            folded = passage.kind is PassageKind.TOC and not self.contents_shown
            if folded and passage is not contents[0]:
                continue
            titled = any(c.isalpha() for c in passage.heading_path)  # "3" alone is in the §3 label already
            if titled and passage.heading_path != last_heading and passage.kind is not PassageKind.FOOTNOTE:
                if not first:
                    cursor.insertBlock()
                cursor.insertText(passage.heading_path, heading_format)
                first = False
                last_heading = passage.heading_path
            if not first:
                cursor.insertBlock(_block_format(passage))
            else:
                cursor.setBlockFormat(_block_format(passage))
            first = False
            if folded:
                link = QTextCharFormat(id_format)
                link.setAnchor(True)
                link.setAnchorHref("contents:show")
                link.setForeground(QColor("#1d5fa8"))
                cursor.insertText(f"▸ {len(contents)} lines of contents, folded: click to show them", link)
                continue
            label = f"[{passage.citation_id}]"
            if passage.section:  # a transcript's page:line needs no section sign
                label += f" {passage.section}" if ":" in passage.section else f" §{passage.section}"
            if passage.kind is PassageKind.FOOTNOTE:
                label += f" footnote {passage.footnote_label or ''}".rstrip()
            if passage.page:
                label += f" p.{passage.page}"
            if passage.ocr_confidence is not None and passage.ocr_confidence < LOW_OCR_CONFIDENCE:
                label += f" ⚠ OCR {passage.ocr_confidence:.0%}: check the scan"
            cursor.insertText(label + "  ", id_format)
            text = without_leaders(passage.text)
            base = note_format if passage.kind is PassageKind.FOOTNOTE else body_format
            self._insert_read(cursor, passage, text, base)
            self._block_of[passage.citation_id] = cursor.blockNumber()
            self._passage_at_block[cursor.blockNumber()] = passage.citation_id
        self.moveCursor(QTextCursor.MoveOperation.Start)

    def _insert_read(self, cursor: QTextCursor, passage: Passage, text: str, base: QTextCharFormat) -> None:
        """The passage's text, its defined terms and cross-references marked (when it was read)."""
        if self.reading is None or passage.kind is PassageKind.TOC:
            cursor.insertText(text, base)
            return
        # References hold offsets into the stored text: where leaders were dropped, they no longer fit.
        references = self._references_in.get(passage.citation_id, []) if text == passage.text else []
        marks: list[tuple[int, int, QTextCharFormat]] = [
            (r.start, r.end, _reference_format(base, r)) for r in references
        ]
        for start, end, term in self.reading.terms_used(text):
            if not any(start < e and s < end for s, e, _ in marks):
                marks.append((start, end, _term_format(base, term)))
        at = 0
        for start, end, fmt in sorted(marks, key=lambda m: m[0]):
            cursor.insertText(text[at:start], base)
            cursor.insertText(text[start:end], fmt)
            at = end
        cursor.insertText(text[at:], base)

    def _on_anchor_clicked(self, url: QUrl) -> None:
        link = url.toString()
        if link == "contents:show":
            self.show_contents()
        elif link.startswith(("term:", "ref:")):
            self.focus_passage(link.partition(":")[2])

    def mark(self, cited: set[str], gold_spans: list[dict] | None) -> None:
        """Tint the passages the answer's data points cite, and those holding gold spans."""
        self._marked = (cited, gold_spans)
        gold = self._gold_passages(gold_spans or [])
        self._marks = [self._selection(c, CITED) for c in cited if c in self._block_of]
        self._marks += [self._selection(c, GOLD, underline=True) for c in gold if c in self._block_of]
        self._focus = None
        self._apply()

    def focus_passage(self, citation_id: str, colour: QColor = FOCUS) -> bool:
        """Scroll to a passage and highlight it; False when the document has no such passage."""
        if citation_id not in self._block_of and any(p.citation_id == citation_id for p in self.passages):
            self.show_contents()  # a line of the folded table of contents
        if citation_id not in self._block_of:
            return False
        self._focus = self._selection(citation_id, colour)
        self._apply()
        self.setTextCursor(QTextCursor(self.document().findBlockByNumber(self._block_of[citation_id])))
        self._scroll_to_cursor()
        return True

    def _scroll_to_cursor(self) -> None:
        self.ensureCursorVisible()
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + self.cursorRect().top() - self.viewport().height() // 4)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        """Text rewraps when the pane is first laid out or resized: keep the focused passage in view."""
        super().resizeEvent(event)
        if self._focus is not None:
            self._scroll_to_cursor()

    @property
    def focused(self) -> str | None:
        if self._focus is None:
            return None
        return self._passage_at_block.get(self._focus.cursor.blockNumber())

    def selected_text_and_passages(self) -> tuple[str, list[str]]:
        """The selected words without the id labels, and the passages they lie in."""
        cursor = self.textCursor()
        if not cursor.hasSelection():
            return "", []
        doc = self.document()
        start_block = doc.findBlock(cursor.selectionStart()).blockNumber()
        end_block = doc.findBlock(cursor.selectionEnd()).blockNumber()
        passages = [self._passage_at_block[b] for b in range(start_block, end_block + 1) if b in self._passage_at_block]
        text = cursor.selectedText().replace("\u2029", " ")
        for citation in passages:  # drop "[par_3] §2 " labels caught in the selection
            text = text.replace(f"[{citation}]", " ")
        return " ".join(text.split()), passages

    def _gold_passages(self, spans: list[dict]) -> set[str]:
        return {
            p.citation_id
            for p in self.passages
            for s in spans
            if p.char_start is not None
            and p.char_end is not None
            and p.char_start < s["end"]
            and s["start"] < p.char_end
        }

    def _selection(self, citation_id: str, colour: QColor, underline: bool = False) -> QTextEdit.ExtraSelection:
        selection = QTextEdit.ExtraSelection()
        selection.cursor = QTextCursor(self.document().findBlockByNumber(self._block_of[citation_id]))
        selection.format.setBackground(colour)
        selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        if underline:
            selection.format.setFontUnderline(True)
            selection.format.setUnderlineColor(QColor("#2e7d32"))
        return selection

    def _apply(self) -> None:
        self.setExtraSelections(self._marks + ([self._focus] if self._focus else []))


def _formats() -> tuple[QTextCharFormat, QTextCharFormat, QTextCharFormat, QTextCharFormat]:
    heading = QTextCharFormat()
    heading.setFontWeight(QFont.Weight.Bold)
    heading.setForeground(QColor("#1d3557"))
    ids = QTextCharFormat()
    ids.setForeground(QColor("#6b6b6b"))
    ids.setFontFamilies(["monospace"])
    ids.setFontPointSize(8.5)
    body = QTextCharFormat()
    note = QTextCharFormat()
    note.setFontPointSize(8.5)
    note.setForeground(QColor("#444444"))
    return heading, ids, body, note


def _term_format(base: QTextCharFormat, term: DefinedTerm) -> QTextCharFormat:
    """A defined term where it is used: dotted underline, its definition on hover, a link to it."""
    fmt = QTextCharFormat(base)
    fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
    fmt.setUnderlineColor(TERM_COLOUR)
    fmt.setAnchor(True)
    fmt.setAnchorHref(f"term:{term.passage}")
    fmt.setToolTip(term_tooltip(term))
    return fmt


def term_tooltip(term: DefinedTerm) -> str:
    """A defined term's hover text: the term, where it is defined, and the words that define it."""
    definition = " ".join(term.definition.split())
    if len(definition) > 600:
        definition = definition[:600].rsplit(" ", 1)[0] + " …"
    return (
        f"<p><b>{html.escape(term.term, quote=False)}</b> "
        f"<span style='color:#6b6b6b'>defined in {term.passage} · click to go there</span></p>"
        f"<p>{html.escape(definition, quote=False)}</p>"
    )


def _reference_format(base: QTextCharFormat, reference: Reference) -> QTextCharFormat:
    """A cross-reference: a link to the first passage it resolves to, or greyed where none is found."""
    fmt = QTextCharFormat(base)
    if reference.passages is None:
        fmt.setForeground(UNRESOLVED_COLOUR)
        fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DashUnderline)
        fmt.setUnderlineColor(UNRESOLVED_COLOUR)
        fmt.setToolTip(f"{html.escape(reference.text, quote=False)}: not found in this document")
        return fmt
    fmt.setForeground(REFERENCE_COLOUR)
    fmt.setAnchor(True)
    fmt.setAnchorHref(f"ref:{reference.passages[0]}")
    more = len(reference.passages) - 1
    where = reference.passages[0] + (f" and {more} passage{'s' * (more > 1)} under it" if more else "")
    fmt.setToolTip(f"{html.escape(reference.text, quote=False)} → {where}: click to go there")
    return fmt


def _block_format(passage: Passage) -> QTextBlockFormat:
    block = QTextBlockFormat()
    block.setTopMargin(3)
    block.setBottomMargin(3)
    if passage.kind is PassageKind.FOOTNOTE:
        block.setLeftMargin(24)
    block.setAlignment(Qt.AlignmentFlag.AlignLeft)
    return block


# A table-of-contents line's run of dots before its page number: "1 Eligibility ……………… 2".
LEADER = re.compile(r"[ \t]*(?:\.[ \t]?){4,}[ \t]*(\d+)[ \t]*$|[ \t]*…{2,}[ \t]*(\d+)[ \t]*$", re.MULTILINE)


def without_leaders(text: str) -> str:
    """The text with dotted leaders dropped (the page number stays); form blanks ("……") are kept."""
    return LEADER.sub(lambda m: f"  · {m.group(1) or m.group(2)}", text)
