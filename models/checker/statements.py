"""A claim about an NDA in a lawyer's or a model's wording, read as the ContractNLI statement it makes
(issue 65, item 1).

The cross-encoder, the exemplar memory and the contract checker learnt ContractNLI's 17 statements in
ContractNLI's own wording: "Receiving Party shall not reverse engineer any objects which embody Disclosing
Party's Confidential Information." Said as "The recipient can't decompile what it is given", the same
claim reached none of them (issue 55: 0 of 14 contradicted statements flagged). The recogniser here tells
which statement a claim makes, if any, and the engine then reads the claim as that statement, so what was
measured on ContractNLI's wording holds for it (models/checker/engine.py, `statement_read`).

It is a logistic regression over each candidate statement's features (`FEATURES`), trained by
packaging/training/train_statements.py and shipped as plain JSON (resources/claim_checker/statements.json,
pinned in manifest.json):
- the claim's bi-encoder cosine to the statement's prototypes (its own wording and the learnable
  wordings of packaging/training/data/nda_wordings*.json), and how it stands against the other statements;
- its cosine to the clauses annotators marked as deciding the statement in other NDAs (the exemplar
  memory): a lawyer words a claim as a contract words its clause;
- the cross-encoder reading the statement against the claim, as it reads a claim against a passage (it
  tells what a claim is about, not which way round it says it: that is `same_sense`'s);
- the share of the claim's content words any wording of the statement holds.
A claim is read as a statement only where the regression's probability reaches `threshold` (chosen for
precision on the learnable wordings, held out one wording at a time) and its words say it the same way
round (`same_sense`); a claim that gives a value or a quotation is never read so (the words it gives must
be checked as given), nor one far from every statement (`NO_STATEMENT`: the cross-encoder is not asked).
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

FILE = "statements.json"
CANDIDATES = 5  # the statements closest by cosine that the cross-encoder and the regression read
EVIDENCE_TOP = 5  # a statement's evidence cosine: the mean of the claim's five closest deciding clauses
SAME_STATEMENT = 0.98  # cosine at which an exemplar claim of the memory is the statement itself
# Under this cosine to every prototype a claim makes no statement, and the cross-encoder is not asked: the
# learnable wordings read as a statement (their own left out of the prototypes) reach 0.60 at the least, and
# four in five of CUAD's claims about commercial contracts stay under it
NO_STATEMENT = 0.55
# In a contract whose opening calls it a non-disclosure or confidentiality agreement (`is_nda`), a claim is
# most likely one of the 17 statements: it is read as one from this probability, but the statement's
# "supported" stands only from the trained threshold. Out of fold a claim of a statement left out of the
# candidates reaches 0.4 as another 14.5 times in 100 (3.8 at the trained 0.61): read so it may be flagged
# or shown a clause, never confirmed. Chosen on the three hands' wordings (bench/wordings.py on their 24
# NDAs: never-made flagged 59 -> 67 of 170, false alarms 11 of 205 unchanged; 0.3 confirmed a wrong one)
NDA_THRESHOLD = 0.4
_CALLS_ITSELF_AN_NDA = re.compile(
    r"non[\W_]?disclosure|confidentiality\s+agreement|secrecy\s+agreement|confidential\s+disclosure|\bNDA\b", re.I
)
NDA_OPENING = 1500  # characters of a contract's first passages where it names itself
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
_GIVES_WORDS = re.compile(r"\d|[\"“”]")  # a value or a quotation: checked as given, never as a statement
# The words that turn a statement round. Neither the bi-encoder nor the cross-encoder tells "the recipient may
# reverse engineer" from "shall not reverse engineer" (a recogniser without it read 31 of the 34 denials written for
# Assay as the statement they deny, and the cross-encoder calls both "supported" by a no-reverse-engineering
# clause), so a claim is read as a statement only where it holds an odd number of these words exactly where the
# statement does (`same_sense`). Held out, it passes 36 of the 51 rewordings and 2 of the 17 denials: those that deny by
# meaning alone ("... is still subject to the obligations"), which no list of words can tell.
_DENIES = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|without|cannot|un(?!der)[a-z]+(?:ed|able))\b|n't\b|\bnon-"
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
    confirms: bool = True  # False where read only as NDA_THRESHOLD lets it: the statement's "supported" does not stand


# Negation and modality: a claim read as a statement is confirmed from it only where it holds each of these
# exactly where the statement does (`said_alike`). Other hands' denials (nda_wordings_hand_*.json, never learnt)
# pass `same_sense` a third of the time, and the recogniser reads 17 in 100 of them as the statement they deny;
# 3 in 200 of them hold these as their statement does, and 2 in 5 of the same hands' wordings.
_ALIKE = [
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\b(?:not|no|never|none|nothing|neither|nor)\b|n't\b",
        r"\bwithout\b",
        r"\bun(?!der)[a-z]+(?:ed|able)\b|\bnon-",
        r"\b(?:prohibit\w*|forbid\w*|bar(?:s|red)?|restrict\w*|ban(?:s|ned)?|preclud\w*|prevent\w*)\b",
        r"\b(?:need not|not required|no obligation|not obliged|does not have to|do not have to|no duty)\b",
        r"\b(?:may|can|free|allowed|permitted|permits?|entitled|at liberty|right to)\b",
        r"\b(?:shall|must|required|obliged|obligated|has to|have to|needs? to|duty)\b",
    )
]
# "may not", "shall not", "cannot" all forbid: one cue, whichever modal word says it
_FORBIDS = re.compile(
    r"\b(?:may|shall|must|will|can|is|are)\s+not(?:\s+be\s+(?:permitted|allowed))?\b|\bcannot\b|\bcan't\b"
    r"|\bnot\s+(?:permitted|allowed)\b",
    re.IGNORECASE,
)


def said_alike(claim: str, statement: str) -> bool:
    """The claim says the statement with its very negations and modal words ("may", "shall", "not"…): the
    statement's verdict may confirm it, not only flag it or show its clause."""
    mine, theirs = _FORBIDS.sub(" prohibited ", claim), _FORBIDS.sub(" prohibited ", statement)
    return same_sense(claim, statement) and all((c.search(mine) is None) == (c.search(theirs) is None) for c in _ALIKE)


