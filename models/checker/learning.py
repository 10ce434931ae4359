"""The claim checker's fast parts refitted on a project's own human labels, and the test that lets the
refit speak for the project only where it is better than what ships.

What is refitted, over what the shipped engine already computes of each point (`Observation`): a decision
head (a logistic regression, standardised inputs) that reads the shipped checkers' probabilities, the
contract checker's MEANING (what the shipped exemplar memory and the cross-encoder say), the verifier
rules' outcome and the firm's own exemplars (how its reviewers tagged the claims most like this one in its
other documents: a due-diligence checklist asks the same questions of every contract); its calibration
is the regression's; its thresholds are chosen on its own held-out probabilities (grouped by document):
`flag_` where at most FALSE_ALARMS of right points were flagged, `support_` the highest where "supported"
was right SUPPORT_PRECISION of the time. The encoders, the ranker and the shipped models are never refitted.

`CheckerHead` is an estimator of one shape: `fit(points, labels)` returns it fitted (learned attributes end
in `_`), `predict_proba`/`assess`/`predict` read it, `to_json`/`from_json` keep it as data (no pickle),
and `card_` says what it learnt from. models/checker/adoption.py holds the never-worse test that decides
whether a refit speaks. `speaking` makes a copy of the engine whose checkers note what they computed of
each claim and, given a fitted head, decide by it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from models.checker.engine import ClaimEngine
from models.checker.features import ABSENCE, Evidence, content_stems, measure
from models.checker.model import Assessment, ClaimChecker
from models.checker.ranking import MEANING
from models.verifier import INCORRECT, NEEDS_REVIEW, QUOTED, SUPPORTED, UNCONFIRMED

FORMAT = "assay-learned-checker/1"
FALSE_ALARMS = 0.10  # the flag threshold's target on held-out right points (the adoption bound is above it)
SUPPORT_PRECISION = 0.90  # "supported" below the threshold where it was right this often
ALPHA = 0.05
FOLDS = 5
NEIGHBOURS = 10  # the firm's exemplar claims that vote on a claim
SAME_CLAIM = 0.8  # cosine at which two claims ask the same thing
WORD_BINS = 512
_MEANING_READ = (
    "exemplars_entailed",
    "exemplars_contradicted",
    "exemplars_not_mentioned",
    "cross_supported",
    "cross_contradicted",
    "cross_not_stated",
    "cross_supported_best",
    "cross_contradicted_best",
)
_MEANING_AT = [MEANING.index(name) for name in _MEANING_READ]
INPUTS = (
    "p_words",
    "has_meaning",
    "p_meaning",
    "contradiction",
    *_MEANING_READ,
    "rule_incorrect",
    "rule_supported",
    "firm_share_same",
    "firm_same",
    "firm_share_nearest",
    "firm_closest",
)


@dataclass(frozen=True)
class Observation:
    """What the shipped engine computed of one point, and its verdict."""

    document: str  # the held-out folds are drawn by document
    claim: str
    kind: str  # features.KINDS
    rule: str  # the verifier rules' verdict
    p_words: float  # the words-only checker's calibrated probability that the document does not support it
    c_words: float
    decides: bool  # not a claim of silence: flagged or confirmed at all
    rule_stands: bool  # a rule's flag stands on its own for this kind (where the contract checker does not decide)
    meaning: tuple[float, ...] = ()  # MEANING, where the contract checker read the claim
    p_meaning: float | None = None
    c_meaning: float | None = None
    vector: tuple[float, ...] | None = None  # the claim's bi-encoder vector, for the firm's exemplars
    shipped: str = UNCONFIRMED  # the shipped engine's verdict on the point

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def _row(o: Observation, firm: Sequence[float]) -> list[float]:
    meaning = [0.0 if math.isnan(o.meaning[i]) else o.meaning[i] for i in _MEANING_AT] if o.meaning else [0.0] * 8
    deciding_c = o.c_meaning if o.c_meaning is not None else o.c_words
    return [
        _logit(o.p_words),
        1.0 if o.meaning else 0.0,
        _logit(o.p_meaning) if o.p_meaning is not None else 0.0,
        deciding_c,
        *meaning,
        1.0 if o.rule == INCORRECT else 0.0,
        1.0 if o.rule == SUPPORTED else 0.0,
        *firm,
    ]


@dataclass
class Exemplars:
    """The firm's labelled claims: unit vectors, whether each was wrong, and its document."""

    vectors: np.ndarray
    wrong: np.ndarray
    documents: np.ndarray

    def votes(self, points: Sequence[Observation], prior: float, *, exclude_own: bool = True) -> np.ndarray:
        """How the firm tagged claims like each one in its other documents (`exclude_own`): the share wrong of
        those that ask the same thing (with one vote of the prior: never 0 or 1 on few), how many, the share
        wrong of the nearest NEIGHBOURS, the closest cosine; the prior's where there is nothing to compare."""
        out = np.tile([prior, 0.0, prior, 0.0], (len(points), 1))
        have = [i for i, o in enumerate(points) if o.vector is not None]
        if not have or not len(self.wrong):
            return out
        sims = np.asarray([points[i].vector for i in have], dtype=np.float32) @ self.vectors.T
        if exclude_own:
            own = np.asarray([points[i].document for i in have], dtype=object)[:, None] == self.documents[None, :]
            sims[own] = -np.inf
        same = sims >= SAME_CLAIM
        count = same.sum(axis=1)
        k = min(NEIGHBOURS, sims.shape[1])
        nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        near = np.take_along_axis(sims, nearest, axis=1)
        valid = np.isfinite(near)
        seen = valid.any(axis=1)
        wrong = self.wrong.astype(float)
        share_near = (wrong[nearest] * valid).sum(axis=1) / np.maximum(valid.sum(axis=1), 1)
        found = np.column_stack(
            [(same @ wrong + prior) / (count + 1), np.log1p(count), share_near, np.where(valid, near, -1.0).max(axis=1)]
        )
        rows = np.asarray(have)
        out[rows[seen]] = found[seen]
        return out


