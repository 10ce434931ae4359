"""How each reader of a claim changes what the engine reports of its point (models/checker/report.py): the kind
of clause it names, there or not (`kind_reading`) or only shown (`clause_like_shown`); a clause no reader knows,
read against other contracts (`never_made`); the NDA statement it makes (`statement_read`); a quotation found word
for word (`quoted`); and the one line that says the claim checker's own flag (`checker_flag`). The engine
(models/checker/engine.py) decides which reader speaks for which point, and in what order."""

from __future__ import annotations

from models.checker.kinds import KindReading
from models.checker.reference import Reading, Reference, as_said
from models.checker.report import VERDICT_WORDS, PointReport, report_of
from models.checker.statements import Recognised
from models.verifier import INCORRECT, NEEDS_REVIEW, QUOTED, SUPPORTED, UNCONFIRMED, ClaimResult, Document, Reason
from models.verifier.checks.verbatim import Quoted


def checker_flag(point: PointReport) -> str:
    """The one line that says the claim checker's own flag on a point: what it read, and the passage shown."""
    how = "contradicts" if (point.contradiction or 0.0) >= 0.5 else "does not support"
    probability = f"probability {point.probability:.2f}"
    return f"claim checker: the document {how} this ({probability}); closest passage {point.passage}"


def kind_reading(point: PointReport, reading: KindReading, document: Document) -> PointReport:
    """A claim that a kind of clause is there or not is decided by what the contract's clauses are
    (models/checker/kinds.py): "supported" citing the clause of that kind, or flagged as never made ("no
    clause of this kind in the contract"), or contradicted where it denies a clause the contract has. It
    stands over the models' verdict, not over a rule's flag, a quotation or the contract's values read. Where
    it gives no verdict, a point left unconfirmed shows the passage most like such a clause as its evidence
    (held out on CUAD it was the experts' clause more often than the ranker's first passage)."""
    if not reading.verdict:
        if point.verdict == UNCONFIRMED and reading.best and reading.best != point.passage:
            return _shown_first(point, reading.best, reading.name)
        return point
    # A clause's "except ..." (the rules' exception check) makes it no less a clause of its kind: that doubt
    # does not stand over the kind reading; every other rule's does
    doubts = [r.get("check") for r in point.reasons]
    by_a_rule = (point.verdict == NEEDS_REVIEW and doubts != ["exception"]) or (
        point.verdict == INCORRECT and any(c not in ("unsupported", "contradicted") for c in doubts)
    )
    if by_a_rule or point.reading.startswith("the contract's values"):
        return point
    claim, cited, shown = point.text.strip()[:200], reading.passage, reading.passage or reading.best or point.passage
    if reading.verdict == "supported":
        decided = ClaimResult(SUPPORTED, [], shown, [reading.words])
    else:
        said = document.by_id[cited].text[:300] if cited in document.by_id else "no clause of this kind in the contract"
        decided = ClaimResult(INCORRECT, [Reason(reading.verdict, claim, said, cited)], shown)
    report = report_of(point.start, point.end, point.text, decided)
    # the probability that the contract does not hold the claim: of the clause there, for a claim denying one
    report.probability = reading.present if reading.negated else 1 - reading.present
    report.contradiction = 1.0 if reading.verdict == "contradicted" else 0.0
    report.reading = reading.words
    return report


def clause_like_shown(point: PointReport, passage: str, kind: str) -> PointReport:
    """A point whose verdict cites no clause of its own (not confirmed, in doubt, or flagged as never made or not
    supported) is shown first the passage most like a clause of the kind it names: held out on CUAD's contracts that
    was the experts' clause more often than the ranker's first passage (0.70 -> 0.75, score_evidence.py). A
    verdict that rests on a clause (confirmed, quoted, contradicted, the contract's values) keeps it."""
    checks = {r.get("check") for r in point.reasons}
    without_a_clause = point.verdict in (UNCONFIRMED, NEEDS_REVIEW) or (
        point.verdict == INCORRECT and checks <= {"unsupported"}
    )
    if not without_a_clause or point.passage == passage or point.reading.startswith("the contract's values, read:"):
        return point
    return _shown_first(point, passage, kind)


def _shown_first(point: PointReport, passage: str, kind: str) -> PointReport:
    """The point shown first the passage most like a clause of this kind, and the pane told so."""
    names_it = point.probability is not None and point.summary == checker_flag(point)
    point.passage = passage
    if names_it:  # the claim checker's flag names the passage shown
        point.summary = checker_flag(point)
    shown = f"shown first: {passage}, the passage most like a clause of this kind ({kind})"
    point.reading = "; ".join(x for x in (point.reading, shown) if x)
    return point