def same_sense(claim: str, statement: str) -> bool:
    """The claim says the statement the same way round, as far as its words show (`_DENIES`)."""
    return len(_DENIES.findall(claim)) % 2 == len(_DENIES.findall(statement)) % 2


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
        canonical = np.asarray(spec["statement_vectors"], dtype=np.float32)
        if (
            len(self.statements) != len(self.keys)
            or len(canonical) != len(self.keys)
            or len(self.prototype_words) != len(self.keys)
            or len(self.owner) != len(self.prototypes)
            or self.weights.shape != (len(FEATURES),)
        ):
            raise StatementsUnavailable(f"{FILE}'s statements, prototypes and weights do not match")
        self.evidence = evidence_clauses(memory, canonical)

    def features(
        self, claim: str, vector: np.ndarray, judge: Any, skip: int | None = None
    ) -> tuple[list[int], np.ndarray]:
        """The CANDIDATES statements closest to the claim (its bi-encoder vector given) and their FEATURES;
        `judge` is the cross-encoder's (Encoders.judge); `skip`, a prototype left out (training: the
        claim's own wording)."""
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

    def recognise(
        self, claims: list[str], vectors: np.ndarray, judge: Any, *, nda: bool = False
    ) -> list[Recognised | None]:
        """For each claim, the statement it makes, or None: of no statement, not surely one, or giving
        a value or a quotation. About an NDA (`nda`) a claim is read from NDA_THRESHOLD."""
        threshold = min(NDA_THRESHOLD, self.threshold) if nda else self.threshold
        out: list[Recognised | None] = []
        for claim, vector in zip(claims, vectors, strict=True):
            if _GIVES_WORDS.search(claim) or float(np.max(self.prototypes @ vector)) < NO_STATEMENT:
                out.append(None)
                continue
            chosen, x = self.features(claim, vector, judge)
            p = self.probabilities(x)
            j = int(np.argmax(p))
            i = chosen[j]
            sure = p[j] >= threshold and same_sense(claim, self.statements[i])
            read = Recognised(self.keys[i], self.statements[i], float(p[j]), confirms=bool(p[j] >= self.threshold))
            out.append(read if sure else None)
        return out


def is_nda(texts: list[str]) -> bool:
    """The contract calls itself a non-disclosure (or confidentiality, secrecy) agreement in its opening:
    59 of contractnli-dev's 61 NDAs, 3 of CUAD's 439 commercial contracts."""
    opening, used = [], 0
    for text in texts:
        if used >= NDA_OPENING:
            break
        opening.append(text[: NDA_OPENING - used])
        used += len(opening[-1])
    return bool(_CALLS_ITSELF_AN_NDA.search(" ".join(opening)))


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
