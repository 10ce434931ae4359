"""A claim about an NDA in a lawyer's or a model's wording, read as the ContractNLI statement it makes
(issue 65, item 1).

The cross-encoder, the exemplar memory and the contract checker learnt ContractNLI's 17 statements in
ContractNLI's own wording: "Receiving Party shall not reverse engineer any objects which embody Disclosing
Party's Confidential Information." Said as "The recipient can't decompile what it is given", the same
claim reached none of them (issue 55: 0 of 14 contradicted statements flagged). The recogniser here tells
which statement a claim makes, if any, and the engine then reads the claim as that statement, so what was
measured on ContractNLI's wording holds for it (models/checker/readings.py, `statement_read`).

It is a logistic regression over each candidate statement's features (`FEATURES`), trained by
packaging/training/train_statements.py and shipped as plain JSON (resources/claim_checker/statements.json,
pinned in manifest.json):
- the claim's bi-encoder cosine to the statement's prototypes (its own wording, the learnable wordings of
  packaging/training/data/nda_wordings*.json and three hands' wordings), and how it stands against the other
  statements;
- its cosine to the clauses annotators marked as deciding the statement in other NDAs (the exemplar
  memory): a lawyer words a claim as a contract words its clause;
- the cross-encoder reading the statement against the claim, as it reads a claim against a passage (it
  tells what a claim is about, not which way round it says it: that is the sense model's);
- the share of the claim's content words any wording of the statement holds.
A claim is read as a statement only where the regression's probability reaches `threshold` (chosen for
precision held out one wording, or one hand, at a time) and a second regression, the sense model, reads it as
saying the statement the same way round, not its denial (`StatementReader.sense`: the words that turn a claim
round, and how the claim stands to the statement's known wordings and to its known denials,
models/checker/sense.py). The statement's "supported" stands only where the sense model is surer still, or the
claim holds the statement's very negations and modal words (`said_alike`). A claim that gives a value or a
quotation is never read so (the words it gives must be checked as given), nor one far from every statement
(`NO_STATEMENT`: the cross-encoder is not asked).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from models.checker.manifest import ArtefactUnavailable, checked
from models.checker.ranking import content
from models.checker.sense import ALIKE, CUES, FORBIDS, POOL_FEATURES, cue_vector, pool_features

FILE = "statements.json"
CANDIDATES = 5  # the statements closest by cosine that the cross-encoder and the regression read
EVIDENCE_TOP = 5  # a statement's evidence cosine: the mean of the claim's five closest deciding clauses
SAME_STATEMENT = 0.98  # cosine at which an exemplar claim of the memory is the statement itself
# Under this cosine to every prototype a claim makes no statement, and the cross-encoder is not asked: the
# learnable wordings read as a statement (their own left out of the prototypes) reach 0.60 at the least, and
# four in five of CUAD's claims about commercial contracts stay under it
NO_STATEMENT = 0.55
FEATURES = (
    "cosine",  # the best cosine to the statement's prototypes
    "cosine_below_best",
    "cosine_above_next",
    "cosine_first",
    "cosine_top3",  # the mean of its three best prototypes
    "evidence",
    "evidence_below_best",
    "evidence_first",
    "cross_supported",
    "cross_contradicted",
    "cross_first",
    "words_held",
)
# A document whose opening names it a non-disclosure agreement: what ContractNLI's statements are about. In the first
# OPENING characters: 59 of contractnli-dev's 61 NDAs, 48 of contractnli-train's 50, 3 of CUAD's 439 contracts.
NDA_TITLE = re.compile(
    r"non[-\s]?disclosure|confidential(?:ity)?\s+(?:disclosure\s+)?agreement|secrecy\s+agreement"
    r"|confidentiality\s+undertaking|\bNDA\b",
    re.IGNORECASE,
)
OPENING = 1500


def names_an_nda(opening: str) -> bool:
    """The document's opening (its first OPENING characters) names it a non-disclosure agreement."""
    return bool(NDA_TITLE.search(opening))


GIVES_WORDS = re.compile(r"\d|[\"“”]")  # a value or a quotation: checked as given, never as a statement
# The words that turn a statement round, counted (`same_sense`): one feature of the sense model. Alone it was the
# gate: it passed 36 of the 51 wordings 3-5 and 2 of the 17 `check` denials, and 19-40 in 100 of other hands' denials.
_DENIES = re.compile(
    r"\b(?:not|no|never|none|nothing|nobody|no[\s-]one|neither|nor|without|cannot|un(?!der)[a-z]+(?:ed|able))\b|n't\b"
    r"|\bnon-"
    r"|\b(?:prohibit\w*|forbid\w*|bar(?:s|red)?|restrict\w*|ban(?:s|ned)?|preclud\w*|prevent\w*|stop(?:s|ped)?"
    r"|exclud\w*|limit\w*|only|solely|except|outside|carved?\s+out|confined)\b",
    re.IGNORECASE,
)


