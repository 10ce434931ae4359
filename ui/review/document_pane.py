"""Which passages the document pane opens at: those the selected data point, or else the question, is about."""

from __future__ import annotations

from app.errors import AssayError
from app.project import Project
from app.review import ReviewPoint, ReviewState
from ui.review.document_view import ABOUT, DocumentView
from ui.item_models import short_question


def show_what_it_is_about(view: DocumentView, project: Project, state: ReviewState, point: ReviewPoint | None) -> None:
    """The point's first cited passage; else the passage that best matches its words (BM25), else the
    question's. A passage found by search is tinted apart from a cited one: no citation vouches for it."""
    if point is not None and point.citations and view.focus_passage(point.citations[0]):
        return
    for query in ([point.point.text] if point is not None else []) + [short_question(state.answer.question)]:
        try:
            hits = project.search(state.answer.document, query, limit=1)
        except AssayError:
            continue
        if hits and view.focus_passage(hits[0].passage.citation_id, ABOUT):
            return
