"""Never worse: the claim checker refitted on a project's tags (models/checker/learning.py) beside the shipped
one, both held out by document on the same labelled points, and whether the refit may speak for the project.

The refit is measured by k-fold over whole documents (each fold's head fitted on the other documents, its
thresholds chosen on their own held-out probabilities); the shipped engine's verdicts on the same points
are what it said. The refit is adopted only where its per-point flags are right more often (exact McNemar
test, one-sided, p < ALPHA), its flags tell wrong points from right ones (Fisher's exact test, one-sided,
p < FISHER_ALPHA) and it flags at most MAX_FALSE_ALARMS of right points. The second test is what keeps a refit
on shuffled tags out: against a shipped checker that is little better than chance on a firm's wording (as on
a lawyer's rewording of ContractNLI's statements, evidence by words only), a refit that flags some other
points wins the paired test often enough by chance; on shuffled tags its flags tell nothing, and Fisher's
test at 0.01 lets one such refit in a hundred through.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from models.checker.learning import ALPHA, FOLDS, CheckerHead, Observation, folds
from models.verifier import INCORRECT, SUPPORTED


@dataclass(frozen=True)
class Figures:
    """One checker's flags on the same labelled points, held out."""

    points: int
    wrong: int
    flagged_wrong: int
    flagged_right: int
    supported: int
    supported_right: int

    @property
    def recall(self) -> float:
        return self.flagged_wrong / self.wrong if self.wrong else 0.0

    @property
    def false_alarms(self) -> float:
        right = self.points - self.wrong
        return self.flagged_right / right if right else 0.0

    @property
    def f1(self) -> float:
        flagged = self.flagged_wrong + self.flagged_right
        p = self.flagged_wrong / flagged if flagged else 0.0
        return 2 * p * self.recall / (p + self.recall) if p + self.recall else 0.0

    @property
    def accuracy(self) -> float:
        return (
            (self.flagged_wrong + (self.points - self.wrong - self.flagged_right)) / self.points if self.points else 0.0
        )

    @property
    def supported_precision(self) -> float | None:
        return self.supported_right / self.supported if self.supported else None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "recall": round(self.recall, 4),
            "false_alarms": round(self.false_alarms, 4),
            "f1": round(self.f1, 4),
            "accuracy": round(self.accuracy, 4),
        }


def figures_of(verdicts: Sequence[str], wrong: np.ndarray) -> Figures:
    flagged = np.array([v == INCORRECT for v in verdicts], dtype=bool)
    supported = np.array([v == SUPPORTED for v in verdicts], dtype=bool)
    return Figures(
        len(wrong),
        int(wrong.sum()),
        int((flagged & wrong).sum()),
        int((flagged & ~wrong).sum()),
        int(supported.sum()),
        int((supported & ~wrong).sum()),
    )


def mcnemar_one_sided(better: int, worse: int) -> float:
    """Exact McNemar: the chance of at least `better` wins among the discordant pairs were both as good."""
    n = better + worse
    if n == 0:
        return 1.0
    return float(sum(math.comb(n, i) for i in range(better, n + 1)) / 2**n)


def fisher_one_sided(flagged_wrong: int, flagged_right: int, wrong: int, right: int) -> float:
    """Fisher's exact test: the chance that flags drawn at random land on at least this many wrong points."""
    from scipy.stats import fisher_exact

    table = [[flagged_wrong, flagged_right], [wrong - flagged_wrong, right - flagged_right]]
    return float(fisher_exact(table, alternative="greater")[1])


