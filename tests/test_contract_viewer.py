"""The contract as a lawyer reads it, in the window: defined terms marked where they are used (the
definition on hover, a click to where it is defined), cross-references as links to what they resolve
to or greyed when the contract has no such part, the answer's own uses of the terms, the parties card."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QTextBrowser

from app.ingest.contract_terms import contract_reading
from app.ingest.datasets import import_dataset
from app.project import Project
from app.workspace import Workspace
from ui.review.window import ReviewWindow

CONTRACT = """\
# MUTUAL NON-DISCLOSURE AGREEMENT

This Agreement is made between ACME CORP., a Delaware corporation ("Acme" or the "Disclosing Party"), \
and Beta Labs LLC (hereinafter "Recipient") (each, a "Party").

## 1. Definitions

1.1 "Confidential Information" means all information the Disclosing Party discloses under this Agreement.

## 4. Obligations

4.1 The Recipient shall keep the Confidential Information secret for two years.

4.2 The duty in Section 4.1 survives termination, save as set out in Section 7.3(a).
"""
ANSWER = "The Recipient must keep the Confidential Information secret for two years (Section 4.1)."


@pytest.fixture
def window(qtbot, project: Project, tmp_path: Path) -> ReviewWindow:
    dataset = tmp_path / "dataset"
    (dataset / "documents").mkdir(parents=True)
    (dataset / "documents" / "nda.md").write_text(CONTRACT, encoding="utf-8")
    row = {"id": "nda-1", "document": "nda.md", "question": "How long is the information kept secret?"}
    (dataset / "qa.jsonl").write_text(json.dumps(row | {"answer": ANSWER}) + "\n", encoding="utf-8")
    import_dataset(project.sessions, dataset)
    window = ReviewWindow(Workspace(project), "ana")
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    window.open_answer("nda-1")
    return window


def _marks(view: QTextBrowser) -> Iterator[tuple[str, QTextCharFormat, int]]:
    """Each run of text shown with one format: its text, format and position."""
    block = view.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            yield fragment.text(), fragment.charFormat(), fragment.position()
            it += 1
        block = block.next()


def _mark(view: QTextBrowser, text: str, href_prefix: str = "") -> tuple[QTextCharFormat, int]:
    found = [(f, at) for t, f, at in _marks(view) if t == text and f.anchorHref().startswith(href_prefix)]
    assert found, f"{text!r} is not marked"
    return found[0]


def _click(qtbot, view: QTextBrowser, position: int) -> None:
    """Click the middle of the character after `position`, as a reviewer would."""
    cursor = QTextCursor(view.document())
    cursor.setPosition(position + 1)
    view.setTextCursor(cursor)
    view.ensureCursorVisible()
    rect = view.cursorRect(cursor)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _passage_id(project: Project, starts: str) -> str:
    passages = project.passages(project.answer("nda-1").document_id)
    return next(p.citation_id for p in passages if p.text.startswith(starts))


def test_a_defined_term_is_marked_with_its_definition_and_leads_to_it(qtbot, window: ReviewWindow, project) -> None:
    view = window.document_pane.view
    defining = _passage_id(project, "1.1")
    fmt, at = _mark(view, "Confidential Information", "term:")
    assert fmt.anchorHref() == f"term:{defining}"
    assert fmt.underlineStyle() == QTextCharFormat.UnderlineStyle.DotLine
    assert "means all information the Disclosing Party discloses under this Agreement." in fmt.toolTip()
    assert "Confidential Information" in fmt.toolTip()
    _click(qtbot, view, at)
    assert view.focused == defining  # scrolled to and highlighted, as a citation link does


def test_cross_references_link_to_their_passage_or_are_marked_unresolved(qtbot, window: ReviewWindow, project) -> None:
    view = window.document_pane.view
    fmt, at = _mark(view, "Section 4.1", "ref:")
    target = _passage_id(project, "4.1")
    assert fmt.anchorHref() == f"ref:{target}"
    _click(qtbot, view, at)
    assert view.focused == target
    unresolved, _ = _mark(view, "Section 7.3(a)")
    assert not unresolved.isAnchor()  # never guessed: no link
    assert unresolved.toolTip() == "Section 7.3(a): not found in this document"
    assert unresolved.foreground().color().name() == "#8a8a8a"


def test_the_answer_marks_the_terms_its_document_defines(qtbot, window: ReviewWindow, project) -> None:
    answer = window.answer_pane.answer_view
    fmt, at = _mark(answer, "Confidential Information", "term:")
    defining = _passage_id(project, "1.1")
    assert fmt.anchorHref() == f"term:{defining}"
    assert "means all information" in fmt.toolTip()
    _click(qtbot, answer, at)
    assert window.document_pane.view.focused == defining


def test_the_parties_card_names_each_party_with_its_short_names_and_role(window: ReviewWindow) -> None:
    card = window.document_pane.parties
    assert card.isVisible()
    text = card.text()
    assert "ACME CORP." in text and "“Acme”" in text and "Disclosing Party" in text
    assert "Beta Labs LLC</b></a> — Recipient" in text  # its one short name is its role


def test_the_reading_is_computed_once_per_document(window: ReviewWindow, project: Project) -> None:
    document_id = project.answer("nda-1").document_id
    assert contract_reading(project, document_id) is window.session.reading
    assert contract_reading(project, "nda") is window.session.reading
