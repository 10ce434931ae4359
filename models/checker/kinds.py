"""A claim that a kind of clause is there, or is not ("liability is capped", "there is no non-compete"),
read from what the contract's clauses are (issue 65, item 1).

Three light models, trained by packaging/training/train_clause_kinds.py on CUAD v1's expert clause labels
and shipped as plain JSON in resources/claim_checker/kinds.json (checked against manifest.json before it
is read):
- the recogniser: a logistic regression over how the claim's bi-encoder vector (models/checker/encoder.py; the
  claim read without the words every such claim shares, `recognition_text`) stands to each kind's prototypes
  (a short name, a sentence, the learnable wordings of the kinds worded as claims, and six hands' wordings
  and denials of every kind): the nearest kind's cosine, its lead over the next, its share of the nearest
  prototypes (`recognition_features`). Under `recognise` the claim is of no known kind and the general reader
  decides it;
- the clause classifier: for each passage, P(the passage is a clause of kind k), one logistic regression a
  kind over the passage's words and word pairs (TF-IDF): held out by contract it told CUAD's kinds apart
  far better than the same regression over the bi-encoder's vectors (mean AUC 0.90, not 0.74). The
  contract has such a clause where its best passage reaches the kind's `present` (that passage is cited),
  and none where every passage stays under its `absent`; in between the kind reading says nothing, but for a
  claim that denies the clause: from the kind's `likely` (where the clause was there 70 times in 100, not 97) it is
  contradicted, citing the passage, for a flag that cites its clause asks less than "found", which certifies one.
A claim that the kind is absent ("there is no non-compete", "the supplier is free to compete") is found by
its words (`denies`) or a third small regression (`KindReader.denial`: the words that deny, the claim's words and runs
of words (`polarity_terms`), and how the claim stands to other hands' wordings and denials of its kind,
models/checker/sense.py), and its verdict flips:
contradicted where the clause is there, confirmed only where the contract surely has none (`none`). A claim is read
with the question it answers: where the recogniser is unsure of the claim's kind, a denial in words is read against
the kind the question surely asks about ("Does the agreement limit liability?"), and the clause of that kind is the
evidence shown first; never is a claim confirmed so. A claim
that gives a value (a digit: "capped at $1,000,000") is the values reader's, never this one's; so is a period in
words ("one year"), and a claim that quotes the contract is checked as quoted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import Any, NamedTuple

import numpy as np

from models.checker.manifest import ArtefactUnavailable, checked
from models.checker.sense import CUES, FORBIDS, POOL_FEATURES, cue_vector, pool_features
from models.checker.statements import GIVES_WORDS

FILE = "kinds.json"

# The words that deny a kind of clause is there; "may not compete" or "cannot assign" assert one. One feature of
# the denial model: alone it caught 138 of the 396 denials three hands wrote ("free to compete" escapes it).
_NEGATED = re.compile(
    r"\b(?:there\s+(?:is|are)\s+no|(?:contains?|includes?|has|have|provides?|imposes?|sets?)\s+no"
    r"|(?:does|do|did)\s*(?:not|n't)\s+(?:contain|include|have|provide|grant|impose|restrict|limit|require|cap|set"
    r"|address|specify|state|allow|permit|give|bar|prohibit|contemplate)"
    r"|(?:is|are)\s+not\s+(?:capped|limited|restricted|required|obliged|obligated|bound|exclusive|granted|subject)"
    r"|no\s+such|absent\s+from|lacks?|silent\s+(?:on|about|as\s+to)|nothing\s+in)\b"
    # "No license is granted" denies one; "No employee may be solicited" (or "Neither party may ...") asserts one
    r"|^\W*no(?:ne)?\b(?!.*\b(?:may|shall|will|can|must)\b)",
    re.IGNORECASE,
)
# A claim that a clause is not there in words `negated` does not know ("There's no IP assignment", "supplied
# without any warranty", "Neither party is required to ...", "free to compete"), unless a modal verb makes it a rule.
# Of the 396 denials three hands wrote for the kind reader, negated knows 138 and this 92 more; of their 1,386
# claims that a clause is there it takes 2, both "there's no limit" (true of a contract without the clause, too).
# Of 42 denials a fourth hand wrote to measure (bench/kind_denials.py), the two knew 15; 27 since this was widened
# after reading them.
_DENIES = re.compile(
    r"^(?!.*\b(?:may|shall|will|can|could|must|might)\b).*(?:\bthere(?:'|’)?s\s+no\b|\bthere\s+(?:is|are)(?:n't|\s+not)\b"
    r"|\b(?:places?|puts?|makes?|gives?|grants?)\s+no\b|\bwithout\s+any\s+(?:[\w-]+\s+){0,2}"
    r"(?:clause|provision|warranty|restriction|limit|cap|obligation)s?\b"
    r"|^\W*neither\s+(?:party|side)\s+(?:is\s+(?:required|obliged|obligated)|receives?|gets?)\b|\bneed\s+not\b"
    r"|\bnothing\s+(?:restricts?|prevents?|prohibits?|bars?|stops?|is)\b|(?:does|do)\s*(?:not|n't)\s+(?:prevent|forbid"
    r"|oblige|stop))"
    # a freedom denies a restriction, modal or not ("Either party may assign the agreement freely")
    r"|^(?!.*(?:\bnot\b|n't\b|\bcannot\b)).*\b(?:free\s+to|freely|without\s+triggering)\b",
    re.IGNORECASE,
)
# A denial hedged as a reader's search ("I couldn't find any audit clause", "We found no ...", "does not appear to
# include", "there doesn't seem to be", "never says how long"): how a model or a careful lawyer says a clause is not
# there. Kept out of `negated`, the denial model's feature, which learnt without it. Written after reading a fifth
# hand's denials (bench/kind_denials.py); measured on a sixth that nobody here read.
_SEARCHED = re.compile(
    r"\b(?:(?:could|can|did|do|does)\s*(?:not|n't)|cannot|(?:was|were|am)\s*(?:not|n't)\s+able\s+to|(?:was|am|were)\s+"
    r"unable\s+to)\s+(?:find|see|locate|identify|spot)\b"
    r"|\b(?:found|find|identified|located|see|saw)\s+no\b"
    r"|\b(?:does|do|did)\s*(?:not|n't)\s+(?:appear|seem)\s+to\s+(?:be\s+)?(?:contain|include|have|provide|grant|impose"
    r"|restrict|limit|require|cap|set|address|specify|state|allow|permit|give|bar|prohibit|stop|prevent|mention"
    r"|any|an?|silent)\b"
    r"|\bthere\s+(?:does|do)\s*(?:not|n't)\s+(?:appear|seem)\s+to\s+be\b"
    r"|\bnever\s+(?:says|mentions|addresses|specifies|states|provides|grants)\b|\bsays?\s+nothing\s+(?:about|on|of)\b"
    r"|\b(?:is|are)\s+not\s+(?:addressed|mentioned|covered|dealt\s+with|provided\s+for)\b",
    re.IGNORECASE,
)
# A value, in digits or a period in words ("renews for periods of one year each"), or a quotation: checked as given,
# by the values reader and the rules
_VALUE = re.compile(
    GIVES_WORDS.pattern
    + r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|sixty|ninety)"
    r"\s+(?:(?:calendar|business|consecutive)\s+)?(?:day|week|month|year)s?\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z][a-z]+")
_POLARITY_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# what every claim about a kind of clause says, whichever the kind: read without it, "The contract contains
# an audit clause" is nearest audit rights, not "The contract contains an insurance clause"
_SHARED = re.compile(
    r"\b(?:(?:the|this|that)\s+(?:agreement|contract)(?:'s)?|(?:under|in|of|by)\s+(?:the|this)\s+(?:agreement|contract)"
    r"|contains?|includes?|has|have|there\s+(?:is|are)|does\s+not|do\s+not|no|an?|the|clause|provisions?)\b",
    re.IGNORECASE,
)


DENIAL_FEATURES = 1 + len(CUES) + POOL_FEATURES  # negated, cue_vector, pool_features
RECOGNITION_FEATURES = 5  # recognition_features
NEIGHBOURS = 10  # the nearest prototypes whose kinds the recogniser counts
# The recogniser's probability at which the passage most like a clause of the claim's kind is shown first, where no
# reader cites a clause of its own (`KindReader.clause_like`): showing a clause promises less than a verdict, and
# below the verdict's bar the kind is still often the claim's. Chosen on cuad-kinds-dev (83 contracts the classifier
# learnt from, wordings 3-5: the experts' clause first 0.80 -> 0.88 at 0.2, 0.84 at 0.3, 0.82 at 0.1); on the held-out
# contracts of bench/engine_card.py's kinds set 0.70 -> 0.75 (../shared/checks/score_evidence.py)
SHOWN_AT = 0.2
# A claim the recogniser is unsure of is read as about the kind its question asks about only where that kind is among
# its ASKED_AMONG nearest: of a fifth hand's denials (bench/kind_denials.py), every one's own kind was among its three
# nearest, and an answer's other claims, about other kinds, are kept from the question's kind
ASKED_AMONG = 3


class KindsUnavailable(ArtefactUnavailable):
    """kinds.json is missing or altered: no claim is read by its kind of clause."""


def negated(claim: str) -> bool:
    """The claim says a kind of clause is not there (the denial model's first feature)."""
    return bool(_NEGATED.search(claim))


def denies(claim: str) -> bool:
    """The claim's words say a clause is not there: it is read as a denial whatever the denial model says, and
    never against other contracts (models/checker/reference.py), whose lack of the clause makes it true."""
    return negated(claim) or bool(_DENIES.search(claim) or _SEARCHED.search(claim))


def denial_features(
    claim: str, vector: np.ndarray, said: tuple[np.ndarray, np.ndarray], denied: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """The denial model's features of a claim (its recognition vector given) beside the known wordings of its kind
    (`said`) and their denials (`denied`), each as cue vectors and recognition vectors."""
    cues = cue_vector(claim)
    return np.concatenate([[float(negated(claim))], cues, pool_features(cues, vector, said, denied)])


def recognition_text(claim: str) -> str:
    """The claim without the words every claim about a kind of clause shares (what the recogniser embeds)."""
    kept = " ".join(_SHARED.sub(" ", claim).split())
    return re.sub(r"\s+([.,;:])", r"\1", kept).strip(" .") or claim


def words_of(text: str) -> list[str]:
    """The words (two letters or more, lower case) and word pairs the clause classifier reads."""
    words = _WORD.findall(text.lower())
    return words + [f"{a} {b}" for a, b in pairwise(words)]


def polarity_terms(text: str) -> list[str]:
    """The words and runs of two and three words the denial model reads ("couldn't find any", "free to"), with
    "may not", "cannot" read as "prohibited" (models/checker/sense.py)."""
    words = _POLARITY_WORD.findall(FORBIDS.sub(" prohibited ", text.replace("’", "'")).lower())
    return words + [" ".join(words[i : i + n]) for n in (2, 3) for i in range(len(words) - n + 1)]


def tfidf(terms: list[str], vocabulary: dict[str, int], idf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The terms' TF-IDF (sublinear, l2-normed, as scikit-learn's TfidfVectorizer computes it), as the columns
    that are not zero and their values."""
    counts: dict[int, int] = {}
    for w in terms:
        j = vocabulary.get(w)
        if j is not None:
            counts[j] = counts.get(j, 0) + 1
    idx = np.fromiter(counts, dtype=np.int64, count=len(counts))
    tf = (1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))) * idf[idx]
    return idx, tf / np.linalg.norm(tf) if len(tf) else tf


def passage_probabilities(
    weights: np.ndarray, bias: np.ndarray, vocabulary: dict[str, int], idf: np.ndarray, texts: list[str]
) -> np.ndarray:
    """(passages, kinds): P(the passage is a clause of that kind), from its TF-IDF."""
    z = np.tile(bias.astype(np.float64), (len(texts), 1))
    for i, text in enumerate(texts):
        idx, x = tfidf(words_of(text), vocabulary, idf)
        z[i] += weights[:, idx] @ x
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0))))


def recognition_features(
    prototypes: np.ndarray, owner: np.ndarray, claim: np.ndarray, kinds: int
) -> tuple[int, np.ndarray]:
    """The kind whose prototype is nearest the claim, and what the recogniser reads of it: that cosine, its
    lead over the next kind's, its share of the NEIGHBOURS nearest prototypes (and whether no kind has more),
    and the mean of its three nearest."""
    cosine, best = _cosines(prototypes, owner, claim, kinds)
    first, second = np.argsort(-best, kind="stable")[:2]
    votes = np.bincount(owner[np.argsort(-cosine, kind="stable")[:NEIGHBOURS]], minlength=kinds) / NEIGHBOURS
    top3 = float(np.sort(cosine[owner == first])[-3:].mean())
    x = [best[first], best[first] - best[second], votes[first], top3, float(votes[first] >= votes.max())]
    return int(first), np.asarray(x)


def nearest_kinds(prototypes: np.ndarray, owner: np.ndarray, claim: np.ndarray, kinds: int) -> list[int]:
    """The kinds, nearest the claim first (by each kind's prototype nearest it)."""
    return [int(k) for k in np.argsort(-_cosines(prototypes, owner, claim, kinds)[1], kind="stable")]


def _cosines(prototypes: np.ndarray, owner: np.ndarray, claim: np.ndarray, kinds: int) -> tuple[np.ndarray, np.ndarray]:
    """The claim's cosine with each prototype, and with each kind's prototype nearest it."""
    cosine = prototypes.astype(np.float64, copy=False) @ claim.astype(np.float64)  # no copy of float64 prototypes
    best = np.full(kinds, -1.0)
    np.maximum.at(best, owner, cosine)
    return cosine, best


def recognised(
    prototypes: np.ndarray, owner: np.ndarray, claim: np.ndarray, kinds: int, model: tuple[np.ndarray, float]
) -> tuple[int, float]:
    """The kind the claim is most likely about, and the recogniser's probability that it is (`model`: its
    weights and bias)."""
    k, x = recognition_features(prototypes, owner, claim, kinds)
    return k, float(1.0 / (1.0 + np.exp(-(x @ model[0] + model[1]))))


@dataclass(frozen=True)
class KindReading:
    """What the kind reading says of one claim."""

    kind: str  # the kind's key
    name: str  # in a lawyer's words ("non-compete clause")
    verdict: str  # "supported", "contradicted", "unsupported" (never made), or "" (the kind read, no verdict)
    passage: str | None  # the clause of this kind found (cited), where there is one
    present: float  # the best passage's P(clause of this kind)
    negated: bool
    best: str = ""  # the passage most like a clause of this kind, there or not: the closest evidence
    sure: bool = True  # the cited passage is a clause of this kind as surely as "found" asks, not only likely
    asked: bool = False  # the kind was read from the question the claim answers, not from the claim alone

    @property
    def words(self) -> str:
        """Which reading decided, for the pane."""
        if self.passage is not None and not self.sure:
            found = f"most likely a clause of this kind: {self.passage}"
        elif self.passage is not None:
            found = f"clause of this kind found: {self.passage}"
        else:
            found = "no clause of this kind in the contract"
        asked = " (the kind the question asks about)" if self.asked else ""
        return f"the kind of clause, read: {self.name}{asked}; {found}"


class ClauseLike(NamedTuple):
    """The passage most like a clause of the kind a claim names (`KindReader.clause_like`)."""

    passage: str
    kind: str  # its name, in a lawyer's words
    there: bool  # the passage is a clause of that kind, as surely as the kind reading's "found" asks


class KindReader:
    """kinds.json, ready to read claims."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.keys = [k["key"] for k in spec["kinds"]]
        self.names = [k["name"] for k in spec["kinds"]]
        classifier = spec["classifier"]
        self.vocabulary = {w: i for i, w in enumerate(classifier["terms"])}
        self.idf = np.asarray(classifier["idf"], dtype=np.float64)
        self.weights = np.asarray(classifier["weights"], dtype=np.float64)
        self.bias = np.asarray(classifier["bias"], dtype=np.float64)
        self.prototypes = np.asarray(spec["prototypes"]["vectors"], dtype=np.float64)
        self.owner = np.asarray(spec["prototypes"]["kind"], dtype=np.int64)
        t = spec["thresholds"]
        self.recognise = float(t["recognise"])
        self.recogniser = (
            np.asarray(spec["recogniser"]["weights"], dtype=np.float64),
            float(spec["recogniser"]["bias"]),
        )
        self.present, self.absent, self.none, self.likely = (
            np.asarray(t[x], dtype=np.float64) for x in ("present", "absent", "none", "likely")
        )
        self.card = spec.get("card", {})
        denial = spec["denial"]  # the denial model, and the hands' wordings (0) and denials (1) it weighs a claim by
        self.denial_weights = np.asarray(denial["weights"], dtype=np.float64)
        self.polarity_vocabulary = {w: i for i, w in enumerate(denial["terms"])}
        self.polarity_idf = np.asarray(denial["idf"], dtype=np.float64)
        self.polarity_weights = np.asarray(denial["term_weights"], dtype=np.float64)
        self.denial_bias = float(denial["bias"])
        self.denial_threshold = float(denial["threshold"])
        self.denial_doubt = float(denial["doubt"])
        self.known_rows = np.asarray(denial["rows"], dtype=np.int64)  # their rows of the prototypes
        self.known_denies = np.asarray(denial["denies"], dtype=bool)
        self.known_cues = np.asarray([cue_vector(t) for t in denial["texts"]]).reshape(-1, len(CUES))
        n = len(self.keys)
        if (
            self.weights.shape != (n, len(self.idf))
            or len(self.vocabulary) != len(self.idf)
            or len(self.owner) != len(self.prototypes)
            or any(len(x) != n for x in (self.bias, self.present, self.absent, self.none, self.likely))
            or self.denial_weights.shape != (DENIAL_FEATURES,)
            or not (len(self.polarity_vocabulary) == len(self.polarity_idf) == len(self.polarity_weights))
            or self.recogniser[0].shape != (RECOGNITION_FEATURES,)
            or not (len(self.known_rows) == len(self.known_denies) == len(self.known_cues))
            or (len(self.known_rows) and self.known_rows.max() >= len(self.prototypes))
        ):
            raise KindsUnavailable("kinds.json's classifier, thresholds and prototypes do not match its kinds")
        self._last: tuple[list[str], np.ndarray] | None = None  # the last document's passage probabilities

    def kind_of(self, claim: str, vector: np.ndarray, at: float | None = None) -> int | None:
        """The kind of clause the claim is about (`vector`: its recognition_text's bi-encoder vector), where the
        recogniser is that sure of it (`at`; by default as sure as a verdict needs); None where it is of no known
        kind, or gives a value."""
        if _VALUE.search(claim):
            return None
        k, p = recognised(self.prototypes, self.owner, vector, len(self.keys), self.recogniser)
        return k if p >= (self.recognise if at is None else at) else None

    def clause_like(
        self,
        claim: str,
        vector: np.ndarray,
        ids: list[str],
        texts: list[str],
        at: float | None = SHOWN_AT,
        asked: int | None = None,
    ) -> ClauseLike | None:
        """The passage most like a clause of the kind the claim is most likely about (recognised `at`), or else of the
        kind its question asks about (`asked`) where the claim may be about it: the evidence to show first where no
        reader cites a clause of its own."""
        k = self.kind_of(claim, vector, at)
        if k is None and self._may_answer(claim, vector, asked):
            k = asked
        if k is None or not ids:
            return None
        p = self.probabilities(texts)[:, k]
        best = int(np.argmax(p))
        return ClauseLike(ids[best], self.names[k], bool(p[best] >= self.present[k]))

    def reads_a_denial(self, claim: str, vector: np.ndarray) -> bool:
        """The claim says a contract has no clause of some kind: its words say so, or the denial model reads it so
        beside the kind it is nearest, however unsure the recogniser is of that kind."""
        if denies(claim):
            return True
        k, _ = recognition_features(self.prototypes, self.owner, vector, len(self.keys))
        return self.denial(claim, vector, k) >= self.denial_threshold

    def denial(self, claim: str, vector: np.ndarray, k: int) -> float:
        """The denial model's probability that the claim says the contract has no clause of kind k (its
        recognition vector given)."""
        mine = self.owner[self.known_rows] == k
        said, denied = mine & ~self.known_denies, mine & self.known_denies
        x = denial_features(
            claim,
            vector,
            (self.known_cues[said], self.prototypes[self.known_rows[said]]),
            (self.known_cues[denied], self.prototypes[self.known_rows[denied]]),
        )
        idx, words = tfidf(polarity_terms(claim), self.polarity_vocabulary, self.polarity_idf)
        z = float(x @ self.denial_weights + words @ self.polarity_weights[idx] + self.denial_bias)
        return float(1.0 / (1.0 + np.exp(-z)))

    def probabilities(self, texts: list[str]) -> np.ndarray:
        """(passages, kinds) for one document's passages; the last document's are kept (an answer's claims
        are read one after another against the same contract). Read into a local first: the window and a
        verification may read two contracts at once, and neither may return the other's."""
        last = self._last
        if last is None or last[0] != texts:
            last = (list(texts), passage_probabilities(self.weights, self.bias, self.vocabulary, self.idf, texts))
            self._last = last
        return last[1]

    def asked(self, question: str, vector: np.ndarray) -> int | None:
        """The kind of clause a question asks about ("Can they assign it?"), where the recogniser is as sure of it as a
        verdict needs (`vector`: the question's recognition_text read by the bi-encoder)."""
        return self.kind_of(question, vector) if question.strip() else None

    def _may_answer(self, claim: str, vector: np.ndarray, asked: int | None) -> bool:
        """The claim may be about the kind its question asks about: that kind is among its ASKED_AMONG nearest, and
        it gives no value."""
        if asked is None or _VALUE.search(claim):
            return False
        return asked in nearest_kinds(self.prototypes, self.owner, vector, len(self.keys))[:ASKED_AMONG]

    def _unsure_kind(self, claim: str, vector: np.ndarray, asked: int | None) -> int | None:
        """The kind a denial in words (`denies`) the recogniser is unsure of is read as: the kind its question asks
        about, where the claim may be about it; else the kind the recogniser reads at SHOWN_AT. Not a denial the
        denial model alone reads: "The agreement limits a party's ability to assign its rights" was read as denying
        the anti-assignment clause its question asked about (16 more false alarms among CUAD's 293 held-out claims
        of a clause the contract has)."""
        return asked if self._may_answer(claim, vector, asked) else self.kind_of(claim, vector, SHOWN_AT)

    def read(
        self, claim: str, vector: np.ndarray, ids: list[str], texts: list[str], asked: int | None = None
    ) -> KindReading | None:
        """The kind reading of one claim (the bi-encoder vector of its recognition_text given) against a
        contract's passages (their ids and texts); None where the claim is of no known kind. A claim whose words deny
        a clause of a kind the recogniser is unsure of is contradicted where the contract likely has a clause of the
        kind it is read as (`_unsure_kind`), and nothing else:
        - the kind its question asks about (`asked`), where the claim may be about it (bench/kind_denials.py, 241
          denials of a clause the contract has: a sixth hand's caught 132 -> 149, at 102 -> 110 false alarms among
          its 518 true denials);
        - else the kind the recogniser reads at SHOWN_AT (with the engine's second reading of commercial claims, 25
          more of a fourth hand's 241 were caught, at 11 more false alarms among 518). Not one the denial model alone
          reads so: "Neither party is liable for delays caused by events beyond its control" was contradicted by a
          cap on liability (13 more false alarms among 433 claims of kinds nobody trained on, bench/unseen_kinds.py).
        """
        words_deny = denies(claim)
        k = self.kind_of(claim, vector)
        unsure = k is None and words_deny
        if unsure:
            k = self._unsure_kind(claim, vector, asked)
        if k is None or not ids:
            return None
        p = self.probabilities(texts)[:, k]
        best = int(np.argmax(p))
        present, denial = float(p[best]), 1.0 if words_deny else self.denial(claim, vector, k)
        denied = denial >= self.denial_threshold
        there = present >= self.present[k]
        likely = denied and present >= self.likely[k]  # a denial is flagged from "likely there"; "found" asks more
        if unsure and not (there or likely):
            return None
        if there and self.denial_doubt <= denial < self.denial_threshold:
            verdict = ""  # it may deny the clause it names: neither "found" nor "contradicted"
        elif there:
            verdict = "contradicted" if denied else "supported"
        elif likely:
            verdict = "contradicted"
        elif present <= (self.none[k] if denied else self.absent[k]):
            verdict = "supported" if denied else "unsupported"
        else:
            verdict = ""
        cited = ids[best] if there or likely else None
        by_question = unsure and k == asked
        return KindReading(self.keys[k], self.names[k], verdict, cited, present, denied, ids[best], there, by_question)


@lru_cache(maxsize=1)
def shipped_kinds() -> KindReader | str:
    """The shipped kind reader, loaded once; or the sentence that says why it is not there."""
    try:
        return KindReader(json.loads(checked(FILE, KindsUnavailable)))
    except KindsUnavailable as exc:
        return str(exc)
    except (ValueError, KeyError, TypeError) as exc:
        return f"{FILE} could not be read ({type(exc).__name__}: {exc}): reinstall Assay with `make install`"
