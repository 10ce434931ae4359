"""The statistics behind figures a lawyer can sign: exact bounds on a miss rate, thresholds chosen so the
bound still holds after the choice, and prediction-powered means. Plain NumPy/SciPy on arrays: the
same functions serve one project and a 500-repetition simulation (the last axis is the sample).

- One-sided Clopper–Pearson upper bound: exact for a simple random sample (scipy's beta quantile).
- Korn–Graubard (1998) bound for a clustered sample: Clopper–Pearson on the effective sample size
  that the between-document variance leaves, with a t-based correction for few documents.
- Fixed-sequence testing, as in Learn then Test (Angelopoulos et al. 2021): test rules in an order
  fixed before the reviews are seen, stop at the first that fails; every rule that passed has a miss
  rate at most the target, with probability at least 1 - delta, however many rules were tried.
- PPI++ mean (Angelopoulos, Duchi, Zrnic 2023): the few lines of `ppi_py.ppi_mean_ci` with its power
  tuning, reimplemented so the app does not carry numba and llvmlite (see docs in app/figures/estimates.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

DELTA = 0.05  # one-sided 95 %


def cp_upper(k: Any, n: Any, delta: float = DELTA) -> Any:
    """One-sided (1 - delta) Clopper–Pearson upper bound on a proportion seen k times in n draws;
    1 when n is 0 (nothing is known). k and n may be arrays, and need not be whole numbers."""
    from scipy.stats import beta

    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = beta.ppf(1 - delta, k + 1, np.maximum(n - k, 1e-12))
    upper = np.where((n <= 0) | (k >= n), 1.0, upper)
    return float(upper) if upper.ndim == 0 else upper


def clustered_upper(misses: Any, clusters: Any, delta: float = DELTA) -> float:
    """Korn–Graubard upper bound on the miss rate when answers of one document are correlated:
    the document is the sampling unit. `misses` are 0/1 per reviewed answer, `clusters` its document."""
    from scipy.stats import norm, t

    y = np.asarray(misses, dtype=float)
    n = len(y)
    if n == 0:
        return 1.0
    _, group = np.unique(np.asarray(clusters), return_inverse=True)
    docs = group.max() + 1
    if docs < 2:
        return 1.0  # one document: nothing says how documents vary
    p = y.mean()
    k_d = np.bincount(group, weights=y)
    n_d = np.bincount(group).astype(float)
    variance = docs / (docs - 1) * ((k_d - p * n_d) ** 2).sum() / n**2  # ratio estimator, linearised
    effective = min(n, p * (1 - p) / variance) if variance > 0 else n
    effective *= (norm.ppf(1 - delta) / t.ppf(1 - delta, docs - 1)) ** 2
    return cp_upper(p * effective, effective, delta)


def fixed_sequence(k: Any, n: Any, target: float, delta: float = DELTA) -> Any:
    """Which rules pass fixed-sequence testing. The last axis holds the rules in their fixed order,
    strictest first; a rule passes when its bound is at most the target and no earlier tested rule
    failed. A rule with too few reviews to pass even with no miss is skipped, not failed: that
    depends only on which answers were drawn, never on what the reviewers found."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    hopeless = np.asarray(cp_upper(np.zeros_like(n), n, delta)) > target
    alive = np.cumprod((np.asarray(cp_upper(k, n, delta)) <= target) | hopeless, axis=-1).astype(bool)
    return alive & ~hopeless


def loosest_passing(passed: Any) -> Any:
    """Index of the last rule that passed (the loosest, rules being ordered strictest first), or -1."""
    passed = np.asarray(passed, dtype=bool)
    last = passed.shape[-1] - 1 - np.argmax(passed[..., ::-1], axis=-1)
    return np.where(passed.any(axis=-1), last, -1)


def more_reviews_needed(
    k: Any, n: Any, shares: Any, target: float, *, rate_holds: bool, delta: float = DELTA, most: int = 10**7
) -> tuple[int | None, int | None]:
    """Planning, not a guarantee: the fewest further random reviews after which fixed-sequence
    testing would pass some rule, and the index of the loosest rule passing then. Each rule gets
    `share` of the new reviews among its cleared answers; they find no miss (rate_holds=False: a
    lower bound on what is needed) or misses at the rate seen so far. None: no number up to `most`."""
    k, n, shares = (np.asarray(v, dtype=float) for v in (k, n, shares))
    rates = np.divide(k, n, out=np.zeros_like(k), where=n > 0) if rate_holds else np.zeros_like(k)

    def passing(m: int) -> int:
        return int(loosest_passing(fixed_sequence(k + m * shares * rates, n + m * shares, target, delta)))

    if passing(most) < 0:
        return None, None
    lo, hi = 0, 1
    while passing(hi) < 0:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # passing(lo) fails, passing(hi) holds
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if passing(mid) < 0 else (lo, mid)
    return hi, passing(hi)


