"""Run the model-free verifier over a project's answers and keep its findings as a rater of its own.

Decision: the verifier is stored as a judge run named `verifier` (backend "verifier"), so that juries,
agreement figures and the review window use it like any judge. A flagged point is tagged `incorrect`
with its reason as the rationale and the claim checker's probability as its confidence; a `supported`
point — only where the checker's held-out precision for that word is at least 0.95 — is tagged
`correct` (confidence: one minus that probability); unconfirmed, needs-review and unverifiable points
are stored untagged: the verifier abstains there, and an answer with such a point is never cleared
(app/figures/scores.answer_verdict). The whole per-point report, with reasons, values compared,
normalisations and probabilities, is the run's raw output for the answer.

Each point is read twice: by the rules (models/verifier) and by the learned claim checker
(models/checker), which gives the calibrated probability that the document does not support it.
Measured on human-labelled real errors, the rules' "supported" was wrong on more than a third of the
wrong claims, so a point is called supported only where the checker's probability is below the
threshold at which that word was right at least 95 times in 100 on development data; otherwise it is
`unconfirmed`: the closest passage is shown as evidence, with no verdict.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.ingest.citations import CITATION, CitationIndex
from app.ingest.contract_terms import defined_terms
from app.judging.runs import open_run
from models.checker import Assessment, ClaimChecker, Evidence, shipped
from models.checker.encoder import Encoders, encoder_files, kernels, shipped_encoders
from models.checker.features import MIN_CONTENT_WORDS, _stems
from models.checker.ranking import PassageIndex
from models.evidence import is_evidence
from models.segmentation import segment_answer
from models.verifier import (
    INCORRECT,
    NEEDS_REVIEW,
    QUOTED,
    SUPPORTED,
    UNCONFIRMED,
    UNVERIFIABLE,
    VERSION,
    CitedRef,
    ClaimResult,
    Document,
    Reason,
    Source,
    verify_claim,
)
from models.verifier.checks.verbatim import verbatim_quote
from models.vocabulary import OutcomeStatus, PassageKind, Tag
from storage import answers, documents, judgements, raters

VERIFIER = "verifier"
SEARCH_HITS = 5


@dataclass
class PointReport:
    start: int
    end: int
    text: str
    verdict: str
    reasons: list[dict[str, Any]]
    passage: str | None
    summary: str
    probability: float | None = None  # the claim checker's: the document does not support the point
    contradiction: float | None = None  # of that, the probability that it says the opposite
    definitions: list[dict[str, str]] = field(default_factory=list)  # {"term", "passage"} the point relies on
    quote: dict[str, Any] | None = None  # the quotation confirmed word for word (verbatim.Quoted.as_dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "passage": self.passage,
            "probability": None if self.probability is None else round(self.probability, 4),
            "contradiction": None if self.contradiction is None else round(self.contradiction, 4),
            "definitions": self.definitions,
            "quote": self.quote,
        }


@dataclass
class AnswerReport:
    answer_id: str
    points: list[PointReport] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"answer_id": self.answer_id, "points": [p.as_dict() for p in self.points]}


class Verifier:
    """The verifier bound to a project: documents are prepared once and kept.

    `checker` is the learned claim checker (the shipped one by default); `rules_only` leaves it out and
    gives the verdicts of the rules alone, as before it existed, and `definitions=False` reads claims
    without the contract's defined terms (both for side-by-side measurement). In a contract, the passage
    shown for a claim is the one the evidence ranker finds by meaning (models/checker/ranking.py);
    `neural=False` shows the one found by words, as does a verifier whose encoder file is missing or
    altered, with `note` saying so."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        checker: ClaimChecker | None = None,
        *,
        rules_only: bool = False,
        definitions: bool = True,
        neural: bool = True,
    ) -> None:
        self.sessions = sessions
        self.encoders: Encoders | None = None
        self.note: str | None = None  # why the verifier reads words only, when it had to
        if not rules_only and neural:
            loaded = shipped_encoders()
            if isinstance(loaded, str):
                self.note = f"{loaded}; until then evidence is found by words only (BM25), not by meaning"
            else:
                self.encoders = loaded
        self.checker = None if rules_only else (checker or shipped())
        self.definitions = definitions
        self._documents: dict[int, tuple[Document, CitationIndex, Evidence]] = {}
        self._indexes: dict[int, PassageIndex] = {}
        self._defined: dict[int, dict[str, tuple[str, str]]] = {}  # document -> term (lower case) -> (term, passage)

    def document(self, session: Session, document_id: int) -> tuple[Document, CitationIndex, Evidence]:
        if document_id not in self._documents:
            passages = documents.passages_of(session, document_id)
            sources = [Source(p.citation_id, p.text) for p in passages]
            terms = defined_terms(passages) if self.definitions else []  # read claims with their definitions
            evidence = Evidence.of([(p.citation_id, p.text) for p in passages], {t.term: t.definition for t in terms})
            self._defined[document_id] = {t.term.lower(): (t.term, t.passage) for t in terms}
            self._documents[document_id] = (Document(sources), CitationIndex(passages), evidence)
            shown = [p for p in passages if p.kind is not PassageKind.TOC and is_evidence(p.text)]
            self._indexes[document_id] = PassageIndex(
                [p.citation_id for p in shown], [p.text for p in shown], self.encoders
            )
        return self._documents[document_id]

    def check(
        self, session: Session, document_id: int, text: str, spans: list[tuple[int, int]], question: str = ""
    ) -> list[PointReport]:
        """Verify the given spans of an answer text (to `question`: a summary is checked as one)."""
        document, index, evidence = self.document(session, document_id)
        results = []
        for start, end in spans:
            claim = text[start:end]
            cited = []
            for m in CITATION.finditer(claim):
                kind = next(name for name, value in m.groupdict().items() if value)
                cited.append(CitedRef(m.group(0), m.start(), m.end(), index.resolve_whole(kind, m.group(kind))))
            results.append(verify_claim(claim, document, document.search(claim, SEARCH_HITS), cited))
        if self.checker is None:
            return [quoted(_report(s, e, text[s:e], r), document) for (s, e), r in zip(spans, results, strict=True)]
        claims = [(text[s:e], r.verdict) for (s, e), r in zip(spans, results, strict=True)]
        assessed = self.checker.assess_many(claims, evidence, question)
        found: list[str | None] = [None] * len(claims)
        by_meaning: set[int] = set()  # the claims the contract checker decided
        if self.encoders is not None and evidence.kind == "contract":  # measured on contracts only
            passages = self._indexes[document_id]
            wanted = [i for i, (c, _) in enumerate(claims) if len(set(_stems(c))) >= MIN_CONTENT_WORDS]
            ranked = passages.rank([claims[i][0] for i in wanted], self.encoders.ranker, self.encoders.memory)
            for i, r in zip(wanted, ranked, strict=True):
                found[i] = r.ids[0] if r.ids else None
            read = [(i, r.meaning) for i, r in zip(wanted, ranked, strict=True) if r.meaning]
            read = [(i, x) for i, x in read if assessed[i] is not None]
            if read and self.checker is shipped():  # the contract checker reads what the encoders say
                again = self.encoders.checker.assess_meaning(
                    [claims[i][0] for i, _ in read], [x for _, x in read], [assessed[i] for i, _ in read]
                )
                for (i, _), a in zip(read, again, strict=True):
                    assessed[i] = a
                by_meaning = {i for i, _ in read}
        stand = [
            i not in by_meaning and a is not None and a.kind in self.checker.rules_stand for i, a in enumerate(assessed)
        ]
        reports = [
            _decided(s, e, text[s:e], r, a, document, f, rules_flag=rule_stands, rules_object=i not in by_meaning)
            for i, ((s, e), r, a, f, rule_stands) in enumerate(zip(spans, results, assessed, found, stand, strict=True))
        ]
        reports = [quoted(report, document) for report in reports]
        defined = self._defined[document_id]
        for report in reports:  # the definitions the checker read the point with, as its evidence too
            used = [defined[t] for t in evidence.defined_in(report.text)]
            report.definitions = [{"term": term, "passage": passage} for term, passage in used]
        return reports

    def verify_answer(self, session: Session, answer_id: str, text: str | None = None) -> AnswerReport:
        answer = answers.answer_detail(session, answer_id)
        assert answer is not None
        text = answer.text if text is None else text
        spans = [(s.start, s.end) for s in segment_answer(text)]
        return AnswerReport(answer_id, self.check(session, answer.document_id, text, spans, answer.question))


