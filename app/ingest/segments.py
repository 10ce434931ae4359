"""`assay segment`: the data points the deterministic segmentation makes of each answer, and how much
of the answers' text they cover, so that a reviewer can trust no assertion was left out."""

from __future__ import annotations

from typing import Any

from app.errors import AssayError
from app.project import Project
from models.segmentation import Segment, coverage
from storage import answers


def segment_report(project: Project, answer_id: str | None = None) -> dict[str, Any]:
    """Per answer: its points (offsets into the answer, with their lead-in's span) and its coverage;
    overall: the share of all the answers' letters and digits inside a point or its context. The points
    are those stored with each answer (segmented and stored now where the segmenter's version is new)."""
    ids = [answer_id] if answer_id is not None else [a.id for a in project.answers()]
    with project.sessions.begin() as session:
        segmented = answers.segmentations(session, ids)
    answers_out, covered, total = [], 0.0, 0
    for id_ in ids:
        answer = project.answer(id_)
        if answer is None or id_ not in segmented:
            raise AssayError(f"no answer with id {id_!r}")
        segments = segmented[id_]
        share = coverage(answer.text, segments)
        letters = sum(1 for ch in answer.text if ch.isalnum())
        covered, total = covered + share * letters, total + letters
        answers_out.append({"answer_id": id_, "points": [_point(s) for s in segments], "coverage": share})
    return {"answers": answers_out, "coverage": covered / total if total else 1.0}


def _point(s: Segment) -> dict[str, Any]:
    return {
        "start": s.start,
        "end": s.end,
        "text": s.text,
        "context_start": s.context_start,
        "context_end": s.context_end,
        "context": s.context,
    }