def never_made(point: PointReport, reading: Reading, reference: Reference, document: Document) -> PointReport:
    """A claim that the contract has a clause of a kind no reader knows, left unconfirmed, is flagged as never made
    where the contract says nothing like it, as other contracts do (models/checker/reference.py). It stands over
    nothing but "unconfirmed"."""
    if point.verdict != UNCONFIRMED or reading.never_made < reference.threshold:
        return point
    closest = reading.closest
    said = document.by_id[closest].text[:300] if closest in document.by_id else ""
    reason = Reason("unsupported", point.text.strip()[:200], said, closest)
    decided = ClaimResult(INCORRECT, [reason], point.passage or closest)  # the ranker's passage stays shown first
    report = report_of(point.start, point.end, point.text, decided)
    report.probability, report.contradiction = reading.never_made, 0.0
    words = as_said(reading.missing, point.text)
    report.reading = (
        f"no clause like this in the contract, beside other contracts: its closest sentences ({closest}) stand"
        f" {reading.features[0]:+.1f} standard deviations from theirs"
        + (f", and it never uses the words {', '.join(f'“{w}”' for w in words[:4])}" if words else "")
        + f" (probability {reading.never_made:.2f} that there is no such clause)"
    )
    report.summary = f"no clause like this in the contract; its closest sentence is in {closest}"
    return report


def statement_read(point: PointReport, recognised: Recognised, *, nda: bool = True) -> PointReport:
    """A point read as the ContractNLI statement it makes: its verdict is the statement's, and the pane says
    which statement was read where the point words it otherwise; the point keeps its own words. It is
    confirmed only where it says the statement as the statement does (`Recognised.alike`: a denial read as the
    statement it denies would otherwise be "found"), and only in a document that names itself an NDA (`nda`):
    ContractNLI's statements are about NDAs, and in commercial contracts "No licence of any rights is given" was
    read as "Agreement shall not grant Receiving Party any right to Confidential Information" and "found" where
    the contract grants one. Otherwise it may still be flagged, or shown its clause."""
    if point.text.strip().rstrip(".").casefold() == recognised.statement.rstrip(".").casefold():
        return point
    point.reading = f"read as the NDA statement “{recognised.statement}”: {point.reading}"
    if point.verdict == SUPPORTED and not (recognised.alike and nda):
        point.verdict = UNCONFIRMED
        point.summary = VERDICT_WORDS[UNCONFIRMED]
        point.reading += (
            " (not confirmed: its words may say it the other way round)"
            if not recognised.alike
            else " (not confirmed: the document does not name itself an NDA, which that statement is about)"
        )
    return point


# A rule's objection that a verbatim quote does not answer: the quotation's words are right, where they
# are said to come from is not.
_ABOUT_THE_ATTRIBUTION = ("bad_citation", "misquote")


def quoted(report: PointReport, found: Quoted | None) -> PointReport:
    """A point that quotes its document word for word (`found`, models/verifier/checks/verbatim.py) is
    confirmed as quoted: the quotation checked, what the answer draws from it (`quote["rest"]`) not. A point
    that is only a quotation and where it comes from (`only_quoted`) is never flagged but for its attribution:
    a section that does not hold it, or a shorter quotation beside it that the document does not hold; that
    flag stands, with the long quotation confirmed beside it. Confirmed, it was decided by the quotation alone,
    and no model's probability is said of it. One that also claims something of its own keeps a flag on it
    too."""
    if found is None:
        return report
    report.quote = found.as_dict()
    about_its_own_claim = [r for r in report.reasons if r.get("check") not in _ABOUT_THE_ATTRIBUTION]
    attribution = [r for r in report.reasons if r.get("check") in _ABOUT_THE_ATTRIBUTION]
    if report.verdict == INCORRECT and (attribution or (about_its_own_claim and found.rest)):
        return report  # the flag is on where the quotation is said to be from, or on what the point adds
    report.verdict, report.passage, report.reasons = QUOTED, found.passage, attribution
    report.summary = f"quotation found word for word in {found.passage}" + (
        f"; not checked: {found.rest[:160]}" if found.rest else ""
    )
    if only_quoted(found):
        report.reading = "the quotation alone, found word for word"
        report.probability = report.contradiction = None
    return report


def only_quoted(found: Quoted | None) -> bool:
    """The point is a quotation found word for word and where it comes from, and says nothing of its own: its
    verdict follows from the quotation and the rules' word for word reading of its attribution (`quoted`), never
    from a model's, so the encoders, which cost most of a check, do not read it."""
    return found is not None and not found.rest