def _exemplars(points: Sequence[Observation], wrong: np.ndarray) -> Exemplars:
    with_vector = [i for i, o in enumerate(points) if o.vector is not None]
    vectors = np.asarray([points[i].vector for i in with_vector], dtype=np.float32)
    vectors = vectors.reshape(len(with_vector), -1) if len(with_vector) else np.zeros((0, 0), dtype=np.float32)
    documents = np.asarray([points[i].document for i in with_vector], dtype=object)
    return Exemplars(vectors, wrong[with_vector].astype(bool), documents)


def words_vector(claim: str) -> np.ndarray:
    """A claim's content words, hashed into WORD_BINS, as a unit vector: the firm's exemplars where the
    bi-encoder is not there."""
    vector = np.zeros(WORD_BINS, dtype=np.float32)
    for word in set(content_stems(claim)):
        vector[zlib.crc32(word.encode()) % WORD_BINS] = 1.0
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def folds(documents: Sequence[str], k: int, seed: int) -> list[np.ndarray]:
    """Each point's fold, k folds of whole documents drawn with the seed."""
    names = sorted(set(documents))
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {names[j]: rank % k for rank, j in enumerate(order)}
    at = np.array([fold_of[d] for d in documents])
    return [np.flatnonzero(at == f) for f in range(k)]


def _flag_threshold(p: np.ndarray, wrong: np.ndarray, target: float) -> float:
    """The lowest threshold at which at most `target` of right points are flagged (p >= threshold)."""
    right = np.sort(p[~wrong])[::-1]
    if not len(right):
        return 0.5
    allowed = math.floor(target * len(right))  # right points that may lie at or above the threshold
    return float(right[allowed] + 1e-9) if allowed < len(right) else float(right[-1])


def _support_threshold(p: np.ndarray, wrong: np.ndarray, precision: float) -> float:
    """The highest threshold below which (p <= threshold) at least `precision` of points were right."""
    order = np.argsort(p, kind="stable")
    right_so_far = np.cumsum(~wrong[order])
    share = right_so_far / np.arange(1, len(order) + 1)
    good = np.flatnonzero(share >= precision)
    return float(p[order][good[-1]]) if len(good) else -1.0