@dataclass(frozen=True)
class Standing:
    """The never-worse test's result: both checkers held out on the same points, and whether the refit speaks."""

    refit: Figures
    shipped: Figures
    wins: int  # points the refit got right (flag or no flag) and the shipped checker wrong
    losses: int
    p_mcnemar: float
    p_fisher: float
    folds: int
    adopted: bool
    reasons: tuple[str, ...]  # why not adopted (empty when adopted)
    test: str = "exact McNemar test on per-point flags, one-sided, held out by document"

    def as_dict(self) -> dict[str, Any]:
        return {
            "refit": self.refit.as_dict(),
            "shipped": self.shipped.as_dict(),
            "wins": self.wins,
            "losses": self.losses,
            "p_mcnemar": round(self.p_mcnemar, 6),
            "p_fisher": round(self.p_fisher, 6),
            "folds": self.folds,
            "adopted": self.adopted,
            "reasons": list(self.reasons),
            "test": self.test,
        }


FISHER_ALPHA = 0.01
MAX_FALSE_ALARMS = 0.15  # a refit that flags more right points than this is never adopted
MIN_DOCUMENTS = 4
MIN_EACH = 5  # right and wrong points each


def standing(
    points: Sequence[Observation],
    labels: Sequence[bool],
    make: Callable[[], CheckerHead] = CheckerHead,
    *,
    seed: int = 0,
    on_fold: Callable[[int, int], None] = lambda _d, _t: None,
) -> Standing:
    """The refit and the shipped checker held out by document on the project's labelled points (k-fold,
    k = FOLDS or the documents, fewer), and whether the refit beats it (module docstring)."""
    wrong = np.asarray(labels, dtype=bool)
    shipped_verdicts = [o.shipped for o in points]
    documents = [o.document for o in points]
    k = min(FOLDS, len(set(documents)))
    reasons = []
    if len(set(documents)) < MIN_DOCUMENTS:
        reasons.append(f"tags on {len(set(documents))} documents: at least {MIN_DOCUMENTS} are needed to hold some out")
    if wrong.sum() < MIN_EACH or (~wrong).sum() < MIN_EACH:
        reasons.append(f"{int(wrong.sum())} wrong and {int((~wrong).sum())} right points: at least {MIN_EACH} of each")
    refit_verdicts = list(shipped_verdicts)
    if not reasons:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

        limits = threadpool_limits(1)  # small matrices: BLAS threads on a busy laptop cost seconds
        for done, test in enumerate(folds(documents, k, seed), start=1):
            train = np.setdiff1d(np.arange(len(points)), test)
            if wrong[train].all() or not wrong[train].any():
                continue  # the shipped checker speaks for this fold
            head = make().fit([points[i] for i in train], wrong[train])
            for i, v in zip(test, head.predict([points[i] for i in test]), strict=True):
                refit_verdicts[i] = v
            on_fold(done, k)
        limits.restore_original_limits()
    refit, shipped = figures_of(refit_verdicts, wrong), figures_of(shipped_verdicts, wrong)
    right_refit = np.array([(v == INCORRECT) == w for v, w in zip(refit_verdicts, wrong, strict=True)])
    right_shipped = np.array([(v == INCORRECT) == w for v, w in zip(shipped_verdicts, wrong, strict=True)])
    wins, losses = int((right_refit & ~right_shipped).sum()), int((~right_refit & right_shipped).sum())
    p = mcnemar_one_sided(wins, losses)
    fisher = fisher_one_sided(refit.flagged_wrong, refit.flagged_right, refit.wrong, refit.points - refit.wrong)
    if not reasons:
        if p >= ALPHA:
            reasons.append(
                f"not better than the shipped checker: right where it was wrong on {wins} points, wrong where it "
                f"was right on {losses} (exact McNemar, one-sided, p = {p:.3f}; needs p < {ALPHA})"
            )
        if fisher >= FISHER_ALPHA:
            reasons.append(
                f"its flags do not tell wrong points from right ones (Fisher's exact test, p = {fisher:.3f}; "
                f"needs p < {FISHER_ALPHA})"
            )
        if refit.false_alarms > MAX_FALSE_ALARMS:
            reasons.append(f"it flags {refit.false_alarms:.2f} of right points (at most {MAX_FALSE_ALARMS})")
    return Standing(refit, shipped, wins, losses, p, fisher, k, not reasons, tuple(reasons))
