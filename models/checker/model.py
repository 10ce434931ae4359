"""The shipped claim checker: the probability that the document does not support a claim, and that it
contradicts it, from the features of `features`, with the passage it relied on.

The model file (resources/claim_checker/model.json, rebuilt by packaging/training/train_claim_checker.py)
holds two LightGBM models as LightGBM's own text, an isotonic calibration per kind of answer
(features.KINDS) and the thresholds chosen on held-out development data: `flag` (on contracts at most
10 % of supported points flagged, elsewhere a share of fully correct answers given any flag) and
`support` (below it, at least 95 % of points were supported, and outside contracts 90 % were errors
three times as common); and `rules_stand`, the kinds where a verifier rule's flag stands on its own
(elsewhere the rule's outcome is one of the checker's features).
No pickle: the file is data.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from models.checker.features import ABSENCE, FEATURES, KINDS, Evidence, measure
from models.checker.manifest import RESOURCES, checked
from models.checker.ranking import MEANING

MODEL_FILE = RESOURCES / "model.json"


@dataclass(frozen=True)
class Assessment:
    p_unsupported: float  # calibrated: the document does not support the claim (unsupported or contradicted)
    p_contradicted: float  # of that, the share where it says the opposite
    passage: str | None  # the citation id of the passage the claim was compared with most closely
    flagged: bool  # p_unsupported reached the flag threshold
    supported: bool  # p_unsupported is below the threshold where "supported" was right 95 % of the time
    kind: str  # one of KINDS: whose calibration and thresholds applied


class ClaimChecker:
    def __init__(self, data: dict[str, Any]) -> None:
        import lightgbm as lgb

        # the contract checker (resources/claim_checker/encoder/contract_checker.json) reads what the exemplars and the
        # cross-encoder say of a claim (models/checker/ranking.py MEANING), not its words
        self.reads_meaning = tuple(data["features"]) == MEANING
        if tuple(data["features"]) != FEATURES and not self.reads_meaning:
            raise ValueError("the claim checker's model was trained on other features: rebuild it")
        self.error = lgb.Booster(model_str=data["error_model"])
        self.contradiction = lgb.Booster(model_str=data["contradiction_model"])
        self.calibration: dict[str, dict[str, list[float]]] = data["calibration"]
        self.thresholds: dict[str, dict[str, float]] = data["thresholds"]
        self.rules_stand = frozenset(data.get("rules_stand", KINDS))
        if not self.reads_meaning and set(KINDS) - set(self.calibration):
            raise ValueError("the claim checker's model lacks a kind of answer (a summary?): rebuild it")
        self.held_out: list[dict[str, Any]] = data.get("held_out", [])

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> ClaimChecker:
        # the shipped file is checked against the manifest; another (a trial's) is read as it is
        return cls(json.loads(checked("model.json") if path == MODEL_FILE else path.read_text()))

    def assess_many(
        self, claims: list[tuple[str, str]], evidence: Evidence, question: str = ""
    ) -> list[Assessment | None]:
        """(claim, the verifier's rule verdict) -> an assessment each from the claim's words, None for a
        claim with too few words to check ("Yes."); `question`, what the answer answered, tells a summary."""
        if self.reads_meaning:
            raise ValueError("this claim checker needs what the exemplars and the cross-encoder say")
        measured = [measure(c, evidence, rule) for c, rule in claims]
        kept = [(claim, m) for (claim, _), m in zip(claims, measured, strict=True) if m is not None]
        decided = iter(
            self._decide(
                [c for c, _ in kept],
                [m.values for _, m in kept],
                [m.passage for _, m in kept],
                evidence.kind_of_answer(question),
            )
        )
        return [None if m is None else next(decided) for m in measured]

    def assess_meaning(
        self, claims: list[str], meaning: list[list[float]], by_words: list[Assessment]
    ) -> list[Assessment]:
        """The contract checker's verdicts on claims the words-only checker has assessed (`by_words`: the
        passage they were compared with, and the kind of document, stay), from each claim's MEANING."""
        if not self.reads_meaning:
            raise ValueError("this claim checker reads words only")
        kind = by_words[0].kind if by_words else "contract"
        return self._decide(claims, meaning, [a.passage for a in by_words], kind)

    def _decide(
        self, claims: list[str], rows: Sequence[Sequence[float]], passages: list[str | None], kind: str
    ) -> list[Assessment]:
        if not rows:
            return []
        features = np.asarray(rows, dtype=float)
        table = self.calibration[kind]
        # one thread: on the few rows of an answer LightGBM's threads cost more than its sums (6 ms a call;
        # the same numbers)
        p = np.interp(np.asarray(self.error.predict(features, num_threads=1)), table["x"], table["y"])
        c = np.asarray(self.contradiction.predict(features, num_threads=1))
        flag, support = self.thresholds["flag"][kind], self.thresholds["support"][kind]
        out = []
        for i, (claim, passage) in enumerate(zip(claims, passages, strict=True)):
            decides = ABSENCE.search(claim) is None  # a claim of silence is neither flagged nor confirmed
            flagged, supported = decides and p[i] >= flag, decides and p[i] <= support
            out.append(Assessment(float(p[i]), float(c[i]), passage, bool(flagged), bool(supported), kind))
        return out


@lru_cache(maxsize=1)
def shipped() -> ClaimChecker:
    """The checker that ships with Assay, loaded once (about 0.2 s)."""
    return ClaimChecker.load()