class StatementsUnavailable(ArtefactUnavailable):
    """statements.json is missing or altered: claims are read in their own wording only."""


@dataclass(frozen=True)
class Recognised:
    """The ContractNLI statement a claim makes, and how sure the recogniser is."""

    key: str  # "nda-11"
    statement: str  # ContractNLI's wording of it
    probability: float
    # its words say the statement as the statement does (`said_alike`, or the sense model's surest reading): else
    # the statement's "supported" does not stand, as the claim may deny it
    alike: bool = True
    # sure enough to be read as the statement; else only the statement the claim comes nearest to, whose deciding
    # clause is the claim's evidence in an NDA (models/checker/engine.py)
    sure: bool = True


def said_alike(claim: str, statement: str) -> bool:
    """The claim says the statement with its very negations and modal words ("may", "shall", "not"…): the
    statement's verdict may confirm it, not only flag it or show its clause."""
    mine, theirs = FORBIDS.sub(" prohibited ", claim), FORBIDS.sub(" prohibited ", statement)
    return same_sense(claim, statement) and all((c.search(mine) is None) == (c.search(theirs) is None) for c in ALIKE)


def same_sense(claim: str, statement: str) -> bool:
    """The claim says the statement the same way round, as far as its words show (`_DENIES`)."""
    return len(_DENIES.findall(claim)) % 2 == len(_DENIES.findall(statement)) % 2


def sense_features(claim: str, statement: str) -> np.ndarray:
    """What the sense model reads of a claim beside the statement it may make: each of sense.CUES in either and
    whether they differ, and the parity rules' outcomes (`same_sense`, `said_alike`)."""
    mine, theirs = cue_vector(claim).astype(bool), cue_vector(statement).astype(bool)
    out = np.column_stack([mine, theirs, mine != theirs, mine & theirs]).ravel().tolist()
    out += [same_sense(claim, statement), said_alike(claim, statement)]
    out += [len(_DENIES.findall(claim)) % 2 == 1, len(_DENIES.findall(statement)) % 2 == 1]
    return np.asarray(out, dtype=float)


SENSE_FEATURES = 4 * len(CUES) + 4 + POOL_FEATURES  # sense_features and pool_features


def _rank_first(values: np.ndarray) -> np.ndarray:
    return (values >= values.max()).astype(float) if len(values) else values


