"""Run the claim checker (models/checker/engine.py) over a project's answers and keep its findings as a
rater of its own: a judge run named `verifier`, which juries, agreement figures and the review window use
like any judge. A flagged point is tagged `incorrect` (its reason the rationale, the checker's probability
the confidence), a confirmed one `correct`; the checker abstains on the rest, and an answer with such a
point is never cleared (app/figures/scores.answer_verdict). The whole report of each answer, with the
encoder files and kernels that made it, is kept as the run's raw output.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker

from app.errors import InvalidInput
from app.ingest.citations import CITATION, CitationIndex
from app.ingest.contract_terms import defined_terms
from app.judging.fitted import speaker
from app.judging.runs import open_run
from models.checker import ClaimChecker
from models.checker.encoder import encoder_files, kernels
from models.checker.engine import ClaimEngine, Definition, Passage, PreparedDocument
from models.checker.report import AnswerReport, PointReport, confidence_of, tag_of
from models.checker.statements import OPENING
from models.segmentation import segment_answer
from models.verifier import VERSION, CitedRef
from models.vocabulary import OutcomeStatus, PassageKind
from storage import answers, documents, judgements, raters

VERIFIER = "verifier"


class Verifier:
    """The claim checker bound to a project: each document is read from the project and prepared once.

    `checker`, `rules_only` and `neural` choose the engine (models/checker/engine.ClaimEngine: the
    shipped one by default, parts of it for side-by-side measurement); `definitions=False` reads claims
    without the contract's defined terms."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        checker: ClaimChecker | None = None,
        *,
        rules_only: bool = False,
        definitions: bool = True,
        neural: bool = True,
        learned: bool = True,
    ) -> None:
        self.sessions = sessions
        self.engine = ClaimEngine(checker, rules_only=rules_only, neural=neural)
        self.definitions = definitions
        self._documents: dict[int, tuple[PreparedDocument, CitationIndex]] = {}
        # `learned`: the checker fitted to a matter's (or the project's) reviews speaks for it where one was
        # adopted (app/judging/fitted.py); `spoke` names the checker that checked the last answer
        self.learned = learned and checker is None and not rules_only
        self.speakers: dict[int | None, tuple[ClaimEngine, str]] = {}
        self.spoke = "shipped"

    def document(self, session: Session, document_id: int) -> tuple[PreparedDocument, CitationIndex]:
        if document_id not in self._documents:
            passages = documents.passages_of(session, document_id)
            terms = defined_terms(passages) if self.definitions else []  # read claims with their definitions
            prepared = self.engine.prepare(
                [Passage(p.citation_id, p.text, p.kind is PassageKind.TOC, p.heading_path) for p in passages],
                [Definition(t.term, t.definition, t.passage) for t in terms],
                documents.document_opening(session, document_id, OPENING),
            )
            kept = documents.readings(session, document_id) if self.engine.encoders is not None else None
            if kept is not None:  # read whole at import (`read_contracts`): no claim embeds it again
                self.engine.read_kept(prepared, kept)
            self._documents[document_id] = (prepared, CitationIndex(passages))
        return self._documents[document_id]

    def check(
        self, session: Session, document_id: int, text: str, spans: list[tuple[int, int]], question: str = ""
    ) -> list[PointReport]:
        """Check the given spans of an answer text (to `question`: a summary is checked as one)."""
        prepared, index = self.document(session, document_id)
        cited = [_cited(text[s:e], index) for s, e in spans]
        engine = self.engine
        if self.learned:
            engine, self.spoke = speaker(self.engine, self.speakers, session, document_id)
        return engine.assess(prepared, text, spans, cited, question)

    def verify_answer(self, session: Session, answer_id: str, text: str | None = None) -> AnswerReport:
        """Check the answer's points as stored with it (storage/answers.segmentations), or those of
        `text` in its place (the paired stress test changes answers)."""
        answer = answers.answer_detail(session, answer_id)
        assert answer is not None
        segments = answers.segmentation(session, answer_id, keep=False) if text is None else segment_answer(text)
        text = answer.text if text is None else text
        spans = [(s.start, s.end) for s in segments]
        return AnswerReport(answer_id, self.check(session, answer.document_id, text, spans, answer.question))


def read_contracts(
    sessions: sessionmaker[Session],
    document_ids: list[int] | None = None,
    *,
    verifier: Verifier | None = None,
    on_progress: Callable[[int, int], None] = lambda _d, _t: None,
) -> int:
    """Read each of these documents (all by default) that has nothing kept yet whole with the claim checker's
    encoders, and keep what they read with it (storage/documents.readings), each in its own transaction: imported
    contracts are read once, not on the first claim about each, which was the slowest check of a contract (a merger
    agreement's 800 sentences, 3 s on two cores). How many were kept. Without the encoders nothing is read; a login
    the database does not let write documents leaves them to be read on their first check, as before."""
    verifier = verifier or Verifier(sessions)
    if verifier.engine.encoders is None:
        return 0
    with sessions() as session:
        wanted = documents.unread(session, document_ids)
    kept = 0
    for done, document_id in enumerate(wanted, start=1):
        with sessions() as session:
            prepared, _ = verifier.document(session, document_id)
        read = verifier.engine.read_whole(prepared)
        assert read is not None  # the encoders are there
        try:
            with sessions.begin() as session:
                documents.keep_readings(session, document_id, read)
            kept += 1
        except DBAPIError as exc:  # e.g. PostgreSQL's "permission denied" to a reviewer's login
            logging.getLogger(__name__).warning("document %s is read on its first check: %s", document_id, exc.orig)
        on_progress(done, len(wanted))
    return kept


