"""LeMAJ answer scores from tag counts (section 3.2); undefined (None, shown "—") when a denominator is 0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from models.vocabulary import Tag


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@dataclass(frozen=True)
class Scores:
    correct: int = 0
    incorrect: int = 0
    irrelevant: int = 0
    missing: int = 0

    @classmethod
    def of(cls, tags: Iterable[Tag | None]) -> Scores:
        counts = Counter(tag for tag in tags if tag is not None)
        return cls(counts[Tag.CORRECT], counts[Tag.INCORRECT], counts[Tag.IRRELEVANT], counts[Tag.MISSING])

    @property
    def correctness(self) -> float | None:
        """C / (C + I): factual accuracy, penalising errors and hallucinations."""
        return _ratio(self.correct, self.correct + self.incorrect)

    @property
    def precision(self) -> float | None:
        """C / (C + Irr): relevance, penalising irrelevant content."""
        return _ratio(self.correct, self.correct + self.irrelevant)

    @property
    def recall(self) -> float | None:
        """C / (C + M): completeness, penalising critical omissions."""
        return _ratio(self.correct, self.correct + self.missing)

    def f_beta(self, beta: float = 1.0) -> float | None:
        """F1 is LeMAJ's relevance score; DeCE weighs recall more with F2."""
        p, r = self.precision, self.recall
        if p is None or r is None or (p == 0 and r == 0):
            return None if p is None or r is None else 0.0
        return (1 + beta**2) * p * r / (beta**2 * p + r)

    @property
    def f1(self) -> float | None:
        return self.f_beta(1.0)


def triage_bucket(scores: Scores, min_correctness: float = 1.0, min_relevance: float = 0.8) -> str:
    """LeMAJ's triage rule: an answer whose judge correctness and relevance (F1) reach the thresholds
    is cleared; the rest go to a human."""
    correctness, relevance = scores.correctness, scores.f1
    if correctness is None or relevance is None:
        return "flagged"
    return "cleared" if correctness >= min_correctness and relevance >= min_relevance else "flagged"


def answer_verdict(counts: tuple[int, ...], min_correctness: float = 1.0, min_relevance: float = 0.8) -> str:
    """A rater's verdict on an answer from its counts (C, I, Irr, M, points it left untagged): "cleared"
    by LeMAJ's rule with no point left undecided; "flagged" where it found something wrong; else
    "unconfirmed" — it neither cleared the answer nor faulted it (the verifier, where it can confirm
    only some points), so a person must read it."""
    scores, untagged = Scores(*counts[:4]), sum(counts[4:])
    if triage_bucket(scores, min_correctness, min_relevance) == "cleared":
        return "cleared" if not untagged else "unconfirmed"
    return "flagged" if scores.incorrect or scores.irrelevant or scores.missing else "unconfirmed"


def shown(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"