def reader_note() -> str | None:
    """Why the default verifier finds evidence by words only (a model file missing or altered), or None."""
    loaded = shipped_encoders()
    return loaded if isinstance(loaded, str) else None


def _report(start: int, end: int, claim: str, result: ClaimResult) -> PointReport:
    return PointReport(
        start, end, claim, result.verdict, [r.as_dict() for r in result.reasons], result.passage, result.summary
    )


def _decided(
    start: int,
    end: int,
    claim: str,
    result: ClaimResult,
    assessed: Assessment | None,
    document: Document,
    by_meaning: str | None = None,
    *,
    rules_flag: bool = True,
    rules_object: bool = True,
) -> PointReport:
    """One verdict from the rules and the checker: a rule's flag stands (`rules_flag`); else the checker
    flags; a rule's "needs review" stands; "supported" only where the checker is sure enough and no rule
    objects (`rules_object`); else the passage found is evidence, with no verdict ("unconfirmed"), and a
    rule's objection is shown as its reason. A rule's flag does not stand where the contract checker
    decides, nor outside contracts (the claim checker's `rules_stand`): there the rules alone find errors
    at F1 0.04 (ContractNLI's NDAs) and 0.28 (RAGTruth's answers; bench/real_errors.py), and the checker
    that decides weighs their outcome or was measured without it. Outside contracts a rule's flag still
    objects: a lawyer skips reading what is "supported", so not where a rule read "2 hours" against the
    passage's "1 hour". Where the contract checker decides it does not: on contractnli-dev the rules
    objected to 21 of its 267 confirmations, and what it confirmed was right less often without them
    (0.98, not 0.99)."""
    if assessed is None:  # no word to check ("Yes."): the rules' flag or nothing
        verdict = result.verdict if result.verdict in (INCORRECT, NEEDS_REVIEW) else UNVERIFIABLE
        return _report(start, end, claim, ClaimResult(verdict, result.reasons, result.passage, result.checked))
    p, contradiction = assessed.p_unsupported, assessed.p_contradicted
    # the passage the ranker found by meaning, where it read the claim; else the one the rules matched
    passage = by_meaning or result.passage or assessed.passage
    if (result.verdict == INCORRECT and rules_flag) or result.verdict == NEEDS_REVIEW:
        decided = result
    elif assessed.flagged:
        check = "contradicted" if contradiction >= 0.5 else "unsupported"
        said = document.by_id[passage].text if passage in document.by_id else ""
        reason = Reason(check, claim.strip()[:200], said[:300], passage)
        decided = ClaimResult(INCORRECT, [reason], passage, result.checked)
    elif assessed.supported and not (result.verdict == INCORRECT and rules_object):
        decided = ClaimResult(SUPPORTED, [], passage, result.checked or ["the claim's words are in the passage"])
    else:
        decided = ClaimResult(UNCONFIRMED, result.reasons, passage, result.checked)
    report = _report(start, end, claim, decided)
    report.probability, report.contradiction = p, contradiction
    if decided.verdict == INCORRECT and not result.reasons:
        how = "contradicts" if contradiction >= 0.5 else "does not support"
        report.summary = f"claim checker: the document {how} this (probability {p:.2f}); closest passage {passage}"
    return report


