"""Evidence by meaning: the passage of a contract that decides a claim, shown first.

Every passage of the document is scored by a small learned ranker (LightGBM LambdaRank, trained by
packaging/training/train_evidence_ranker.py on ContractNLI's annotated evidence) from:
- BM25 over the passages' content words (k1 = 1.2, b = 0.75): the words the claim shares;
- the bi-encoder's cosine (all-MiniLM-L6-v2 as published, int8): what it means;
- the exemplar memory: how close the passage is, by meaning, to the clauses annotators marked as
  evidence for claims like this one in other contracts ("Receiving Party shall not reverse engineer"
  is decided by a no-reverse-engineering clause, whatever its words), and a linear probe fitted from
  those contracts that tells such clauses from the others;
- the passage's place in the document, its length, and whether it is the title or a recital.
Each score also enters relative to the document's best, so a long contract and a short one compare.
The title and the recitals ("WHEREAS ...") never outrank an operative clause that holds at least half of
the claim's content words: a lawyer wants the clause that binds, not the preamble that announces it.

The same memory tells the contract checker what other contracts' annotators said of such a claim
(`Memory.verdict_features`). For such a claim the fine-tuned cross-encoder (packaging/training/train_cross_encoder.py)
then reads the claim and each of the ranker's first RERANK passages together, every word of one against
every word of the other: the passage it finds most likely to decide the claim (supported or contradicted,
not "not stated") is shown first, and what it says of the claim is the contract checker's to weigh
(`cross_read`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.verifier.text import STOPWORDS, TOKEN, canonical, stem

HOLDS_CLAIM = 0.5  # share of the claim's content words an operative clause must hold to outrank the preamble
CANDIDATES = 30  # passages with the highest BM25 the ranker reads (a contract's others follow, by BM25)
NEIGHBOURS = 50  # exemplar claims a probe learns from (one contract each, for ContractNLI's statements)
NEAREST_EXEMPLARS = 10  # the exemplar claims whose evidence clauses give the exemplar score
SAME_CLAIM = 0.85  # cosine at which an exemplar claim says the same kind of thing
EXEMPLAR_TOP = 5  # a passage's exemplar score: its mean cosine to the closest five evidence clauses
_RECITAL = re.compile(r"^\W*(?:whereas|recitals?|background|witnesseth|w\s?i\s?t\s?n\s?e\s?s\s?s)\b", re.I)
_OPERATIVE_START = re.compile(
    r"^\W*(?:(?:section|article|clause)\s+)?(?:1|i|one)(?:\.|\)|\s|$)|agree(?:s|d)?\s+as\s+follows|now,?\s+therefore",
    re.I,
)
VERDICTS = ("Entailment", "Contradiction", "NotMentioned")  # ContractNLI's, as its annotators said them
VERDICT_FEATURES = (
    "exemplars_entailed",
    "exemplars_contradicted",
    "exemplars_not_mentioned",
    "exemplars",
    "probe_best",
    "probe_margin",
    "contradicts_first",
    "contradicts_second",
    "like_entailing_clauses",
    "like_contradicting_clauses",
    "claim_cosine",
)
# A claim no exemplar knows is shown the passage the cross-encoder reads as deciding it only where that one is
# this much likelier to decide it than the ranker's first. Chosen on wordings and contracts held out of every
# training set (bench/unknown_claim_margin.py: the NDA statements in three other hands, the deciding clause
# first 0.48 -> 0.60; CUAD clauses of 70 contracts 0.48 -> 0.47, where the cross-encoder's own order gave 0.33)
UNKNOWN_CLAIM_MARGIN = 0.2
RERANK = 4  # the ranker's first passages the cross-encoder re-reads (held out, 4 beat 3 and cost 0.05 s a claim)
CROSS_FEATURES = (
    "cross_supported",  # the cross-encoder's probabilities for the passage shown first
    "cross_contradicted",
    "cross_not_stated",
    "cross_supported_best",  # and the highest over the passages it read
    "cross_contradicted_best",
)
MEANING = VERDICT_FEATURES + CROSS_FEATURES  # what the contract checker reads of a claim (Ranked.meaning)
FEATURES = (
    "bm25",
    "bm25_rank",
    "bm25_below_best",
    "cosine",
    "cosine_rank",
    "cosine_below_best",
    "exemplar",
    "exemplar_rank",
    "exemplar_below_best",
    "exemplar_neighbours",
    "probe",
    "probe_rank",
    "probe_below_best",
    "preamble",
    "position",
    "log_words",
    "claim_words_held",
)


def content(text: str) -> list[str]:
    return [stem(w) for w in TOKEN.findall(canonical(text)) if w not in STOPWORDS and len(w) > 2 and w != "yes"]


def preamble(texts: Sequence[str]) -> set[int]:
    """Passages that are the title or the recitals: a short first line, every "WHEREAS ..." passage,
    and what comes before the first operative clause ("1.", "NOW, THEREFORE", "agree as follows") when
    that clause comes early (a contract with no such marker keeps only its title and recitals)."""
    out = {i for i, t in enumerate(texts) if _RECITAL.match(t)}
    if texts and len(texts[0].split()) <= 15:
        out.add(0)
    limit = max(12, len(texts) // 4)
    for i, t in enumerate(texts[:limit]):
        if _OPERATIVE_START.search(t[:200]):
            out |= set(range(i))
            if re.search(r"agree(?:s|d)?\s+as\s+follows|now,?\s+therefore", t, re.I):
                out.add(i)  # the words that introduce the clauses
            break
    return out


@dataclass
class Memory:
    """Exemplars: claims of other contracts, every passage of those contracts, and which passages the
    annotators marked as deciding each claim."""

    claims: np.ndarray  # (n, 384) unit vectors
    documents: np.ndarray  # (n,) each claim's document (left out when training on that document)
    passages: np.ndarray  # (m, 384) unit vectors of every passage of those documents
    passage_documents: np.ndarray  # (m,) each passage's document
    evidence: np.ndarray  # (k, 2) pairs (claim, passage): the passage decides the claim
    verdicts: np.ndarray  # (n,) what the annotators said of each claim: one of VERDICTS
    _probes: dict[tuple[int, ...], Any] = field(default_factory=dict, repr=False)

    def neighbours(self, claim: np.ndarray, exclude: str | None = None, *, decided: bool = True) -> np.ndarray:
        """The exemplar claims that say the same kind of thing as this one, closest first: those whose
        contract decides them (with the clauses that do), or all of them."""
        similar = self.claims @ claim
        near = np.flatnonzero(similar >= SAME_CLAIM)  # a few of the memory's claims: filter those only
        if exclude is not None:
            near = near[self.documents[near] != exclude]
        if decided:
            near = near[self.verdicts[near] != "NotMentioned"]
        return np.asarray(near[np.argsort(-similar[near], kind="stable")][:NEIGHBOURS])

    def scores(self, passages: np.ndarray, claim: np.ndarray, exclude: str | None = None) -> tuple[np.ndarray, int]:
        """Each passage's exemplar score (its mean cosine to the closest evidence clauses of the exemplar
        claims), and how many exemplar claims said the same kind of thing."""
        near = self.neighbours(claim, exclude)
        clauses = self.evidence[np.isin(self.evidence[:, 0], near[:NEAREST_EXEMPLARS]), 1]
        if not len(near) or not len(passages) or not len(clauses):
            return np.zeros(len(passages)), 0
        cosines = passages @ self.passages[clauses].T
        top = min(EXEMPLAR_TOP, cosines.shape[1])
        return np.sort(cosines, axis=1)[:, -top:].mean(axis=1), len(near)

    def probe(self, passages: np.ndarray, claim: np.ndarray, exclude: str | None = None) -> np.ndarray:
        """Each passage's score by a linear probe that learnt, from the exemplar claims' contracts, which
        clauses decide such a claim and which do not (every other passage of those contracts is a
        negative): it tells the no-reverse-engineering clause from the confidentiality clause that shares
        its words; the contracts that never mention such a claim lend negatives only. Zero where no
        exemplar says the same kind of thing."""
        weights = self._probe(tuple(int(i) for i in self.neighbours(claim, exclude, decided=False)))
        return np.zeros(len(passages)) if weights is None else passages @ weights[:-1] + weights[-1]

    def _probe(self, near: tuple[int, ...]) -> np.ndarray | None:
        """Weights (and bias, last) telling the clauses that decide these exemplar claims from the rest."""
        if near not in self._probes:  # claims of one kind share their exemplars: one fit each kind
            rows, labels = [], []
            for i in near:
                mine = np.flatnonzero(self.passage_documents == self.documents[i])
                rows.append(self.passages[mine])
                labels.append(np.isin(mine, self.evidence[self.evidence[:, 0] == i, 1]))
            self._probes[near] = _linear(rows, labels)
        return self._probes[near]  # type: ignore[no-any-return]

    def _opposite(self, near: tuple[int, ...]) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
        """A probe telling the clauses that contradict such claims from those that entail them, and
        the two sets of clauses (as rows of `passages`: the cache stays small)."""
        key = (-1, *near)
        if key not in self._probes:
            held = self.evidence[np.isin(self.evidence[:, 0], near)]
            said = self.verdicts[held[:, 0]] == "Contradiction"
            self._probes[key] = (_linear([self.passages[held[:, 1]]], [said]), held[~said, 1], held[said, 1])
        weights, entailing, contradicting = self._probes[key]
        return weights, self.passages[entailing], self.passages[contradicting]

    def verdict_features(self, passages: np.ndarray, claim: np.ndarray, exclude: str | None = None) -> list[float]:
        """What the exemplars say of a claim about this contract (VERDICT_FEATURES): how often contracts
        entail, contradict or never mention such a claim; how clearly one clause of this contract looks
        like the clauses that decide it; and whether that clause looks like the ones that entail it or
        the ones that contradict it. Empty where no exemplar says the same kind of thing: the claim is
        then the words' to decide."""
        every = self.neighbours(claim, exclude, decided=False)
        if not len(every):
            return []
        shares = [float(np.mean(self.verdicts[every] == v)) for v in VERDICTS]
        near = tuple(int(i) for i in every)  # the ranker's probe: one fit serves both
        weights = self._probe(near)
        if weights is None or len(passages) < 2:
            return [*shares, float(len(every))] + [math.nan] * 7
        scores = passages @ weights[:-1] + weights[-1]
        first, second = np.argsort(-scores, kind="stable")[:2]
        opposite, entailing, contradicting = self._opposite(near)
        against = passages[[first, second]] @ opposite[:-1] + opposite[-1] if opposite is not None else [math.nan] * 2
        return [
            *shares,
            float(len(every)),
            float(scores[first]),
            float(scores[first] - scores[second]),
            float(against[0]),
            float(against[1]),
            _closest(entailing, passages[first]),
            _closest(contradicting, passages[first]),
            float(passages[first] @ claim),
        ]