def _cited(claim: str, index: CitationIndex) -> list[CitedRef]:
    """The citations a claim makes ("Section 3.2", "par_14"), each with the passages it resolves to."""
    refs = []
    for m in CITATION.finditer(claim):
        kind = next(name for name, value in m.groupdict().items() if value)
        refs.append(CitedRef(m.group(0), m.start(), m.end(), index.resolve_whole(kind, m.group(kind))))
    return refs


def verify_project(
    sessions: sessionmaker[Session],
    answer_ids: list[str] | None = None,
    *,
    save: bool = True,
    on_progress: Callable[[int, int], None] = lambda _d, _t: None,
    verifier: Verifier | None = None,
) -> list[AnswerReport]:
    """Verify the answers (all by default) and, with `save`, store the findings as the verifier run;
    `verifier` another than the shipped one (rules only, a checker trained elsewhere) for measurement."""
    verifier = verifier or Verifier(sessions)
    if verifier.engine.note:  # never a silent change: say once that evidence is found by words only, and why
        logging.getLogger(__name__).warning(verifier.engine.note)
    with sessions() as session:
        ids = answer_ids if answer_ids is not None else [a.id for a in answers.list_answers(session)]
        missing = [a for a in ids if not answers.answer_exists(session, a)]
    if missing:
        raise InvalidInput("--answers", f"no answer with id {', '.join(missing)}")
    rater_id = open_run(sessions, VERIFIER, {"backend": "verifier", "version": VERSION}, VERIFIER) if save else None
    # which files and kernels made each answer's findings: a project moves between laptops
    made_by = {"encoders": encoder_files(), "kernels": kernels()} if verifier.engine.encoders else {}
    for at in range(0, len(ids), 500):  # segmented once, stored: the check and the save read it
        with sessions.begin() as session:
            answers.segmentations(session, ids[at : at + 500])
    reports = []
    for done, answer_id in enumerate(ids, start=1):
        with sessions() as session:
            report = verifier.verify_answer(session, answer_id)
        reports.append(report)
        if rater_id is not None:
            with sessions.begin() as session:
                _save(session, rater_id, report, made_by | {"checker": verifier.spoke})
        on_progress(done, len(ids))
    return reports


def _save(session: Session, rater_id: int, report: AnswerReport, made_by: dict[str, Any]) -> None:
    answer = answers.answer_detail(session, report.answer_id)
    assert answer is not None
    ids = documents.passage_ids_by_citation(session, answer.document_id)
    # each point with its lead-in, as the segmentation read it: a lead-in is context, never uncovered text
    lead_ins = {(s.start, s.end): (s.context_start, s.context_end) for s in answers.segmentation(session, answer.id)}
    points = [
        judgements.NewDataPoint(
            text=p.text,
            span_start=p.start,
            span_end=p.end,
            tag=tag_of(p),
            confidence=confidence_of(p),
            rationale=f"verifier {p.verdict}: {p.summary}",
            passage_ids=tuple(ids[c] for c in [p.passage] if c in ids),
            unverified_citations=(),
            context_start=lead_ins.get((p.start, p.end), (None, None))[0],
            context_end=lead_ins.get((p.start, p.end), (None, None))[1],
        )
        for p in report.points
    ]
    outcome = judgements.JudgeOutcome(
        status=OutcomeStatus.JUDGED,
        attempts=1,
        error=None,
        raw_output=json.dumps(report.as_dict() | ({"made_by": made_by} if made_by else {})),
        passages_seen=tuple(p.passage for p in report.points if p.passage),
        prompt_tokens=0,
        completion_tokens=0,
        seconds=0.0,
    )
    judgements.save_judgement(session, rater_id, report.answer_id, points, outcome, VERIFIER)


def stored_report(session: Session, answer_id: str) -> AnswerReport | None:
    """The verifier's last findings on an answer, with every reason, as stored."""
    rater = raters.rater_named(session, VERIFIER)
    if rater is None:
        return None
    outcome = judgements.judge_outcomes(session, rater.id).get(answer_id)
    if outcome is None or not outcome.raw_output:
        return None
    data = json.loads(outcome.raw_output)
    points = [PointReport.from_dict(p) for p in data["points"]]
    return AnswerReport(answer_id, points)


def claim_checker(sessions: sessionmaker[Session]) -> Callable[[str], AnswerReport]:
    """An answer's findings as stored by the last `verify`, else checked now (no findings stored) by one Verifier,
    made when first needed (it loads the checker) and kept, so that each document is prepared once."""
    made: list[Verifier] = []

    def claims(answer_id: str) -> AnswerReport:
        with sessions() as session:
            stored = stored_report(session, answer_id)
        if stored is not None:
            return stored
        with sessions() as session:  # read only: a write here would hide another process's saves from the window
            if not made:
                made.append(Verifier(sessions))
            return made[0].verify_answer(session, answer_id)

    return claims


def all_findings(sessions: sessionmaker[Session], answer_ids: list[str]) -> dict[str, AnswerReport]:
    """The verifier's findings on these answers: as stored by the last `verify`, else checked now."""
    claims = claim_checker(sessions)
    return {answer_id: claims(answer_id) for answer_id in dict.fromkeys(answer_ids)}