@dataclass
class CheckerHead:
    """The decision head, its calibration and thresholds, and the firm's exemplars, fitted to a project's tags."""

    C: float = 0.5
    folds: int = FOLDS
    false_alarms: float = FALSE_ALARMS
    support_precision: float = SUPPORT_PRECISION
    seed: int = 0
    card_: dict[str, Any] = field(default_factory=dict)

    def fit(self, points: Sequence[Observation], labels: Sequence[bool]) -> CheckerHead:
        """Fit on points and their tags (True: the point is wrong)."""
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

        wrong = np.asarray(labels, dtype=bool)
        if len(points) != len(wrong) or wrong.all() or not wrong.any():
            raise ValueError("a checker is fitted on right and wrong points both")
        with threadpool_limits(1):  # matrices of a few hundred rows: BLAS threads on a busy laptop cost seconds
            self._fit_head(points, wrong)
            held = self._inner_probabilities(points, wrong)
        self.flag_ = _flag_threshold(held, wrong, self.false_alarms)
        self.support_ = _support_threshold(held, wrong, self.support_precision)
        self.card_ = {
            "points": len(points),
            "wrong": int(wrong.sum()),
            "documents": len(set(o.document for o in points)),
            "inputs": list(INPUTS),
            "thresholds": {"flag": self.flag_, "support": self.support_},
        }
        return self

    def _fit_head(self, points: Sequence[Observation], wrong: np.ndarray) -> None:
        from sklearn.linear_model import LogisticRegression

        self.prior_ = float(wrong.mean())
        self.exemplars_ = _exemplars(points, wrong)
        votes = self.exemplars_.votes(points, self.prior_)
        rows = np.asarray([_row(o, list(v)) for o, v in zip(points, votes, strict=True)])
        self.mean_ = rows.mean(axis=0)
        self.scale_ = np.where(rows.std(axis=0) > 1e-9, rows.std(axis=0), 1.0)
        # liblinear: lbfgs took seconds a fit on a loaded two-core laptop, and the test fits 36 heads
        fit = LogisticRegression(C=self.C, solver="liblinear", max_iter=1000, random_state=self.seed).fit(
            (rows - self.mean_) / self.scale_, wrong
        )
        self.coef_, self.intercept_ = fit.coef_[0].astype(float), float(fit.intercept_[0])

    def _inner_probabilities(self, points: Sequence[Observation], wrong: np.ndarray) -> np.ndarray:
        """Each point's probability from a head fitted without its document (the thresholds' data)."""
        documents = [o.document for o in points]
        k = min(self.folds, len(set(documents)))
        if k < 2:
            return self.predict_proba(points)
        held = np.empty(len(points))
        for test in folds(documents, k, self.seed + 1):
            train = np.setdiff1d(np.arange(len(points)), test)
            if wrong[train].all() or not wrong[train].any():
                held[test] = wrong[train].mean()
                continue
            inner = CheckerHead(self.C, self.folds, self.false_alarms, self.support_precision, self.seed)
            inner._fit_head([points[i] for i in train], wrong[train])
            held[test] = inner.predict_proba([points[i] for i in test], exclude_own=False)
        return held

    def predict_proba(self, points: Sequence[Observation], *, exclude_own: bool = True) -> np.ndarray:
        """The probability that each point is wrong (`exclude_own`: the firm's exemplars of its own document
        do not vote, as when it was fitted)."""
        if not points:
            return np.zeros(0)
        votes = self.exemplars_.votes(points, self.prior_, exclude_own=exclude_own)
        rows = np.asarray([_row(o, list(v)) for o, v in zip(points, votes, strict=True)])
        z = ((rows - self.mean_) / self.scale_) @ self.coef_ + self.intercept_
        return np.asarray(1 / (1 + np.exp(-z)))

    def assess(self, point: Observation, passage: str | None) -> Assessment:
        """The point as the engine's decision reads a checker's word."""
        p = float(self.predict_proba([point], exclude_own=False)[0])
        contradiction = point.c_meaning if point.c_meaning is not None else point.c_words
        flagged = point.decides and p >= self.flag_
        supported = point.decides and p <= self.support_
        return Assessment(p, contradiction, passage, bool(flagged), bool(supported), point.kind)

    def predict(self, points: Sequence[Observation], *, exclude_own: bool = False) -> list[str]:
        """Each point's verdict as the engine would give it with this head deciding (engine._decided)."""
        p = self.predict_proba(points, exclude_own=exclude_own)
        return [
            _verdict(o, bool(o.decides and q >= self.flag_), bool(o.decides and q <= self.support_))
            for o, q in zip(points, p, strict=True)
        ]

    # ------------------------------------------------------------ as data

    def to_json(self) -> str:
        e = self.exemplars_
        data = {
            "format": FORMAT,
            "inputs": list(INPUTS),
            "params": {
                "C": self.C,
                "folds": self.folds,
                "false_alarms": self.false_alarms,
                "support_precision": self.support_precision,
                "seed": self.seed,
            },
            "mean": [round(float(x), 8) for x in self.mean_],
            "scale": [round(float(x), 8) for x in self.scale_],
            "coef": [round(float(x), 8) for x in self.coef_],
            "intercept": round(self.intercept_, 8),
            "prior": round(self.prior_, 8),
            "flag": self.flag_,
            "support": self.support_,
            "exemplars": {
                "vectors": [[round(float(x), 4) for x in v] for v in e.vectors],
                "wrong": [bool(w) for w in e.wrong],
                "documents": [str(d) for d in e.documents],
            },
            "card": self.card_,
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> CheckerHead:
        data = json.loads(text)
        if data.get("format") != FORMAT or data.get("inputs") != list(INPUTS):
            raise ValueError("the fitted checker was made by another version of Assay: fit it again")
        head = cls(**data["params"])
        head.mean_, head.scale_ = np.asarray(data["mean"]), np.asarray(data["scale"])
        head.coef_, head.intercept_ = np.asarray(data["coef"]), float(data["intercept"])
        head.prior_, head.flag_, head.support_ = float(data["prior"]), float(data["flag"]), float(data["support"])
        e = data["exemplars"]
        vectors = np.asarray(e["vectors"], dtype=np.float32).reshape(len(e["wrong"]), -1)
        head.exemplars_ = Exemplars(
            vectors, np.asarray(e["wrong"], dtype=bool), np.asarray(e["documents"], dtype=object)
        )
        head.card_ = data["card"]
        return head


def sha256_of(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _verdict(o: Observation, flagged: bool, supported: bool) -> str:
    """engine._decided's verdict with this word from the checker (a quotation's, and what the rules alone
    decide, stay the shipped engine's)."""
    if o.shipped in (QUOTED, NEEDS_REVIEW) or o.rule == NEEDS_REVIEW:
        return o.shipped
    if o.rule == INCORRECT and o.rule_stands:
        return INCORRECT
    if flagged:
        return INCORRECT
    if supported and not (o.rule == INCORRECT and not o.meaning):
        return SUPPORTED
    return UNCONFIRMED


# ---------------------------------------------------------------- the engine noting what it computed, or deciding by


class Notes:
    """What the engine's checkers computed of each claim of the answer last checked, by claim text."""

    def __init__(self) -> None:
        self.by_claim: dict[str, Observation] = {}

    def clear(self) -> None:
        self.by_claim.clear()


class _Words:
    """The words-only checker as the engine calls it: noting each claim and, with a head, deciding by it."""

    reads_meaning = False

    def __init__(
        self, base: ClaimChecker, head: CheckerHead | None, notes: Notes, embed: Callable[[list[str]], Any] | None
    ) -> None:
        self.base, self.head, self.notes, self.embed = base, head, notes, embed
        self.rules_stand = base.rules_stand
        self.held_out = base.held_out

    def assess_many(
        self, claims: list[tuple[str, str]], evidence: Evidence, question: str = ""
    ) -> list[Assessment | None]:
        measured = [measure(c, evidence, rule) for c, rule in claims]
        kept = [(claim, rule, m) for (claim, rule), m in zip(claims, measured, strict=True) if m is not None]
        kind = evidence.kind_of_answer(question)
        decided = self.base._decide(
            [c for c, _, _ in kept], [m.values for *_, m in kept], [m.passage for *_, m in kept], kind
        )
        claims_kept = [c for c, _, _ in kept]
        vectors = self.embed(claims_kept) if self.embed is not None and kept else [words_vector(c) for c in claims_kept]
        out: list[Assessment] = []
        for (claim, rule, _), a, v in zip(kept, decided, vectors, strict=True):
            o = Observation(
                document="",
                claim=claim,
                kind=kind,
                rule=rule,
                p_words=a.p_unsupported,
                c_words=a.p_contradicted,
                decides=ABSENCE.search(claim) is None,
                rule_stands=kind in self.base.rules_stand,
                vector=None if v is None else tuple(float(x) for x in v),
            )
            self.notes.by_claim[claim] = o
            out.append(self.head.assess(o, a.passage) if self.head is not None else a)
        found = iter(out)
        return [None if m is None else next(found) for m in measured]


class _Meaning:
    """The contract checker as the engine calls it: noting what it read of each claim and, with a head,
    deciding by it."""

    reads_meaning = True

    def __init__(self, base: ClaimChecker, head: CheckerHead | None, notes: Notes) -> None:
        self.base, self.head, self.notes = base, head, notes

    def assess_meaning(
        self, claims: list[str], meaning: list[list[float]], by_words: list[Assessment]
    ) -> list[Assessment]:
        decided = self.base.assess_meaning(claims, meaning, by_words)
        out = []
        for claim, x, a in zip(claims, meaning, decided, strict=True):
            o = self.notes.by_claim[claim]
            o = replace(
                o,
                meaning=tuple(float(v) for v in x),
                p_meaning=a.p_unsupported,
                c_meaning=a.p_contradicted,
                rule_stands=False,
            )
            self.notes.by_claim[claim] = o
            out.append(self.head.assess(o, a.passage) if self.head is not None else a)
        return out


def speaking(engine: ClaimEngine, head: CheckerHead | None = None) -> tuple[ClaimEngine, Notes]:
    """A copy of the shipped engine whose checkers note what they computed of each claim (`Notes`) and, given
    a fitted head, decide by it; documents prepared by `engine` are read by the copy as they are."""
    notes = Notes()
    spoken = copy.copy(engine)
    if engine.checker is None:
        return spoken, notes
    embed = engine.encoders.embed if engine.encoders is not None else None
    spoken.checker = _Words(engine.checker, head, notes, embed)  # type: ignore[assignment]
    if engine.encoders is not None and engine.whole_cascade:
        encoders = copy.copy(engine.encoders)
        encoders.checker = _Meaning(engine.encoders.checker, head, notes)
        spoken.encoders = encoders
    return spoken, notes
