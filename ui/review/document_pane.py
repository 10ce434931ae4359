"""The right-hand pane: the contract of the open answer (its parties on a card above it, its defined
terms and cross-references marked in it), a BM25 search over its passages, and the button that makes
a missing data point of the text selected in it. It opens at the passages the selected data point,
or else the question, is about."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from app.errors import AssayError
from app.ingest.contract_terms import ContractReading, Party, contract_reading
from app.project import Passage, Project
from app.review.service import ReviewPoint, ReviewState
from ui.item_models import short_question
from ui.review.document_view import ABOUT, DocumentView


class DocumentPane(QWidget):
    """The document of the open answer, with its search; problems are said through `say`."""

    missingRequested = Signal()  # noqa: N815 - "Add selection as missing" was pressed

    def __init__(self, project: Project, say: Callable[[str], None]) -> None:
        super().__init__()
        self.project = project
        self.say = say
        self._best: dict[tuple[str, str], str | None] = {}  # (document, words): the passage they match best
        self.reading: ContractReading | None = None
        self.title = QLabel()
        self.parties = QLabel()
        self.parties.setWordWrap(True)
        self.parties.setTextFormat(Qt.TextFormat.RichText)
        self.parties.setStyleSheet(
            "QLabel { background: #f6f3ea; border: 1px solid #ddd5bf; border-radius: 4px; padding: 4px 6px; }"
        )
        self.parties.linkActivated.connect(self.show_passage)
        self.parties.hide()
        self.view = DocumentView()
        self.search = QLineEdit(placeholderText="Search the document (Ctrl+F), ranked by BM25")
        self.hits = QListWidget()
        self.hits.setWordWrap(True)
        self.hits.hide()
        self.hits.itemActivated.connect(self._on_hit_activated)
        self.hits.itemClicked.connect(self._on_hit_activated)
        add = QPushButton("Add selection as missing  (4)")
        add.clicked.connect(self.missingRequested)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.parties)
        layout.addWidget(self.search)
        layout.addWidget(self.hits, 1)
        layout.addWidget(self.view, 4)
        layout.addWidget(add)

    def show_document(self, name: str, document_id: int, passages: list[Passage]) -> None:
        self.title.setText(f"<b>{html.escape(name)}</b>")
        if document_id != self.view.document_id:
            try:
                self.reading = contract_reading(self.project, document_id)
            except AssayError as exc:
                self.reading = None
                self.say(f"The contract's terms and references could not be read: {exc}")
            self.parties.setText(parties_html(self.reading.parties if self.reading else ()))
            self.parties.setVisible(bool(self.reading and self.reading.parties))
        self.view.show_document(document_id, passages, self.reading)

    def show_passage(self, citation_id: str) -> None:
        if not self.view.focus_passage(citation_id):
            self.say(f"{citation_id} is not a passage of this document.")

    def show_what_it_is_about(self, state: ReviewState, point: ReviewPoint | None) -> None:
        """The point's first cited passage; else the passage that best matches its words (BM25), else the
        question's. A passage found by search is tinted apart from a cited one: no citation vouches for it."""
        if point is not None and point.citations and self.view.focus_passage(point.citations[0]):
            return
        for query in self._about_queries(state, point):
            best = self._best_match(state.answer.document, query)
            if best is not None and self.view.focus_passage(best, ABOUT):
                return

    def prepare_what_it_is_about(self, state: ReviewState, point: ReviewPoint | None) -> None:
        """Search ahead for what showing this point will look for."""
        if point is None or not point.citations:
            for query in self._about_queries(state, point):
                self._best_match(state.answer.document, query)

    @staticmethod
    def _about_queries(state: ReviewState, point: ReviewPoint | None) -> list[str]:
        return ([point.point.text] if point is not None else []) + [short_question(state.answer.question)]

    def _best_match(self, document: str, query: str) -> str | None:
        """The citation id of the passage that best matches the words, remembered: a document's
        passages do not change while it is reviewed."""
        if (document, query) not in self._best:
            if len(self._best) >= 512:
                self._best.clear()
            try:
                hits = self.project.search(document, query, limit=1)
            except AssayError:
                hits = []
            self._best[document, query] = hits[0].passage.citation_id if hits else None
        return self._best[document, query]

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def search_document(self, document: str) -> None:
        """List the passages of `document` that best match the search words, and open the best."""
        try:
            hits = self.project.search(document, self.search.text(), limit=15)
        except AssayError as exc:
            self.say(str(exc))
            return
        self.hits.clear()
        for hit in hits:
            where = f" §{hit.passage.section}" if hit.passage.section else ""
            item = QListWidgetItem(f"{hit.passage.citation_id}{where}  {hit.passage.text[:160]}")
            item.setData(Qt.ItemDataRole.UserRole, hit.passage.citation_id)
            self.hits.addItem(item)
        self.hits.setVisible(bool(hits))
        self.say(f"{len(hits)} passages match." if hits else "No passage of this document matches.")
        if hits:
            self.hits.setCurrentRow(0)
            self.hits.setFocus()

    def _on_hit_activated(self, item: QListWidgetItem) -> None:
        self.show_passage(item.data(Qt.ItemDataRole.UserRole))


def parties_html(parties: tuple[Party, ...] | list[Party]) -> str:
    """The parties card: each party's name (a link to the passage naming it), its short names and role,
    one line each: Acme Corp. — “Acme”, Disclosing Party."""
    lines = []
    for party in parties:
        name = html.escape(party.name or "(name not read)")
        short = [f"“{html.escape(n)}”" for n in party.short_names if n != party.role]
        said = ", ".join(short + ([html.escape(party.role)] if party.role else []))
        lines.append(
            f"<a href='{party.passage}' style='color:#1d3557; text-decoration:none'><b>{name}</b></a>"
            + (f" — {said}" if said else "")
        )
    return "<span style='color:#6b6b6b'>Parties</span><br>" + "<br>".join(lines)
