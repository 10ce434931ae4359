"""The shipped claim checker: the probability that the document does not support a claim, and that it
contradicts it, from the features of `features`, with the passage it relied on.

The model file (resources/claim_checker/model.json, rebuilt by packaging/train_claim_checker.py)
holds two LightGBM models as LightGBM's own text, an isotonic calibration per kind of document and
the thresholds chosen on held-out development data: `flag` (at most 10 % of supported points flagged)
and `support` (below it, at least 95 % of points were supported). No pickle: the file is data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from models.checker.features import ABSENCE, FEATURES, Evidence, measure
from models.checker.ranking import MEANING

MODEL_FILE = Path(__file__).resolve().parent.parent.parent / "resources" / "claim_checker" / "model.json"


@dataclass(frozen=True)
class Assessment:
    p_unsupported: float  # calibrated: the document does not support the claim (unsupported or contradicted)
    p_contradicted: float  # of that, the share where it says the opposite
    passage: str | None  # the citation id of the passage the claim was compared with most closely
    flagged: bool  # p_unsupported reached the flag threshold
    supported: bool  # p_unsupported is below the threshold where "supported" was right 95 % of the time
    kind: str  # "contract" or "other": whose calibration and thresholds applied


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
        self.held_out: list[dict[str, Any]] = data.get("held_out", [])

    @classmethod
    def load(cls, path: Path = MODEL_FILE) -> ClaimChecker:
        return cls(json.loads(path.read_text()))

    def assess_many(
        self, claims: list[tuple[str, str]], evidence: Evidence, meaning: list[list[float]] | None = None
    ) -> list[Assessment | None]:
        """(claim, the verifier's rule verdict) -> an assessment each, None for a claim with too few
        words to check ("Yes."). A checker that reads meaning is given each claim's MEANING values."""
        if self.reads_meaning != (meaning is not None):
            wanted = "needs what the exemplars and the cross-encoder say" if self.reads_meaning else "reads words only"
            raise ValueError(f"this claim checker {wanted}")
        measured = [measure(c, evidence, rule) for c, rule in claims]
        read = meaning if meaning is not None else [m.values if m is not None else [] for m in measured]
        rows = [list(x) for m, x in zip(measured, read, strict=True) if m is not None]
        if not rows:
            return [None] * len(claims)
        features = np.asarray(rows, dtype=float)
        kind = evidence.kind
        table = self.calibration[kind]
        p = np.interp(np.asarray(self.error.predict(features)), table["x"], table["y"])
        c = np.asarray(self.contradiction.predict(features))
        flag, support = self.thresholds["flag"][kind], self.thresholds["support"][kind]
        out: list[Assessment | None] = []
        row = 0
        for (claim, _), m in zip(claims, measured, strict=True):
            if m is None:
                out.append(None)
                continue
            decides = ABSENCE.search(claim) is None  # a claim of silence is neither flagged nor confirmed
            flagged, supported = decides and p[row] >= flag, decides and p[row] <= support
            out.append(Assessment(float(p[row]), float(c[row]), m.passage, bool(flagged), bool(supported), kind))
            row += 1
        return out


@lru_cache(maxsize=1)
def shipped() -> ClaimChecker:
    """The checker that ships with Assay, loaded once (about 0.2 s)."""
    return ClaimChecker.load()