def _linear(rows: list[np.ndarray], labels: list[np.ndarray]) -> np.ndarray | None:
    """A balanced logistic regression's weights and bias, or None where one class is missing."""
    y = np.concatenate(labels) if labels else np.zeros(0, dtype=bool)
    if not y.any() or y.all():
        return None
    from sklearn.linear_model import LogisticRegression

    # liblinear: ten times faster than lbfgs at this size, and a new kind of claim is fitted while the user waits
    fit = LogisticRegression(C=1.0, class_weight="balanced", solver="liblinear").fit(np.vstack(rows), y)
    return np.append(fit.coef_[0], fit.intercept_[0]).astype(np.float32)


def _closest(clauses: np.ndarray, passage: np.ndarray) -> float:
    """The mean cosine of a passage to its three closest clauses of a set (NaN for none)."""
    if not len(clauses):
        return math.nan
    return float(np.sort(clauses @ passage)[-3:].mean())


def cross_read(probabilities: np.ndarray) -> tuple[list[int], list[float]]:
    """The passages the cross-encoder read, most likely to decide the claim first (least likely "not
    stated"; ties keep the ranker's order), and what it says of the claim (CROSS_FEATURES). Its rows are
    supported, contradicted, not stated (models/checker/encoder.py CROSS_LABELS)."""
    order = [int(i) for i in np.argsort(probabilities[:, 2], kind="stable")]
    first = probabilities[order[0]]
    best = probabilities.max(axis=0)
    return order, [float(first[0]), float(first[1]), float(first[2]), float(best[0]), float(best[1])]


