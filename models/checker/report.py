"""What the engine found of an answer, point by point, and how a verdict is said to a lawyer and becomes a tag
in a LeMAJ review: read by the engine (models/checker/engine.py), the review window, the exports and the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from models.verifier import INCORRECT, NEEDS_REVIEW, QUOTED, SUPPORTED, UNCONFIRMED, UNVERIFIABLE, ClaimResult
from models.vocabulary import Tag


@dataclass
class PointReport:
    """What the engine found of one point of an answer."""

    start: int
    end: int
    text: str
    verdict: str
    reasons: list[dict[str, Any]]
    passage: str | None
    summary: str
    probability: float | None = None  # the claim checker's: the document does not support the point
    contradiction: float | None = None  # of that, the probability that it says the opposite
    definitions: list[dict[str, str]] = field(default_factory=list)  # {"term", "passage"} the point relies on
    quote: dict[str, Any] | None = None  # the quotation confirmed word for word (verbatim.Quoted.as_dict)
    reading: str = ""  # which reading decided, in a lawyer's words ("the contract's value, read: ...")

    def as_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "verdict": self.verdict,
            "reasons": self.reasons,
            "passage": self.passage,
            "probability": None if self.probability is None else round(self.probability, 4),
            "contradiction": None if self.contradiction is None else round(self.contradiction, 4),
            "definitions": self.definitions,
            "quote": self.quote,
            "reading": self.reading,
        }

    @classmethod
    def from_dict(cls, p: dict[str, Any]) -> PointReport:
        """A point as `as_dict` wrote it (its one-line summary is not kept)."""
        return cls(
            p["start"],
            p["end"],
            p["text"],
            p["verdict"],
            p["reasons"],
            p.get("passage"),
            "",
            p.get("probability"),
            p.get("contradiction"),
            p.get("definitions", []),
            p.get("quote"),
            p.get("reading", ""),
        )


@dataclass
class AnswerReport:
    answer_id: str
    points: list[PointReport] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"answer_id": self.answer_id, "points": [p.as_dict() for p in self.points]}


def report_of(start: int, end: int, claim: str, result: ClaimResult) -> PointReport:
    """A point as a verdict of the rules or a reader gives it (its probabilities are set apart)."""
    return PointReport(
        start, end, claim, result.verdict, [r.as_dict() for r in result.reasons], result.passage, result.summary
    )


# ---------------------------------------------------------------- a verdict as a tag, and in words


def tag_of(point: PointReport) -> Tag | None:
    """A flag is `incorrect`; "supported" is `correct` only where the checker confirmed it (the rules'
    own "supported", without the checker, was wrong too often); everything else abstains."""
    if point.verdict == INCORRECT:
        return Tag.INCORRECT
    if point.verdict == QUOTED:  # the document's own words, and nothing else said: correct as quoted
        return Tag.CORRECT if point.quote and not point.quote.get("rest") and not point.reasons else None
    return Tag.CORRECT if point.verdict == SUPPORTED and point.probability is not None else None


def confidence_of(point: PointReport) -> float | None:
    """The checker's probability of the tag it gave (None where a rule decided without it)."""
    if point.probability is None or tag_of(point) is None or point.verdict == QUOTED:  # a rule decided that
        return None
    return point.probability if point.verdict == INCORRECT else 1 - point.probability


def finding_at(report: AnswerReport | None, start: int | None, end: int | None) -> PointReport | None:
    """The engine's point that covers most of the span start:end (a rater may split points differently)."""
    if report is None or start is None or end is None:
        return None
    overlap = [(min(end, p.end) - max(start, p.start), p) for p in report.points]
    best = max(overlap, key=lambda o: o[0], default=None)
    if best is None or best[0] <= 0.5 * min(end - start, best[1].end - best[1].start):
        return None
    return best[1]


VERDICT_WORDS = {
    QUOTED: "quoted word for word: the quotation is checked, what the answer draws from it is not",
    SUPPORTED: "found in the document",
    UNCONFIRMED: "not confirmed: the closest passage is evidence, not a verdict",
    INCORRECT: "flagged",
    NEEDS_REVIEW: "needs review",
    UNVERIFIABLE: "nothing in the document to check this against",
}


def verdict_text(point: PointReport) -> str:
    """The verdict in a lawyer's words, with its passage and the claim checker's probability:
    "not confirmed: the closest passage is evidence, not a verdict (par_12; unsupported 0.34)"."""
    details = [point.passage] if point.passage else []
    if point.probability is not None:
        details.append(f"unsupported {point.probability:.2f}")
    words = VERDICT_WORDS.get(point.verdict, point.verdict)
    return words + (f" ({'; '.join(details)})" if details else "")


def reasons_text(point: PointReport | None) -> str:
    """The reasons of a verdict in one line: "value_mismatch: the answer says '30 days', the document
    'sixty (60) days' (par_12)"."""
    if point is None:
        return ""
    return "; ".join(
        f"{r['check']}: the answer says '{r['claim']}', the document '{str(r['document'])[:160]}'"
        + (f" ({r['passage']})" if r.get("passage") else "")
        for r in point.reasons
    )
