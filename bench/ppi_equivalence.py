"""Assay's PPI++ mean (app/figures/guarantees.py, NumPy/SciPy) against `ppi_py.ppi_mean_ci` itself, and what
installing ppi-python would add to the app. Not part of the app: run it in a throwaway environment
that has ppi-python, numpy and scipy (it is not a dependency of Assay):

    python3 -m venv /tmp/ppi && /tmp/ppi/bin/pip install ppi-python==0.2.3
    PYTHONPATH=$PWD /tmp/ppi/bin/python bench/ppi_equivalence.py

Last run (ppi-python 0.2.3): largest difference 3.3e-16 over 600 intervals; it would add numba
(31 MB) and llvmlite (172 MB), gdown, beautifulsoup4, soupsieve, filelock and PySocks: 206 MB in all.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

from app.figures.guarantees import ppi_mean

ADDED = ("numba", "llvmlite", "gdown", "beautifulsoup4", "soupsieve", "filelock", "PySocks")


def largest_difference(repetitions: int = 200) -> float:
    """Random projects: judge wrong on a random share of answers, 10 to 200 reviews; PPI++, PPI, classical."""
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(repetitions):
        judged, reviewed = int(rng.integers(200, 3000)), int(rng.integers(10, 200))
        truth = rng.uniform(size=judged + reviewed) < rng.uniform(0.05, 0.6)
        judge = np.where(rng.uniform(size=truth.size) < rng.uniform(0, 0.4), ~truth, truth).astype(float)
        y, yhat, rest = truth[:reviewed].astype(float), judge[:reviewed], judge[reviewed:]
        for lam in (None, 1.0, 0.0):
            ours = ppi_mean(y, yhat, rest, alpha=0.05, lam=lam)
            low, high = (float(np.ravel(v)[0]) for v in ppi_mean_ci(y, yhat, rest, alpha=0.05, lam=lam))
            estimate = float(np.ravel(ppi_mean_pointestimate(y, yhat, rest, lam=lam))[0])
            worst = max(worst, abs(ours["ci"][0] - low), abs(ours["ci"][1] - high), abs(ours["estimate"] - estimate))
    return worst


def installed_megabytes(name: str) -> float:
    files = importlib.metadata.distribution(name).files or []
    return sum(Path(f.locate()).stat().st_size for f in files if Path(f.locate()).is_file()) / 2**20


if __name__ == "__main__":
    print(f"largest difference from ppi_py over 600 intervals: {largest_difference():.1e}")
    sizes = {name: installed_megabytes(name) for name in ADDED}
    print("what ppi-python adds to Assay's environment: " + ", ".join(f"{k} {v:.1f} MB" for k, v in sizes.items()))
    print(f"in all {sum(sizes.values()):.0f} MB")