# A rule's objection that a verbatim quote does not answer: the quotation's words are right, where they
# are said to come from is not.
_ABOUT_THE_ATTRIBUTION = ("bad_citation", "misquote")


def quoted(report: PointReport, document: Document) -> PointReport:
    """A point that quotes its document word for word is confirmed as quoted (models/verifier/checks/
    verbatim.py): the quotation checked, what the answer draws from it (`quote["rest"]`) not. A point that
    is only a quotation and where it comes from is never flagged but for its attribution; one that also
    claims something of its own keeps a flag on it, with its quotation confirmed beside the flag."""
    found = verbatim_quote(report.text, document)
    if found is None:
        return report
    report.quote = found.as_dict()
    about_its_own_claim = [r for r in report.reasons if r.get("check") not in _ABOUT_THE_ATTRIBUTION]
    if report.verdict == INCORRECT and about_its_own_claim and found.rest:
        return report  # the flag is on what the point says besides its quotation
    notes = [r for r in report.reasons if r.get("check") in _ABOUT_THE_ATTRIBUTION]
    report.verdict, report.passage, report.reasons = QUOTED, found.passage, notes
    report.summary = f"quotation found word for word in {found.passage}" + (
        f"; not checked: {found.rest[:160]}" if found.rest else ""
    )
    return report


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
    if verifier.note:  # never a silent change: say once that evidence is found by words only, and why
        logging.getLogger(__name__).warning(verifier.note)
    with sessions() as session:
        ids = answer_ids if answer_ids is not None else [a.id for a in answers.list_answers(session)]
        missing = [a for a in ids if not answers.answer_exists(session, a)]
    if missing:
        from app.errors import InvalidInput

        raise InvalidInput("--answers", f"no answer with id {', '.join(missing)}")
    rater_id = open_run(sessions, VERIFIER, {"backend": "verifier", "version": VERSION}, VERIFIER) if save else None
    # which files and kernels made each answer's findings: a project moves between laptops
    made_by = {"encoders": encoder_files(), "kernels": kernels()} if verifier.encoders is not None else {}
    reports = []
    for done, answer_id in enumerate(ids, start=1):
        with sessions() as session:
            report = verifier.verify_answer(session, answer_id)
        reports.append(report)
        if rater_id is not None:
            with sessions.begin() as session:
                _save(session, rater_id, report, made_by)
        on_progress(done, len(ids))
    return reports


