"""The right-hand pane: the contract of the open answer (its parties on a card above it, its defined
terms and cross-references marked in it), a BM25 search over its passages, and the button that makes
a missing data point of the text selected in it. It opens at the passages the selected data point,
or else the question, is about."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QLineEdit, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from app.errors import AssayError
from app.ingest.contract_terms import Party
from app.review.service import ReviewPoint, ReviewState
from app.review.session import Changes, Prepared, ReviewSession
from ui.item_models import document_name, short_question
from ui.review.document_view import ABOUT, DocumentView


class DocumentPane(QWidget):
    """The document of the session's open answer, with its search (the session's); problems are said
    through the session."""

    missingRequested = Signal()  # noqa: N815 - "Add selection as missing" was pressed

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.say = session.say
        self._best: dict[tuple[str, str], str | None] = {}  # (document, words): the passage they match best
        self.title = QLabel(wordWrap=True)  # a long file name wraps: the pane never widens the window
        self.title.setMinimumWidth(120)
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
        self.search.returnPressed.connect(self._on_search_entered)
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
        session.subscribe(self._on_changes)

    @property
    def titles(self) -> dict[str, str]:
        """Each document's name as a reader knows it, by its stored name."""
        return self.session.document_titles()

    def _on_changes(self, changes: Changes) -> None:
        if changes.project:
            self._best.clear()  # another file: its passages may be others
        state = self.session.state
        if state is None:
            return
        if changes.opened or changes.project:
            self.show_document()
        if changes.opened or changes.answer or changes.project:
            self.view.mark({c for p in state.points for c in p.passages}, state.answer.gold_spans)
        if changes.opened or changes.answer or changes.point or changes.project:
            self.show_what_it_is_about(state, self.session.current_point)

    def show_document(self) -> None:
        """The open answer's document (read again only when it is another), its parties above it."""
        session = self.session
        assert session.state is not None
        answer = session.state.answer
        named = self.titles.get(answer.document) or document_name(answer.document)
        # a file name's underscores may break a line: a name with no spaces still wraps
        self.title.setText(f"<b>{html.escape(named).replace('_', '_&#8203;')}</b>")
        if answer.document_id != self.view.document_id:
            self.title.setToolTip(answer.document)  # the file's own name, one hover away
            reading = session.reading
            self.parties.setText(parties_html(reading.parties if reading else ()))
            self.parties.setVisible(bool(reading and reading.parties))
        self.view.show_document(answer.document_id, session.passages, session.reading)

    def selected_text_and_passages(self) -> tuple[str, list[str]]:
        """The document text selected and the passages it is in; else nothing, and the passage in focus."""
        text, passages = self.view.selected_text_and_passages()
        if not text and self.view.focused:
            passages = [self.view.focused]
        return text, passages

    def show_passage(self, citation_id: str) -> None:
        if not self.view.focus_passage(citation_id):
            self.say(f"{citation_id} is not a passage of this document.")

    def show_what_it_is_about(self, state: ReviewState, point: ReviewPoint | None) -> None:
        """The point's first cited passage; else the passage that best matches its words (BM25), else the
        question's. A passage found by search is tinted apart from a cited one: no citation vouches for it."""
        if point is not None and point.passages and self.view.focus_passage(point.passages[0]):
            return
        for query in self._about_queries(state, point):
            best = self._best_match(state.answer.document, query)
            if best is not None and self.view.focus_passage(best, ABOUT):
                return

    def prepare(self, prepared: Prepared) -> None:
        """Search ahead for what showing a prepared answer's first point will look for."""
        state = prepared.state
        point = state.points[0] if state.points else None
        if point is None or not point.passages:
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
                hits = self.session.search(document, query, limit=1)
            except AssayError:
                hits = []
            self._best[document, query] = hits[0].passage.citation_id if hits else None
        return self._best[document, query]

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def _on_search_entered(self) -> None:
        if self.session.state is not None:
            self.search_document(self.session.state.answer.document)

    def search_document(self, document: str) -> None:
        """List the passages of `document` that best match the search words, and open the best."""
        try:
            hits = self.session.search(document, self.search.text(), limit=15)
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
        name = html.escape(party.name or ("(name left blank in the contract)" if party.blank else "(name not read)"))
        short = [f"“{html.escape(n)}”" for n in party.short_names if n != party.role]
        said = ", ".join(short + ([html.escape(party.role)] if party.role else []))
        lines.append(
            f"<a href='{party.passage}' style='color:#1d3557; text-decoration:none'><b>{name}</b></a>"
            + (f" — {said}" if said else "")
        )
    return "<span style='color:#6b6b6b'>Parties</span><br>" + "<br>".join(lines)
