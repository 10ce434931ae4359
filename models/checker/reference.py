"""A claim that a contract has a clause of a kind no reader here knows ("the agreement contains a force majeure
clause"), read against other contracts (issue 65: kinds of clause no training set has).

Nothing here learnt the kind. What is known is how close such a claim comes, by the bi-encoder's cosine, to the
sentences of other contracts: resources/claim_checker/reference.npz holds every sentence of a few dozen CUAD
contracts (none the kind reader holds out; packaging/training/build_reference.py). Where this contract's closest
sentence is much further from the claim than the reference contracts' closest usually are (`closeness`: how many
of their standard deviations above or below their mean), the contract says nothing like it, and the claim is
flagged as never made. The threshold was chosen on CUAD's kinds (claims of kinds the readers know, on contracts
outside the reference), for false alarms; what it does on kinds nobody trained on is measured by
bench/unseen_kinds.py. A claim that denies a clause ("there is no arbitration clause") is never read so.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy.special import gammaln

from models.checker.manifest import ArtefactUnavailable, checked

FILE = "reference.npz"
MIN_WORDS = 4  # a sentence of fewer words is a heading or a number: no clause
_SENTENCE = re.compile(r"(?<=[.;:])\s+(?=[A-Z(\"“])")


class ReferenceUnavailable(ArtefactUnavailable):
    """reference.npz is missing or altered: claims of unknown kinds are left to the general reader."""


def sentences(texts: list[str]) -> list[str]:
    """The sentences of a contract's passages, as the reference contracts were cut."""
    return [s.strip() for t in texts for s in _SENTENCE.split(t) if len(s.split()) >= MIN_WORDS]


@dataclass(frozen=True)
class Sentences:
    """A contract's sentences as the reference reads them: each one's passage and bi-encoder vector."""

    passages: list[str]
    vectors: np.ndarray

    @classmethod
    def of(cls, ids: list[str], texts: list[str], embed: Any) -> Sentences:
        """The sentences of these passages (their citation ids and texts), embedded by `embed`."""
        owner = [(pid, s) for pid, text in zip(ids, texts, strict=True) for s in sentences([text])]
        vectors = embed([s for _, s in owner]) if owner else np.zeros((0, 384), dtype=np.float32)
        return cls([pid for pid, _ in owner], vectors)


@dataclass(frozen=True)
class Reference:
    """The reference contracts' sentence vectors (int8, a scale a row), which contract each is of, and the
    closeness under which a claim is never made."""

    vectors: np.ndarray  # (n, 384) int8
    scales: np.ndarray  # (n,) float32: vectors[i] * scales[i] is the unit vector
    contract: np.ndarray  # (n,) int: each sentence's contract, 0..k-1
    threshold: float
    card: dict[str, Any]

    def closeness(self, claim: np.ndarray, closest: float, sentences: int) -> float:
        """How far the contract's closest sentence to the claim (`closest`, a cosine; of `sentences` sentences)
        stands above (+) or below (-) the reference contracts' closest ones, in their standard deviations. A
        short contract's closest sentence is less close by chance alone: each reference contract's closest is
        the one expected of as many of its sentences, drawn at random."""
        cosines = (self.vectors.astype(np.float32) @ claim.astype(np.float32)) * self.scales
        best = np.array([_expected_max(cosines[self.contract == k], sentences) for k in range(self.contracts)])
        return float((closest - best.mean()) / max(float(best.std()), 1e-6))

    def closest(self, claim: np.ndarray, contract: Sentences) -> tuple[float, str] | None:
        """The claim's closeness (its bi-encoder vector given) to a contract, and the passage of the contract's
        closest sentence; None for a contract with no sentence."""
        if not contract.passages:
            return None
        cosines = contract.vectors @ claim
        best = int(np.argmax(cosines))
        return self.closeness(claim, float(cosines[best]), len(contract.passages)), contract.passages[best]

    @property
    def contracts(self) -> int:
        return int(self.contract.max()) + 1


def _expected_max(cosines: np.ndarray, n: int) -> float:
    """The expected highest of n of these values drawn at random without replacement: the i-th highest is the
    highest drawn with probability C(N - i, n - 1) / C(N, n)."""
    ordered = np.sort(cosines)[::-1]
    total = len(ordered)
    if n >= total:
        return float(ordered[0])
    i = np.arange(1, total - n + 2)
    log_p = (
        gammaln(total - i + 1)
        - gammaln(n)
        - gammaln(total - i - n + 2)
        - (gammaln(total + 1) - gammaln(n + 1) - gammaln(total - n + 1))
    )
    return float(ordered[: len(i)] @ np.exp(log_p))


@lru_cache(maxsize=1)
def shipped_reference() -> Reference | str:
    """The shipped reference contracts, loaded once; or the sentence that says why they are not there."""
    try:
        with np.load(io.BytesIO(checked(FILE, ReferenceUnavailable))) as arrays:
            return Reference(
                arrays["vectors"],
                arrays["scales"],
                arrays["contract"],
                float(arrays["threshold"]),
                json.loads(str(arrays["card"])),
            )
    except ReferenceUnavailable as exc:
        return str(exc)
    except (ValueError, KeyError, OSError) as exc:
        return f"{FILE} could not be read ({type(exc).__name__}: {exc}): reinstall Assay with `make install`"