# ---------------------------------------------------------------- means with intervals


def _z(alpha: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(1 - alpha / 2))


def ppi_mean(y: Any, yhat: Any, yhat_unlabeled: Any, alpha: float = 0.05, lam: float | None = None) -> dict[str, Any]:
    """PPI++ estimate of a mean with its (1 - alpha) interval, as `ppi_py.ppi_mean_ci` computes it:
    human values y and the judge's yhat on the same (randomly drawn) answers, the judge's
    yhat_unlabeled on the rest. lam=None tunes the judge's weight (clipped to [0, 1]); lam=1 is plain
    PPI, lam=0 the human-only estimate. Arrays may carry leading axes (repetitions)."""
    y, yhat, rest = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabeled))
    n, big_n = y.shape[-1], rest.shape[-1]
    if lam is None:
        centred_y = y - y.mean(-1, keepdims=True)
        centred_hat = yhat - yhat.mean(-1, keepdims=True)
        covariance = (centred_y * centred_hat).mean(-1)
        variance = np.concatenate([yhat, rest], axis=-1).var(-1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            tuned = np.where(variance > 0, covariance / ((1 + n / big_n) * variance), 0.0)
        weight = np.clip(tuned, 0, 1)
    else:
        weight = np.asarray(float(lam))
    w = weight[..., None]
    estimate = (w * rest).mean(-1) + (y - w * yhat).mean(-1)
    se = np.sqrt((w * rest).var(-1) / big_n + (y - w * yhat).var(-1) / n)
    half = _z(alpha) * se
    return _interval(estimate, half, lam=weight)


def paired_difference(
    judge_diff: Any, rectifier_a: Any, diff_at_a: Any, rectifier_b: Any, diff_at_b: Any, alpha: float = 0.05
) -> dict[str, Any]:
    """Prediction-powered difference of two generators' means on the questions both answered: the
    judge's paired difference (A minus B) over every question, so question difficulty cancels, plus
    each generator's rectifier (human minus judge) on its randomly reviewed answers. The reviewed
    answers are among the questions, so the variance carries their covariance with the judge's
    difference there (`diff_at_a`, `diff_at_b`: the judge's difference on those questions)."""
    d, ra, da, rb, db = (
        np.asarray(v, dtype=float) for v in (judge_diff, rectifier_a, diff_at_a, rectifier_b, diff_at_b)
    )
    q, n_a, n_b = d.shape[-1], ra.shape[-1], rb.shape[-1]

    def cov(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return ((x - x.mean(-1, keepdims=True)) * (y - y.mean(-1, keepdims=True))).mean(-1)

    estimate = d.mean(-1) + ra.mean(-1) - rb.mean(-1)
    variance = d.var(-1) / q + ra.var(-1) / n_a + rb.var(-1) / n_b + 2 * (cov(da, ra) - cov(db, rb)) / q
    return _interval(estimate, _z(alpha) * np.sqrt(np.maximum(variance, 0)))


def difference_of_means(y_a: Any, y_b: Any, alpha: float = 0.05) -> dict[str, Any]:
    """Mean of y_a minus mean of y_b, two independent samples (human reviews alone)."""
    a, b = np.asarray(y_a, dtype=float), np.asarray(y_b, dtype=float)
    se = np.sqrt(a.var(-1) / a.shape[-1] + b.var(-1) / b.shape[-1])
    return _interval(a.mean(-1) - b.mean(-1), _z(alpha) * se)


def classical_mean(y: Any, alpha: float = 0.05) -> dict[str, Any]:
    """The mean of one sample with its normal-approximation interval (ppi_py's classical_mean_ci)."""
    y = np.asarray(y, dtype=float)
    half = _z(alpha) * y.std(-1) / np.sqrt(y.shape[-1])
    return _interval(y.mean(-1), half)


def _interval(estimate: Any, half: Any, **extra: Any) -> dict[str, Any]:
    estimate, half = np.asarray(estimate), np.asarray(half)
    if estimate.ndim == 0:
        out: dict[str, Any] = {"estimate": float(estimate), "ci": [float(estimate - half), float(estimate + half)]}
        out |= {key: float(value) for key, value in extra.items()}
        return out
    return {"estimate": estimate, "ci": np.stack([estimate - half, estimate + half], axis=-1), **extra}
