"""The points a reviewer's review of an answer starts from, made the first time they open it (and again
when a judge run gives an untouched copy its points): the judge's, else the answer's own sentences."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.ingest.citations import find_citations
from app.review import edits
from models.segmentation import Segment
from storage import answers, documents, judgements, reviews
from storage.answers import AnswerDetail
from storage.documents import Passage
from storage.reviews import PointSnapshot


def starting_points(session: Session, answer: AnswerDetail, judge_rater: int | None) -> list[PointSnapshot]:
    """The points a reviewer's copy of an answer starts from: those of the judge run whose tags the answer
    shows (`judge_rater` preferred), with its evidence; else the answer's sentences."""
    judge = reviews.reference_judge(session, answer.id, judge_rater)
    if judge is not None:
        ids = documents.passage_ids_by_citation(session, answer.document_id)
        # A judge that kept no lead-in (the claim checker's runs before issue 56): the segmentation's, for
        # the same span, so that a lead-in never reads as text in no data point.
        lead_ins: dict[tuple[int, int | None], tuple[int | None, int | None]] = {
            (s.start, s.end): (s.context_start, s.context_end)
            for s in answers.segmentation(session, answer.id, keep=False)
        }
        return [
            edits.new_point(
                ordinal=p.ordinal,
                text=p.text,
                span_start=p.span_start,
                span_end=p.span_end,
                source_id=p.id,
                evidence_ids=tuple(
                    ids[c] for c in p.citations if c in ids
                ),  # the judge's, best first: not the reviewer's
                context_start=p.context_start if p.context_start is not None else context[0],
                context_end=p.context_end if p.context_start is not None else context[1],
            )
            for p in judgements.data_points_of(session, answer.id, judge)
            if p.span_start is not None  # the judge's missing points are its claims, not the answer's
            for context in [lead_ins.get((p.span_start, p.span_end), (None, None))]
        ]
    return segmented(
        answer, documents.passages_of(session, answer.document_id), answers.segmentation(session, answer.id, keep=False)
    )


def segmented(answer: AnswerDetail, passages: list[Passage], segments: list[Segment]) -> list[PointSnapshot]:
    """The answer's sentences as points (its segmentation, as stored with it), each with the passages it
    names: the answer's citations, shown beside the point, not the reviewer's."""
    return [
        edits.new_point(
            ordinal=i,
            text=s.text,
            span_start=s.start,
            span_end=s.end,
            evidence_ids=cited_passages(s.text, passages),
            context_start=s.context_start,
            context_end=s.context_end,
        )
        for i, s in enumerate(segments)
    ] or [edits.new_point(text=answer.text, span_start=0, span_end=len(answer.text))]


def cited_passages(text: str, passages: list[Passage]) -> tuple[int, ...]:
    """The ids of the passages a text names (the first three of each citation it makes)."""
    ids = {p.citation_id: p.id for p in passages}
    return tuple(sorted({ids[c] for found in find_citations(text, passages) for c in found.passages[:3]}))
