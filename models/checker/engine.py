"""Checking a claim against its document: one engine, with no database and no Qt.

The cascade, in order: the verifier's rules (models/verifier) read each claim; the claim checker
(models/checker/model.py) gives the calibrated probability that the document does not support it; in
a contract, the evidence ranker finds the passages that may decide it by meaning, the cross-encoder
rereads the first four, and the contract checker gives the verdict from what they say
(models/checker/ranking.py, encoder.py); a claim in other words is read as the NDA statement it makes
(statements.py) or by the kind of clause it names (kinds.py), and one of a kind nobody trained on against
other contracts (reference.py); in a commercial contract, a point whose verdict cites no clause of its own
is shown first the clause most like the kind it names (`clause_like_shown`); last, a point that quotes its
document word for word is confirmed as quoted (models/verifier/checks/verbatim.py). Which reader speaks for
which point, and the decision policy that joins them (`_decided`), live here, so that a model is added or
removed in this package alone; how each reader changes a point's report, in models/checker/readings.py; what
the engine reports of each point, and the tag a verdict becomes in a LeMAJ review (`tag_of`), in
models/checker/report.py. app/judging/verification.py reads a project's documents, runs the engine and
keeps its findings.

Decision: a point is called supported only where the checker's probability is below the threshold at
which that word was right at least 95 times in 100 on held-out data; otherwise it is `unconfirmed`:
the closest passage is shown as evidence, with no verdict. Measured on human-labelled real errors, the
rules' own "supported" was wrong on more than a third of the wrong claims.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

import numpy as np

from models.checker.encoder import Encoders, dense_reader, shipped_encoders
from models.checker.features import Evidence, enough_to_check
from models.checker.kinds import SHOWN_AT, ClauseLike, KindReader, KindReading, denies, recognition_text, shipped_kinds
from models.checker.model import Assessment, ClaimChecker, shipped
from models.checker.ranking import PassageIndex
from models.checker.readings import (
    checker_flag,
    clause_like_shown,
    kind_reading,
    never_made,
    only_quoted,
    quoted,
    statement_read,
)
from models.checker.reference import Reading, Reference, Sentences, shipped_reference
from models.checker.report import PointReport, report_of
from models.checker.statements import (
    GIVES_WORDS,
    OPENING,
    Recognised,
    StatementReader,
    names_an_nda,
    shipped_statements,
)
from models.evidence import is_evidence
from models.verifier import (
    INCORRECT,
    NEEDS_REVIEW,
    SUPPORTED,
    UNCONFIRMED,
    UNVERIFIABLE,
    CitedRef,
    ClaimResult,
    Document,
    Reason,
    Source,
    verify_claim,
)
from models.verifier.checks.polarity import WORD_FOR_WORD
from models.verifier.checks.values import read_document_values
from models.verifier.checks.verbatim import verbatim_quote

SEARCH_HITS = 5  # passages the rules compare a claim with


@dataclass(frozen=True)
class Passage:
    """A passage of a document as the engine reads it."""

    citation_id: str
    text: str
    contents_page: bool = False  # a table of contents: never shown as evidence
    heading: str = ""  # the headings it stands under ("NON-DISCLOSURE AGREEMENT"): a title is often one


@dataclass(frozen=True)
class Definition:
    """A term the document defines, and the passage that defines it."""

    term: str
    definition: str
    passage: str


@dataclass
class PreparedDocument:
    """A document read once for every claim about it: for the rules, the checker and the ranker."""

    document: Document
    evidence: Evidence
    index: PassageIndex
    defined: dict[str, tuple[str, str]]  # term (lower case) -> (term, passage)
    sentences: Sentences | None = None  # read against the reference contracts (models/checker/reference.py)
    nda: bool = False  # its opening names it a non-disclosure agreement: what ContractNLI's statements are about


class ClaimEngine:
    """The claim checker as shipped, or for measurement without parts of it.

    `checker`: another claim checker than the shipped one (trained elsewhere, for side-by-side
    figures): it then decides alone, as the contract checker was trained on the shipped one's output;
    `rules_only`: the rules' verdicts alone, as before any checker; `neural=False`: evidence by words
    only (BM25), as when an encoder file is missing or altered, with `note` saying why."""

    def __init__(self, checker: ClaimChecker | None = None, *, rules_only: bool = False, neural: bool = True) -> None:
        self.encoders: Encoders | None = None
        self.note: str | None = None  # why evidence is found by words only, when it had to be
        if not rules_only and neural:
            loaded = shipped_encoders()
            if isinstance(loaded, str):
                self.note = f"{loaded}; until then evidence is found by words only (BM25), not by meaning"
            else:
                self.encoders = loaded
        self.checker = None if rules_only else (checker or shipped())
        # every reader runs (the kinds, the statements, the reference contracts, the contract checker) only with the
        # encoders and the shipped checker, which they were trained beside; another checker decides alone
        self.whole_cascade = self.encoders is not None and (checker is None or checker is shipped())
        kinds = shipped_kinds() if self.whole_cascade else None  # kind_reading: a kind of clause there or not
        self.kinds = kinds if isinstance(kinds, KindReader) else None
        # statement_read: a claim about an NDA in any wording, read as the ContractNLI statement it makes
        statements = shipped_statements(self.encoders.memory) if self.encoders and self.whole_cascade else None
        self.statements = statements if isinstance(statements, StatementReader) else None
        # never_made: a claim that a contract has a clause of a kind nobody trained on, read against other contracts
        reference = shipped_reference() if self.whole_cascade else None
        self.reference = reference if isinstance(reference, Reference) else None

    def prepare(self, passages: list[Passage], definitions: list[Definition], opening: str = "") -> PreparedDocument:
        """A document read once for every claim about it; `opening`, its first characters as imported, where its
        title stands (else read from its headings and passages)."""
        evidence = Evidence.of([(p.citation_id, p.text) for p in passages], {d.term: d.definition for d in definitions})
        shown = [p for p in passages if not p.contents_page and is_evidence(p.text)]
        return PreparedDocument(
            Document([Source(p.citation_id, p.text) for p in passages]),
            evidence,
            PassageIndex([p.citation_id for p in shown], [p.text for p in shown], self.encoders),
            {d.term.lower(): (d.term, d.passage) for d in definitions},
            nda=names_an_nda(opening[:OPENING]) or names_an_nda(_opening(passages)),
        )

    def read_whole(self, prepared: PreparedDocument) -> bytes | None:
        """A document read whole now (at import), not claim by claim: its values, remembered in this process, and what
        the encoders read of it, returned to be kept with it: every evidence passage's vector and, in a commercial
        contract, that of every sentence the reference contracts are compared with, and the encoder that read them
        (`dense_reader`). None without the encoders: nothing to keep."""
        if self.encoders is None:
            return None
        read_document_values(prepared.document)  # remembered in this process, not kept: see its docstring
        passages = prepared.index.passage_vectors()
        if prepared.sentences is None and self.reference is not None and not prepared.nda:
            prepared.sentences = Sentences.of(prepared.index.ids, prepared.index.texts, self.encoders.embed)
        sentences = prepared.sentences
        kept = io.BytesIO()
        np.savez(
            kept,
            reader=np.array(dense_reader()),
            ids=np.array(prepared.index.ids),
            passages=passages,
            sentences=np.zeros((0, 384), np.float32) if sentences is None else sentences.vectors,
            has_sentences=np.array(sentences is not None),
        )
        return kept.getvalue()

    def read_kept(self, prepared: PreparedDocument, kept: bytes) -> bool:
        """Take back what `read_whole` kept of this document, so that no claim embeds it again; False, with nothing
        taken, where another encoder read it, its passages are not these, or it cannot be read (it is then read claim
        by claim, as before it was kept)."""
        if self.encoders is None:
            return False
        try:
            with np.load(io.BytesIO(kept), allow_pickle=False) as arrays:
                # stored as `read_whole` stores them, never compressed: nothing read can outgrow the bytes kept
                if any(entry.compress_type != zipfile.ZIP_STORED for entry in arrays.zip.infolist()):
                    return False
                if str(arrays["reader"]) != dense_reader() or arrays["ids"].tolist() != prepared.index.ids:
                    return False
                passages, sentences = arrays["passages"], arrays["sentences"]
                has_sentences = bool(arrays["has_sentences"])
            index = prepared.index
            if has_sentences:  # cut as the reference reader cuts them now, else the count differs and it is refused

                def stored(said: list[str]) -> np.ndarray:
                    if sentences.shape != (len(said), 384) or sentences.dtype != np.float32:
                        raise ValueError(f"{sentences.shape} {sentences.dtype} vectors for {len(said)} sentences")
                    return np.asarray(sentences)

                read = Sentences.of(index.ids, index.texts, stored)
            index.take_vectors(passages)
        except (ValueError, KeyError, OSError, zipfile.BadZipFile, EOFError):
            return False
        if has_sentences:
            prepared.sentences = read
        return True

    def assess(
        self,
        prepared: PreparedDocument,
        text: str,
        spans: list[tuple[int, int]],
        cited: list[list[CitedRef]],
        question: str = "",
    ) -> list[PointReport]:
        """The verdict on each span of an answer's text (the answer to `question`: a summary is checked as
        one), `cited` the passages each span cites, resolved."""
        document, evidence = prepared.document, prepared.evidence
        said = [text[s:e] for s, e in spans]
        nearest = self._statements_read(said) if evidence.kind == "contract" else [None] * len(said)
        statements = [r if r is not None and r.sure else None for r in nearest]
        # a claim near an NDA statement, not surely it: in an NDA, shown the clause that decides the statement
        near = {i: r.statement for i, r in enumerate(nearest) if r is not None and not r.sure and prepared.nda}
        as_read = [claim if r is None else r.statement for claim, r in zip(said, statements, strict=True)]
        results = [
            verify_claim(claim, document, document.search(claim, SEARCH_HITS), refs)
            for claim, refs in zip(as_read, cited, strict=True)
        ]
        quotations = [verbatim_quote(claim, document) for claim in said]
        if self.checker is None:
            each = zip(spans, said, results, quotations, strict=True)
            return [quoted(report_of(s, e, claim, r), q) for (s, e), claim, r, q in each]
        # a point that is only a quotation is what the quotation is (readings.only_quoted): the encoders do not read it
        read_by_models = [i for i, q in enumerate(quotations) if not only_quoted(q)]
        claims = [(claim, r.verdict) for claim, r in zip(as_read, results, strict=True)]
        assessed = self.checker.assess_many(claims, evidence, question)
        found: list[str | None] = [None] * len(claims)
        by_meaning: set[int] = set()  # the claims the contract checker decided
        if self.encoders is not None and evidence.kind == "contract":  # measured on contracts only
            wanted = [i for i in read_by_models if enough_to_check(claims[i][0])]
            ranked = prepared.index.rank([claims[i][0] for i in wanted], self.encoders.ranker, self.encoders.memory)
            for i, ranking in zip(wanted, ranked, strict=True):
                found[i] = ranking.ids[0] if ranking.ids else None
            nearby = [i for i in wanted if i in near]
            at_statement = prepared.index.rank([near[i] for i in nearby], self.encoders.ranker, self.encoders.memory)
            for i, ranking in zip(nearby, at_statement, strict=True):
                found[i] = ranking.ids[0] if ranking.ids else found[i]
            read = [(i, ranking.meaning) for i, ranking in zip(wanted, ranked, strict=True) if ranking.meaning]
            read = [(i, x) for i, x in read if assessed[i] is not None]
            if read and self.whole_cascade:  # the contract checker reads what the encoders say
                again = self.encoders.checker.assess_meaning(
                    [claims[i][0] for i, _ in read], [x for _, x in read], [assessed[i] for i, _ in read]
                )
                for (i, _), a in zip(read, again, strict=True):
                    assessed[i] = a
                by_meaning = {i for i, _ in read}
        # a claim decided by the contract checker is not read again by its kind, nor one read as an NDA statement in an
        # NDA; in a commercial contract, one the contract checker (which learnt from NDAs) left without a verdict is,
        # and one read as an NDA statement too: "The agreement does not grant any license" is about a licence there
        commercial = evidence.kind == "contract" and not prepared.nda
        undecided = [
            i for i in read_by_models if evidence.kind == "contract" and statements[i] is None and i not in by_meaning
        ]
        reread = [
            i
            for i in read_by_models
            if commercial and (statements[i] is not None or (i in by_meaning and _left_open(assessed[i])))
        ]
        asked = self._asked(question) if commercial else None
        kinds = self._kinds_read(prepared, {i: said[i] for i in sorted(undecided + reread)}, asked)
        # read again, a claim's kind may flag it but never confirm it: on denials of kinds of clause in a fourth hand's
        # words, 34 more were confirmed so, 11 of them wrongly ("No party is granted exclusive rights" read as
        # "third party beneficiary")
        kinds = {i: r for i, r in kinds.items() if not (i in reread and r.verdict == "supported")}
        # the reference contracts are commercial: an NDA's claims are the NDA readers' (read against them, claims in
        # a lawyer's words the NDA never uses were flagged: 4 more false alarms in 98, contradicted F1 0.63 -> 0.60);
        # and a claim that denies a kind of clause, in words or as the denial model reads it, is not read against them:
        # their lack of the clause makes it true (hedged denials, "I didn't find any liquidated damages clause", were
        # flagged as never made: 107 false alarms among a fifth hand's 518 true denials)
        kind_unread = [i for i in undecided if i not in kinds and not prepared.nda]
        # in a commercial contract, the clause most like the kind each claim names (CUAD's kinds, not an NDA's)
        like = self._clauses_like(prepared, {i: claims[i][0] for i in read_by_models if commercial}, statements, asked)
        points = []
        for i, ((s, e), r, a, f) in enumerate(zip(spans, results, assessed, found, strict=True)):
            rule_stands = (_reads_the_words(r) and (a is None or a.kind != "summary")) or (
                i not in by_meaning and a is not None and a.kind in self.checker.rules_stand
            )
            point = _decided(
                s, e, text[s:e], r, a, document, f, rules_flag=rule_stands, rules_object=i not in by_meaning
            )
            if i in kinds:
                point = kind_reading(point, kinds[i], document)
            recognised = statements[i]
            if recognised is not None and not (i in kinds and kinds[i].verdict):
                point = statement_read(point, recognised, nda=prepared.nda)
            elif i in near and f is not None and point.passage == f:
                point.reading += f"; its evidence is the clause of the NDA statement nearest it, “{near[i]}”"
            points.append(point)
        # Read against the reference contracts: only a claim still unconfirmed (never_made stands over nothing else;
        # embedding a contract's every sentence is the dearest first read of it), and not one whose kind the recogniser
        # reads, if unsurely, where the contract has such a clause (on CUAD's held-out contracts 5 of the reference's 27
        # flags were so, every one a false alarm)
        still_open = [i for i in kind_unread if points[i].verdict == UNCONFIRMED and not (i in like and like[i].there)]
        denials = self._denials([said[i] for i in still_open])
        affirmed = [i for i, denial in zip(still_open, denials, strict=True) if not denial]
        compared = dict(zip(affirmed, self._compared(prepared, [claims[i][0] for i in affirmed]), strict=True))
        reports = []
        for i, point in enumerate(points):
            reading = compared.get(i)
            if reading is not None and self.reference is not None:
                point = never_made(point, reading, self.reference, document)
            point = quoted(point, quotations[i])
            if i in like:
                point = clause_like_shown(point, like[i].passage, like[i].kind)
            used = [prepared.defined[t] for t in evidence.defined_in(point.text)]  # read with them: evidence too
            point.definitions = [{"term": term, "passage": passage} for term, passage in used]
            reports.append(point)
        return reports

    def _statements_read(self, claims: list[str]) -> list[Recognised | None]:
        """The ContractNLI statement each claim makes, or comes nearest to (`sure` where the recogniser is sure;
        models/checker/statements.py)."""
        if self.statements is None or self.encoders is None or not claims:
            return [None] * len(claims)
        return self.statements.nearest(claims, self.encoders.embed(claims), self.encoders.judge)

    def _compared(self, prepared: PreparedDocument, claims: list[str]) -> list[Reading | None]:
        """For each claim (none that denies a clause: `_denials` leaves those out), what the reference contracts say
        of it about this contract (models/checker/reference.py); None for one that gives a value or quotes."""
        wanted = [j for j, c in enumerate(claims) if not GIVES_WORDS.search(c) and enough_to_check(c)]
        out: list[Reading | None] = [None] * len(claims)
        if self.reference is None or self.encoders is None or not wanted:
            return out
        if prepared.sentences is None:  # embedded once a document, when a claim first needs them
            prepared.sentences = Sentences.of(prepared.index.ids, prepared.index.texts, self.encoders.embed)
        for j, v in zip(wanted, self.encoders.embed([claims[j] for j in wanted]), strict=True):
            out[j] = self.reference.read(claims[j], v, prepared.sentences)
        return out

    def _clauses_like(
        self,
        prepared: PreparedDocument,
        claims: dict[int, str],
        statements: list[Recognised | None],
        asked: int | None = None,
    ) -> dict[int, ClauseLike]:
        """For each claim (by its place in the answer) whose kind of clause the recogniser reads, if less surely than
        a verdict needs, or which may be about the kind its question asks about (`asked`), the passage most like a
        clause of that kind and the kind's name (models/checker/kinds.py). A claim read as an NDA statement needs
        the verdict's bar, and its own kind: below it, in NDAs that do not name themselves one, "Receiving Party may
        create a copy ..." was read as uncapped liability (contractnli-dev)."""
        if self.kinds is None or self.encoders is None or not claims:
            return {}
        index, reader = prepared.index, self.kinds
        vectors = self.encoders.embed([recognition_text(c) for c in claims.values()])
        like = {
            i: (
                reader.clause_like(c, v, index.ids, index.texts, None)
                if statements[i] is not None
                else reader.clause_like(c, v, index.ids, index.texts, SHOWN_AT, asked)
            )
            for (i, c), v in zip(claims.items(), vectors, strict=True)
        }
        return {i: x for i, x in like.items() if x is not None}

    def _denials(self, claims: list[str]) -> list[bool]:
        """For each claim, whether it says a contract has no clause of some kind (models/checker/kinds.py)."""
        if self.kinds is None or self.encoders is None or not claims:
            return [denies(c) for c in claims]
        vectors = self.encoders.embed([recognition_text(c) for c in claims])
        return [self.kinds.reads_a_denial(c, v) for c, v in zip(claims, vectors, strict=True)]

    def _asked(self, question: str) -> int | None:
        """The kind of clause the answer's question asks about, where the recogniser is sure of it."""
        if self.kinds is None or self.encoders is None or not question.strip():
            return None
        return self.kinds.asked(question, self.encoders.embed([recognition_text(question)])[0])

    def _kinds_read(
        self, prepared: PreparedDocument, claims: dict[int, str], asked: int | None = None
    ) -> dict[int, KindReading]:
        """The kind reading of each claim (by its place in the answer) about a kind of clause, where the reading
        gives a verdict (models/checker/kinds.py); a denial the recogniser is unsure of is read against the kind
        the question asks about (`asked`)."""
        if self.kinds is None or self.encoders is None or not claims:
            return {}
        vectors = self.encoders.embed([recognition_text(c) for c in claims.values()])
        index = prepared.index
        read = {
            i: self.kinds.read(c, v, index.ids, index.texts, asked)
            for (i, c), v in zip(claims.items(), vectors, strict=True)
        }
        return {i: r for i, r in read.items() if r is not None}