def _rank_of(scores: np.ndarray) -> np.ndarray:
    ranks = np.empty(len(scores))
    ranks[np.argsort(-scores, kind="stable")] = np.arange(len(scores))
    return ranks


@dataclass
class Ranked:
    """The passages found for one claim, best first."""

    ids: list[str]
    # MEANING: what the exemplars and the cross-encoder say of the claim; empty where no exemplar says the
    # same kind of thing (or no cross-encoder is loaded): the claim is then the words' to decide
    meaning: list[float] = field(default_factory=list)


@dataclass
class PassageIndex:
    """One document's evidence passages, indexed once for BM25 and the bi-encoder."""

    ids: list[str]
    texts: list[str]
    encoders: Any = None  # models.checker.encoder.Encoders (which imports this module)
    words: list[Counter[str]] = field(init=False)
    is_preamble: set[int] = field(init=False)

    def __post_init__(self) -> None:
        self.words = [Counter(content(t)) for t in self.texts]
        self.lengths = np.array([sum(c.values()) for c in self.words], dtype=float)
        self.mean_length = float(self.lengths.mean()) if len(self.lengths) else 1.0
        df: Counter[str] = Counter()
        for c in self.words:
            df.update(c.keys())
        n = len(self.texts)
        self.idf = {w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()}
        self.is_preamble = preamble(self.texts)
        self.row_of = {pid: i for i, pid in enumerate(self.ids)}  # citation id -> its place in ids and texts
        self._vectors: dict[int, np.ndarray] = {}  # passage -> its bi-encoder vector, embedded when first needed
        self._norm = 1.2 * (1 - 0.75 + 0.75 * self.lengths / max(self.mean_length, 1e-9))  # BM25's length norm
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # kept sparse: a long contract's are many

    def bm25(self, claim_words: list[str]) -> np.ndarray:
        scores = np.zeros(len(self.texts))
        for w in sorted(set(claim_words)):
            if w not in self.idf:
                continue
            if (posting := self._postings.get(w)) is None:  # the passages that use a word, counted once a document
                counts = np.array([c.get(w, 0) for c in self.words], dtype=float)
                at = np.flatnonzero(counts)
                posting = self._postings[w] = (at, counts[at])
            at, tf = posting  # elsewhere its term is 0.0, which adds nothing
            scores[at] += self.idf[w] * tf * 2.2 / (tf + self._norm[at])
        return scores

    def vectors_of(self, passages: Sequence[int]) -> np.ndarray:
        """The bi-encoder's vectors of these passages, embedding those not yet embedded: a long contract's
        passages that no claim's words point to are never read."""
        missing = [i for i in dict.fromkeys(passages) if i not in self._vectors]
        if missing:
            assert self.encoders is not None
            for i, v in zip(missing, self.encoders.embed([self.texts[i] for i in missing]), strict=True):
                self._vectors[i] = v
        return np.asarray([self._vectors[i] for i in passages], dtype=np.float32).reshape(len(passages), -1)

    def passage_vectors(self) -> np.ndarray:
        return self.vectors_of(range(len(self.texts)))

    def take_vectors(self, vectors: np.ndarray) -> None:
        """Every passage's vector as read before (kept with the document): none is embedded again."""
        if vectors.shape != (len(self.texts), 384) or vectors.dtype != np.float32:
            raise ValueError(f"{vectors.shape} {vectors.dtype} vectors for {len(self.texts)} passages")
        self._vectors = dict(enumerate(vectors))

    def candidates(self, claim: str) -> tuple[list[int], np.ndarray]:
        """The CANDIDATES passages with the highest BM25 for the claim (ties: document order), and BM25."""
        lexical = self.bm25(content(claim))
        return [int(i) for i in np.argsort(-lexical, kind="stable")[:CANDIDATES]], lexical

    def features(
        self, claim: str, vector: np.ndarray, memory: Memory | None, exclude: str | None = None
    ) -> tuple[list[int], np.ndarray]:
        """The candidate passages for one claim (its bi-encoder vector given) and their FEATURES; with no
        memory, as a claim no exemplar says the same kind of thing as (what the ranker also learns from)."""
        n = len(self.texts)
        chosen, everything = self.candidates(claim)
        lexical = everything[chosen]
        passages = self.vectors_of(chosen)
        cosine = passages @ vector
        exemplar, neighbours = memory.scores(passages, vector, exclude) if memory else (np.zeros(len(chosen)), 0)
        probe = memory.probe(passages, vector, exclude) if memory else np.zeros(len(chosen))
        wanted = set(content(claim))
        held = np.array([len(wanted & self.words[i].keys()) / max(len(wanted), 1) for i in chosen])
        m = len(chosen)
        return chosen, np.column_stack(
            [
                lexical,
                _rank_of(lexical),
                lexical - lexical.max(),
                cosine,
                _rank_of(cosine),
                cosine - cosine.max(),
                exemplar,
                _rank_of(exemplar) if neighbours else np.full(m, 99.0),
                exemplar - exemplar.max(),
                np.full(m, float(neighbours)),
                probe,
                _rank_of(probe) if neighbours else np.full(m, 99.0),
                probe - probe.max(),
                np.array([i in self.is_preamble for i in chosen], dtype=float),
                np.asarray(chosen) / max(n, 1),
                np.log1p(self.lengths[chosen]),
                held,
            ]
        )

    def rank_by_words(self, claim: str) -> Ranked:
        """BM25 alone: what Assay shows when the encoders are not there."""
        scores = self.bm25(content(claim))
        return self._ordered(claim, scores)

    def rank(self, claims: list[str], ranker: Any, memory: Memory) -> list[Ranked]:
        """For each claim, the passages that decide it, best first (the learned ranker's order)."""
        if not self.texts or not claims:
            return [Ranked([]) for _ in claims]
        assert self.encoders is not None
        vectors = self.encoders.embed(claims)
        read = [self.features(c, v, memory) for c, v in zip(claims, vectors, strict=True)]
        scores = np.asarray(ranker.predict(np.vstack([x for _, x in read]), num_threads=1), dtype=float)
        out, at = [], 0
        for claim, vector, (chosen, x) in zip(claims, vectors, read, strict=True):
            ranked = self.ordered(claim, chosen, scores[at : at + len(x)])
            ranked.meaning = self.verdict_features(claim, vector, memory)
            out.append(ranked)
            at += len(x)
        self._cross_read(claims, out)
        return out

    def _cross_read(self, claims: list[str], ranked: list[Ranked]) -> None:
        """The cross-encoder re-orders the first RERANK passages of each claim (the answer's pairs in one
        call) and, for a claim the exemplars know, adds what it says of the claim to `meaning`. A claim no
        exemplar knows (an NDA statement in a lawyer's words, a commercial clause) is re-ordered too: the
        contract checker learnt its verdict only from claims the exemplars know, but which passage decides
        a claim the cross-encoder reads in other wordings than theirs (UNKNOWN_CLAIM_MARGIN)."""
        if self.encoders is None or self.encoders.cross is None:
            for r in ranked:
                r.meaning = []
            return
        wanted = [i for i, r in enumerate(ranked) if r.ids]
        if not wanted:
            return
        pairs = [(claims[i], self.texts[self.row_of[pid]]) for i in wanted for pid in ranked[i].ids[:RERANK]]
        probabilities, at = self.encoders.judge(pairs), 0
        for i in wanted:
            head = min(RERANK, len(ranked[i].ids))
            known = bool(ranked[i].meaning)
            ranked[i].ids, said = self.reread(claims[i], ranked[i].ids, probabilities[at : at + head], known=known)
            if known:
                ranked[i].meaning = ranked[i].meaning + said
            at += head

    def reread(
        self, claim: str, ids: list[str], probabilities: np.ndarray, *, known: bool = True
    ) -> tuple[list[str], list[float]]:
        """Passages found for a claim, the first ones re-ordered by the cross-encoder's probabilities for
        them (the recitals still after an operative clause that holds the claim), and what it says of
        the claim (CROSS_FEATURES). For a claim the exemplars do not `know`, the ranker's order stands
        unless the cross-encoder is surer by UNKNOWN_CLAIM_MARGIN that another passage decides it."""
        head = len(probabilities)
        order, said = cross_read(probabilities)
        deciding = 1 - probabilities[:, 2]
        if not known and deciding[order[0]] - deciding[0] <= UNKNOWN_CLAIM_MARGIN:
            order = list(range(head))
        first = [self.row_of[ids[j]] for j in order] + [self.row_of[pid] for pid in ids[head:]]
        reordered = self._operative_first(claim, first)
        return [self.ids[i] for i in reordered], said

    def verdict_features(
        self, claim: str, vector: np.ndarray, memory: Memory, exclude: str | None = None
    ) -> list[float]:
        """What the exemplars say of a claim about this contract, read over its candidate passages."""
        return memory.verdict_features(self.vectors_of(self.candidates(claim)[0]), vector, exclude)

    def ordered(self, claim: str, chosen: list[int], scores: np.ndarray) -> Ranked:
        """The candidates by the ranker's scores, then the document's other passages by BM25."""
        best = [chosen[j] for j in np.argsort(-scores, kind="stable")]
        rest = [i for i in self.candidates_all(claim) if i not in set(chosen)]
        order = self._operative_first(claim, best + rest)
        return Ranked([self.ids[i] for i in order])

    def candidates_all(self, claim: str) -> list[int]:
        return [int(i) for i in np.argsort(-self.bm25(content(claim)), kind="stable")]

    def _ordered(self, claim: str, scores: np.ndarray) -> Ranked:
        order = [int(i) for i in np.argsort(-scores, kind="stable")]
        order = self._operative_first(claim, order)
        return Ranked([self.ids[i] for i in order])

    def _operative_first(self, claim: str, order: list[int]) -> list[int]:
        if not order or order[0] not in self.is_preamble:
            return order
        mine = set(content(claim))
        if not mine:
            return order
        for at, i in enumerate(order):
            if i not in self.is_preamble and len(mine & set(self.words[i])) / len(mine) >= HOLDS_CLAIM:
                return [i, *order[:at], *order[at + 1 :]]
        return order
