"""A claim that a contract has a clause of a kind no reader here knows ("the agreement contains a force majeure
clause"), read against other contracts (issue 65: kinds of clause no training set has).

Nothing here learnt the kind. What is known is how close such a claim comes to what other contracts say:
resources/claim_checker/reference.npz holds every sentence of a few dozen CUAD contracts (none the kind reader holds
out; packaging/training/build_reference.py) as bi-encoder vectors, and how many of those contracts use each word.
Three things tell a contract that says nothing like the claim (FEATURES):
- its three closest sentences, by the bi-encoder's cosine, stand further from the claim than the reference
  contracts' three closest usually do (in their standard deviations);
- its closest sentence is far from the claim;
- it never uses the claim's words, each weighed by how rare it is in contracts ("jury" counts, "party" hardly).
A logistic regression weighs them. It learnt from claims of CUAD's kinds on other contracts, and its threshold was
chosen with each kind held out in turn, so that it is the threshold of a kind it never saw. Over it, the claim is
flagged as never made. What it does on kinds nobody trained on is measured by bench/unseen_kinds.py. A claim that
denies a clause ("there is no arbitration clause") is never read so.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from models.checker.features import content_stems
from models.checker.manifest import ArtefactUnavailable, checked
from models.verifier.text import TOKEN, canonical, stem

FILE = "reference.npz"
MIN_WORDS = 4  # a sentence of fewer words is a heading or a number: no clause
CLOSEST = 3  # a contract's closest sentences whose mean cosine is compared with the reference contracts'
FEATURES = ("closest_three", "closest", "words_missing")
_SENTENCE = re.compile(r"(?<=[.;:])\s+(?=[A-Z(\"“])")


class ReferenceUnavailable(ArtefactUnavailable):
    """reference.npz is missing or altered: claims of unknown kinds are left to the general reader."""


def sentences(texts: list[str]) -> list[str]:
    """The sentences of a contract's passages, as the reference contracts were cut."""
    return [s.strip() for t in texts for s in _SENTENCE.split(t) if len(s.split()) >= MIN_WORDS]


@dataclass(frozen=True)
class Sentences:
    """A contract as the reference reads it: each sentence's passage and bi-encoder vector, and the words it uses."""

    passages: list[str]
    vectors: np.ndarray
    words: frozenset[str]  # the contract's content words, stemmed as features.content_stems stems them

    @classmethod
    def of(cls, ids: list[str], texts: list[str], embed: Any) -> Sentences:
        """The sentences of these passages (their citation ids and texts), embedded by `embed`."""
        owner = [(pid, s) for pid, text in zip(ids, texts, strict=True) for s in sentences([text])]
        vectors = embed([s for _, s in owner]) if owner else np.zeros((0, 384), dtype=np.float32)
        return cls([pid for pid, _ in owner], vectors, frozenset(w for t in texts for w in content_stems(t)))


@dataclass(frozen=True)
class Reading:
    """What the reference contracts say of a claim about one contract."""

    never_made: float  # the probability that the contract has no such clause
    closest: str  # the passage of the contract's closest sentence
    features: list[float]  # FEATURES
    missing: list[str]  # the claim's words the contract never uses, rarest first


@dataclass(frozen=True)
class Reference:
    """The reference contracts' sentence vectors (int8, a scale a row), which contract each is of, in how many of
    them each word is used, and the regression that weighs FEATURES, with the probability over which a claim is
    never made."""

    vectors: np.ndarray  # (n, 384) int8
    scales: np.ndarray  # (n,) float32: vectors[i] * scales[i] is the unit vector
    contract: np.ndarray  # (n,) int: each sentence's contract, 0..k-1
    used_by: dict[str, int]  # stemmed word -> how many reference contracts use it
    weights: np.ndarray  # (len(FEATURES) + 1,): the regression's, bias last
    threshold: float
    card: dict[str, Any]

    def features(self, claim: str, vector: np.ndarray, contract: Sentences) -> tuple[list[float], int, list[str]]:
        """FEATURES of a claim (its text and bi-encoder vector) about a contract; the contract's closest sentence;
        and the claim's words the contract never uses, rarest first."""
        cosines = contract.vectors @ vector
        order = np.argsort(-cosines, kind="stable")
        theirs = (self._floats @ vector.astype(np.float32)) * self.scales
        their_three = np.array([np.sort(one)[-CLOSEST:].mean() for one in np.split(theirs, self._starts)])
        three = float(cosines[order[:CLOSEST]].mean())
        words = sorted(set(content_stems(claim)), key=lambda w: (self.used_by.get(w, 0), w))
        rarity = {w: self.rarity(w) for w in words}
        missing = [w for w in words if w not in contract.words]
        features = [
            (three - float(their_three.mean())) / max(float(their_three.std()), 1e-6),
            float(cosines[order[0]]),
            sum(rarity[w] for w in missing) / max(sum(rarity.values()), 1e-6),
        ]
        return features, int(order[0]), missing

    def read(self, claim: str, vector: np.ndarray, contract: Sentences) -> Reading | None:
        """What the reference contracts say of the claim about this contract; None for a contract with no sentence."""
        if not contract.passages:
            return None
        features, closest, missing = self.features(claim, vector, contract)
        score = float(np.dot(self.weights[:-1], features) + self.weights[-1])
        return Reading(1 / (1 + math.exp(-score)), contract.passages[closest], features, missing)

    def rarity(self, word: str) -> float:
        """How rare a stemmed word is in contracts: the log of one over the share of reference contracts using it."""
        return math.log((self.contracts + 1) / (self.used_by.get(word, 0) + 1))

    @property
    def contracts(self) -> int:
        return int(self.contract.max()) + 1

    @cached_property
    def _floats(self) -> np.ndarray:
        """The vectors as float32, converted once (13 MB), not for every claim."""
        return self.vectors.astype(np.float32)

    @cached_property
    def _starts(self) -> np.ndarray:
        """Where each reference contract's sentences start but the first (they are stored contract by contract)."""
        return np.flatnonzero(np.diff(self.contract)) + 1


def as_said(stems: list[str], claim: str) -> list[str]:
    """The claim's own words for these stems, in its order: what the pane names."""
    wanted = set(stems)
    return list(dict.fromkeys(w for w in TOKEN.findall(canonical(claim)) if stem(w) in wanted))


@lru_cache(maxsize=1)
def shipped_reference() -> Reference | str:
    """The shipped reference contracts, loaded once; or the sentence that says why they are not there."""
    try:
        with np.load(io.BytesIO(checked(FILE, ReferenceUnavailable))) as arrays:
            card = json.loads(str(arrays["card"]))
            if card.get("features") != list(FEATURES):
                raise ValueError(f"its regression reads {card.get('features')}, not {list(FEATURES)}")
            return Reference(
                arrays["vectors"],
                arrays["scales"],
                arrays["contract"],
                json.loads(str(arrays["used_by"])),
                arrays["weights"].astype(np.float64),
                float(arrays["threshold"]),
                card,
            )
    except ReferenceUnavailable as exc:
        return str(exc)
    except (ValueError, KeyError, OSError) as exc:
        return f"{FILE} could not be read ({type(exc).__name__}: {exc}): reinstall Assay with `make install`"
