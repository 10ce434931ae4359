"""What a judge reads of an answer: the evidence chosen from its document (the whole document when it fits
the judge's context, else the passages the answer cites and the best matches for it), and the case built
from them. Judge runs (app/judging/runs.py), stress tests and benches read answers through here."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.errors import AssayError
from app.ingest.citations import find_citations
from app.judging.evidence import DocumentEvidence
from models.backends.base import JudgeBackend
from models.judge import JudgeCase, LemajJudge
from models.prompts import EvidencePassage, Strictness, evidence_text, one_pass_prompt
from models.rubrics import Rubric, RubricCase, RubricJudge
from models.segmentation import Segment, segment_answer
from models.vocabulary import PassageKind
from storage import answers, documents

GENERATION_RESERVE = 1200  # tokens kept free for the judge's reply and the task text
SCORE_PASSAGES = 6  # SCORE's leave-one-out costs a teacher-forced pass per passage: the most relevant few

AnyJudge = LemajJudge | RubricJudge


def select_evidence(
    session: Session,
    backend: JudgeBackend,
    passages: list[documents.Passage],
    question: str,
    answer: str,
    strictness: Strictness,
    points: list[Segment] | None = None,
) -> list[EvidencePassage]:
    """The whole document when it fits the context; otherwise the passages the answer cites, then the
    best BM25 passages for the question and for each of the answer's `points` (as stored with it; None:
    the text is segmented here, for a text no answer holds), in document order."""
    passages = _showable(passages)
    evidence = {p.citation_id: EvidencePassage(p.citation_id, p.section, p.text) for p in passages}
    frame = one_pass_prompt([], question, answer, strictness)
    budget = backend.context_tokens - GENERATION_RESERVE - sum(backend.count_tokens(m.text) for m in frame.messages)
    if budget <= 0:
        raise AssayError("the question and answer alone fill the judge's context: use a model with a larger one")
    everything = list(evidence.values())
    if backend.count_tokens(evidence_text(everything)) <= budget:
        return everything

    wanted: list[str] = []
    for citation in find_citations(answer, passages):
        wanted += citation.passages[:3]
    for query in [question] + [s.text for s in (points if points is not None else segment_answer(answer))]:
        hits = documents.search_passages(session, passages[0].document_id, query, 4)
        wanted += [hit.passage.citation_id for hit in hits]
    chosen: set[str] = set()
    used = 0
    for citation_id in dict.fromkeys(wanted):
        if citation_id not in evidence:
            continue
        cost = backend.count_tokens(evidence_text([evidence[citation_id]])) + 1
        if used + cost > budget:
            continue
        chosen.add(citation_id)
        used += cost
    return [p for p in everything if p.citation_id in chosen]


def is_whole_document(evidence: list[EvidencePassage], passages: list[documents.Passage]) -> bool:
    """Whether select_evidence gave the whole document (the same for every answer about it) rather
    than passages chosen for this answer."""
    return len(evidence) == len(_showable(passages))


def _showable(passages: list[documents.Passage]) -> list[documents.Passage]:
    """What a judge may be shown of a document: every passage but its table of contents."""
    return [p for p in passages if p.kind is not PassageKind.TOC]


def judge_case(
    session: Session, judge: AnyJudge, answer_id: str
) -> tuple[JudgeCase | RubricCase, list[documents.Passage]]:
    """What the judge reads of an answer (its question, text, points and the evidence chosen), and its
    document's passages. The points are the segmentation stored with the answer: one not stored yet is
    kept in the caller's transaction."""
    answer = answers.answer_detail(session, answer_id)
    assert answer is not None
    passages = documents.passages_of(session, answer.document_id)
    points = answers.segmentation(session, answer_id)
    strictness = judge.strictness if isinstance(judge, LemajJudge) else Strictness.STANDARD
    evidence = select_evidence(session, judge.backend, passages, answer.question, answer.text, strictness, points)
    if isinstance(judge, LemajJudge):
        known = frozenset(p.citation_id for p in passages)
        resolve = DocumentEvidence(passages).resolve
        whole = is_whole_document(evidence, passages)
        lemaj = JudgeCase(answer_id, answer.question, answer.text, evidence, known, resolve, whole, tuple(points))
        return lemaj, passages
    if judge.rubric is Rubric.SCORE:
        evidence = _most_relevant(session, passages, answer.question, answer.text)
    case = RubricCase(
        answer_id,
        answer.question,
        answer.text,
        evidence,
        answer.gold_answer,
        answer.gold_required,
        answer.gold_helpful,
        answer.generator,
    )
    return case, passages


def _most_relevant(
    session: Session, passages: list[documents.Passage], question: str, answer: str
) -> list[EvidencePassage]:
    """The passages the answer cites, then the best BM25 matches for the question."""
    wanted = [c for found in find_citations(answer, passages) for c in found.passages[:2]]
    if passages:
        wanted += [
            h.passage.citation_id for h in documents.search_passages(session, passages[0].document_id, question, 6)
        ]
    chosen = list(dict.fromkeys(wanted))[:SCORE_PASSAGES]
    return [EvidencePassage(p.citation_id, p.section, p.text) for p in passages if p.citation_id in chosen]