def _opening(passages: list[Passage]) -> str:
    """The document's first OPENING characters as its passages give them: each heading once, before its passages.
    An NDA's title is often segmented as a heading, or left out of every passage: from the passages alone, 26 of
    contractnli-dev's 61 NDAs were not known as NDAs; 5 with their headings, 2 with the text as imported (both a
    covenant not to compete and a letter that never call themselves one)."""
    said, seen, size = [], set(), 0
    for p in passages:
        for part in ([p.heading] if p.heading and p.heading not in seen else []) + [p.text]:
            said.append(part)
            size += len(part) + 1
        seen.add(p.heading)
        if size >= OPENING:
            break
    return " ".join(said)[:OPENING]


def _left_open(assessed: Assessment | None) -> bool:
    """The claim checker gave no verdict: neither flagged nor sure enough to confirm."""
    return assessed is not None and not assessed.flagged and not assessed.supported


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
        return report_of(start, end, claim, ClaimResult(verdict, result.reasons, result.passage, result.checked))
    p, contradiction = assessed.p_unsupported, assessed.p_contradicted
    # the passage the ranker found by meaning, where it read the claim; else the one the rules matched
    passage = by_meaning or result.passage or assessed.passage
    # In a contract, a value that differs from the statement of the same duty stands: values are read, not
    # learnt (models/verifier/checks/values.py), and a model's "supported" must not overrule the contract. Not
    # elsewhere: on RAGTruth's web passages and news it took false alarms on clean QA answers from 0.08 to 0.15
    # (bench/real_errors.py). A claim whose every value is the one its duty's statement gives stands too.
    value_differs = assessed.kind == "contract" and any(r.check == "value_mismatch" for r in result.reasons)
    stands = (result.verdict == INCORRECT and (rules_flag or value_differs)) or result.verdict == NEEDS_REVIEW
    if stands or (result.verdict == SUPPORTED and result.values_read):
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
    report = report_of(start, end, claim, decided)
    report.probability, report.contradiction = p, contradiction
    report.reading = _reading(decided, assessed, by_meaning is not None)
    if decided.verdict == INCORRECT and not result.reasons:
        report.summary = checker_flag(report)
    return report