class StatementReader:
    """The recogniser as shipped (`spec`: statements.json), over the encoders' exemplar memory."""

    def __init__(self, spec: dict[str, Any], memory: Any) -> None:
        self.keys: list[str] = list(spec["keys"])
        self.statements: list[str] = list(spec["statements"])
        self.prototype_words = [[set(content(t)) for t in texts] for texts in spec["prototype_texts"]]
        self.prototypes = np.asarray(spec["prototypes"], dtype=np.float32)
        self.owner = np.asarray(spec["owner"], dtype=int)
        self.weights = np.asarray(spec["weights"], dtype=float)
        self.bias = float(spec["bias"])
        self.threshold = float(spec["threshold"])
        sense = spec["sense"]
        self.sense_weights = np.asarray(sense["weights"], dtype=float)
        self.sense_bias = float(sense["bias"])
        self.sense_threshold = float(sense["threshold"])
        self.sense_confirms = float(sense["confirms"])
        self.prototype_cues = np.asarray([cue_vector(t) for texts in spec["prototype_texts"] for t in texts])
        denials = spec["denials"]  # statements said the other way round, known to the sense model
        self.denial_cues = np.asarray([cue_vector(t) for t in denials["texts"]]).reshape(-1, len(CUES))
        self.denial_vectors = np.asarray(denials["vectors"], dtype=np.float32).reshape(len(self.denial_cues), -1)
        self.denial_owner = np.asarray(denials["owner"], dtype=int)
        canonical = np.asarray(spec["statement_vectors"], dtype=np.float32)
        if (
            len(self.statements) != len(self.keys)
            or len(canonical) != len(self.keys)
            or len(self.prototype_words) != len(self.keys)
            or len(self.owner) != len(self.prototypes)
            or self.weights.shape != (len(FEATURES),)
            or self.sense_weights.shape != (SENSE_FEATURES,)
            or len(self.prototype_cues) != len(self.prototypes)
            or len(self.denial_owner) != len(self.denial_cues)
        ):
            raise StatementsUnavailable(f"{FILE}'s statements, prototypes and weights do not match")
        self.evidence = evidence_clauses(memory, canonical)

    def features(
        self, claim: str, vector: np.ndarray, judge: Any, skip: list[int] | None = None
    ) -> tuple[list[int], np.ndarray]:
        """The CANDIDATES statements closest to the claim (its bi-encoder vector given) and their FEATURES;
        `judge` is the cross-encoder's (Encoders.judge); `skip`, prototypes left out (training: the claim's
        own wording, or every wording of its hand)."""
        similar = self.prototypes @ vector
        if skip is not None:
            similar[skip] = -1.0
        k = len(self.keys)
        best = np.array([similar[self.owner == i].max() for i in range(k)])
        top3 = np.array([np.sort(similar[self.owner == i])[-3:].mean() for i in range(k)])
        evidence = np.array([_top_mean(e @ vector, EVIDENCE_TOP) for e in self.evidence])
        chosen = [int(i) for i in np.argsort(-best, kind="stable")[:CANDIDATES]]
        said = np.asarray(judge([(self.statements[i], claim) for i in chosen]), dtype=float)
        ordered = np.sort(best)
        words = set(content(claim))
        held = [max(len(words & w) / max(len(words), 1) for w in self.prototype_words[i]) for i in chosen]
        c = best[chosen]
        return chosen, np.column_stack(
            [
                c,
                c - ordered[-1],
                c - ordered[-2],
                _rank_first(best)[chosen],
                top3[chosen],
                evidence[chosen],
                evidence[chosen] - evidence.max(),
                _rank_first(evidence)[chosen],
                said[:, 0],
                said[:, 1],
                _rank_first(said[:, 0]),
                np.asarray(held),
            ]
        )

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias))))

    def sense_of(
        self,
        claim: str,
        vector: np.ndarray,
        i: int,
        skip: list[int] | None = None,
        skip_denials: list[int] | None = None,
    ) -> np.ndarray:
        """The sense model's features of the claim (its bi-encoder vector given) read as statement i; `skip` and
        `skip_denials`: wordings and denials left out (training: those of the claim's own hand)."""
        wordings, denials = self.owner == i, self.denial_owner == i
        wordings[skip or []] = False
        denials[skip_denials or []] = False
        pool = pool_features(
            cue_vector(claim),
            vector,
            (self.prototype_cues[wordings], self.prototypes[wordings]),
            (self.denial_cues[denials], self.denial_vectors[denials]),
        )
        return np.concatenate([sense_features(claim, self.statements[i]), pool])

    def sense(self, claim: str, vector: np.ndarray, i: int) -> float:
        """The sense model's probability that the claim says statement i the same way round, not its denial."""
        z = float(self.sense_of(claim, vector, i) @ self.sense_weights + self.sense_bias)
        return float(1.0 / (1.0 + np.exp(-z)))

    def recognise(self, claims: list[str], vectors: np.ndarray, judge: Any) -> list[Recognised | None]:
        """For each claim, the statement it makes, or None: of no statement, not surely one, or giving
        a value or a quotation."""
        return [r if r is not None and r.sure else None for r in self.nearest(claims, vectors, judge)]

    def nearest(self, claims: list[str], vectors: np.ndarray, judge: Any) -> list[Recognised | None]:
        """For each claim, the statement it comes nearest to making (`sure` where it makes it), or None: of no
        statement, or giving a value or a quotation."""
        out: list[Recognised | None] = []
        for claim, vector in zip(claims, vectors, strict=True):
            if GIVES_WORDS.search(claim) or float(np.max(self.prototypes @ vector)) < NO_STATEMENT:
                out.append(None)
                continue
            chosen, x = self.features(claim, vector, judge)
            p = self.probabilities(x)
            j = int(np.argmax(p))
            i = chosen[j]
            sense = self.sense(claim, vector, i)
            alike = sense >= self.sense_confirms or said_alike(claim, self.statements[i])
            sure = bool(p[j] >= self.threshold and sense >= self.sense_threshold)
            out.append(Recognised(self.keys[i], self.statements[i], float(p[j]), alike, sure))
        return out


def _top_mean(values: np.ndarray, n: int) -> float:
    return float(np.sort(values)[-n:].mean()) if len(values) else 0.0


def evidence_clauses(memory: Any, statements: np.ndarray) -> list[np.ndarray]:
    """For each statement, the vectors of the clauses annotators marked as deciding it in the memory's NDAs
    (the memory's claims are the statements themselves, one an NDA)."""
    similar = memory.claims @ statements.T
    owner = np.where(similar.max(axis=1) >= SAME_STATEMENT, similar.argmax(axis=1), -1)
    pairs = np.asarray(memory.evidence, dtype=int).reshape(-1, 2)
    return [memory.passages[np.unique(pairs[owner[pairs[:, 0]] == i, 1])] for i in range(len(statements))]


@lru_cache(maxsize=1)
def _shipped_spec() -> dict[str, Any]:
    return dict(json.loads(checked(FILE, StatementsUnavailable)))


def shipped_statements(memory: Any) -> StatementReader | str:
    """The shipped recogniser over this exemplar memory; or the sentence that says why it is not there."""
    try:
        return StatementReader(_shipped_spec(), memory)
    except StatementsUnavailable as exc:
        return str(exc)
    except (ValueError, KeyError, TypeError) as exc:
        return f"{FILE} could not be read ({type(exc).__name__}: {exc}): reinstall Assay with `make install`"