def _save(session: Session, rater_id: int, report: AnswerReport, made_by: dict[str, Any]) -> None:
    answer = answers.answer_detail(session, report.answer_id)
    assert answer is not None
    ids = documents.passage_ids_by_citation(session, answer.document_id)
    # each point with its lead-in, as the segmentation read it: a lead-in is context, never uncovered text
    lead_ins = {(s.start, s.end): (s.context_start, s.context_end) for s in segment_answer(answer.text)}
    points = [
        judgements.NewDataPoint(
            text=p.text,
            span_start=p.start,
            span_end=p.end,
            tag=_tag(p),
            confidence=_confidence(p),
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


def _tag(point: PointReport) -> Tag | None:
    """A flag is `incorrect`; "supported" is `correct` only where the checker confirmed it (the rules'
    own "supported", without the checker, was wrong too often); everything else abstains."""
    if point.verdict == INCORRECT:
        return Tag.INCORRECT
    if point.verdict == QUOTED:  # the document's own words, and nothing else said: correct as quoted
        return Tag.CORRECT if point.quote and not point.quote.get("rest") and not point.reasons else None
    return Tag.CORRECT if point.verdict == SUPPORTED and point.probability is not None else None


def _confidence(point: PointReport) -> float | None:
    """The checker's probability of the tag it gave (None where a rule decided without it)."""
    if point.probability is None or _tag(point) is None or point.verdict == QUOTED:  # a rule decided that
        return None
    return point.probability if point.verdict == INCORRECT else 1 - point.probability


def stored_report(session: Session, answer_id: str) -> AnswerReport | None:
    """The verifier's last findings on an answer, with every reason, as stored."""
    rater = raters.rater_named(session, VERIFIER)
    if rater is None:
        return None
    outcome = judgements.judge_outcomes(session, rater.id).get(answer_id)
    if outcome is None or not outcome.raw_output:
        return None
    data = json.loads(outcome.raw_output)
    points = [
        PointReport(
            p["start"],
            p["end"],
            p["text"],
            p["verdict"],
            p["reasons"],
            p.get("passage"),
            "",
            p.get("probability"),
            p.get("contradiction"),
            p.get("definitions", []),
            p.get("quote"),
        )
        for p in data["points"]
    ]
    return AnswerReport(answer_id, points)


def findings(sessions: sessionmaker[Session], answer_id: str, verifier: Verifier | None = None) -> AnswerReport:
    """The verifier's findings on an answer for the review window: as stored by the last `verify`, else
    checked now (seconds at most, nothing stored) by `verifier`, which keeps the documents it prepared."""
    with sessions() as session:
        stored = stored_report(session, answer_id)
        if stored is not None:
            return stored
        return (verifier or Verifier(sessions)).verify_answer(session, answer_id)


def all_findings(sessions: sessionmaker[Session], answer_ids: list[str]) -> dict[str, AnswerReport]:
    """The verifier's findings on these answers: as stored by the last `verify`, else checked now."""
    verifier, out = Verifier(sessions), {}
    with sessions() as session:
        for answer_id in dict.fromkeys(answer_ids):
            out[answer_id] = stored_report(session, answer_id) or verifier.verify_answer(session, answer_id)
    return out


def finding_at(report: AnswerReport | None, start: int | None, end: int | None) -> PointReport | None:
    """The verifier's point that covers most of the span start:end (a rater may split points differently)."""
    if report is None or start is None or end is None:
        return None
    overlap = [(min(end, p.end) - max(start, p.start), p) for p in report.points]
    best = max(overlap, key=lambda o: o[0], default=None)
    if best is None or best[0] <= 0.5 * min(end - start, best[1].end - best[1].start):
        return None
    return best[1]


VERDICT_WORDS = {
    QUOTED: "quoted word for word: the quotation is checked, what the answer draws from it is not",
    SUPPORTED: "found in the document",
    UNCONFIRMED: "not confirmed: the closest passage is evidence, not a verdict",
    INCORRECT: "flagged",
    NEEDS_REVIEW: "needs review",
    UNVERIFIABLE: "nothing in the document to check this against",
}


def verdict_text(point: PointReport) -> str:
    """The verdict in a lawyer's words, with its passage and the claim checker's probability:
    "not confirmed: the closest passage is evidence, not a verdict (par_12; unsupported 0.34)"."""
    details = [point.passage] if point.passage else []
    if point.probability is not None:
        details.append(f"unsupported {point.probability:.2f}")
    words = VERDICT_WORDS.get(point.verdict, point.verdict)
    return words + (f" ({'; '.join(details)})" if details else "")


def reasons_text(point: PointReport | None) -> str:
    """The reasons of a verdict in one line: "value_mismatch: the answer says '30 days', the document
    'sixty (60) days' (par_12)"."""
    if point is None:
        return ""
    return "; ".join(
        f"{r['check']}: the answer says '{r['claim']}', the document '{str(r['document'])[:160]}'"
        + (f" ({r['passage']})" if r.get("passage") else "")
        for r in point.reasons
    )


def with_verifier_columns(sessions: sessionmaker[Session], points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Export rows with the verifier's verdict on each point and its reasons (empty for a missing point)."""
    reports = all_findings(sessions, [p["answer_id"] for p in points])
    for p in points:
        found = finding_at(reports.get(p["answer_id"]), p.get("span_start"), p.get("span_end"))
        p["verifier_verdict"] = found.verdict if found else ""
        p["verifier_probability"] = found.probability if found else None
        p["verifier_reasons"] = reasons_text(found) or (verdict_text(found) if found else "")
    return points