_BY_A_MODEL = ("unsupported", "contradicted")  # the reasons a model gives; every other is a rule's


def _reading(decided: ClaimResult, assessed: Assessment, by_meaning: bool) -> str:
    """Which reading decided a verdict: the contract's values, a rule, or a model (by meaning or by words)."""
    if decided.values_read:
        return "the contract's values, read: " + "; ".join(decided.checked)
    if any(r.check in ("value_mismatch", "competing_values") for r in decided.reasons):
        return "the contract's values, read"
    if decided.verdict in (INCORRECT, NEEDS_REVIEW) and decided.reasons and decided.reasons[0].check not in _BY_A_MODEL:
        return "a rule that compares the answer's words with the document's"
    return "read by meaning" if by_meaning else "read by the claim checker's model of the words"


# The rules that compare what the answer writes with the document's own words: a quotation the document
# does not hold, a section it lacks or one that holds neither the point nor its quotation. No model reads
# these (the checkers read meaning, never which section a point cites or a quotation's exact words), so
# their flag stands where the contract checker decides and outside contracts too: without it the stress
# test's planted misquotes and wrong sections were caught half as often (issue 67). Not in a summary: a
# news summary's quoted speech, joined across "he said" or cut at a sentence's end, is no error to
# RAGTruth's annotators.
_WORD_FOR_WORD = frozenset({"misquote", "bad_citation"})


def _reads_the_words(result: ClaimResult) -> bool:
    """A rule's flag read from the words themselves: a misquote, a bad citation, or the passage's own
    sentence with its negation changed (the checkers' features count words, not which way a verb goes)."""
    return result.verdict == INCORRECT and any(
        r.check in _WORD_FOR_WORD or (r.check == "negation" and WORD_FOR_WORD in r.normalisations)
        for r in result.reasons
    )
