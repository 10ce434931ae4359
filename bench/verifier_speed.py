"""The verifier on the whole sample project (153 answers, 12 contracts), side by side in one run: words
only (the lexical claim checker) and with the neural encoders (evidence by meaning, the contract
checker), each contract read on its first claim and read at import (app/judging/verification.read_contracts,
what an import through the window does, timed on its own); per answer p50/p95, the whole set, 10,000 answers
extrapolated from the mean (of a first pass, where each contract is read for the first time, and of a second,
about contracts already read), and the memory the encoders take (resident set size before and after loading and
running them). Then checking plus storing the findings as the `verifier` rater, and the paired stress test.

    taskset -c 0,1 .venv/bin/python bench/verifier_speed.py     # 2 cores, as the issue measures

On a processor that runs the encoders' signed twins (VNNI: models/checker/encoder.py), the neural pass is run
once more on the unsigned files every other processor runs, side by side.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def _rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 2**20


def main() -> None:
    import numpy as np

    from app.ingest.datasets import import_dataset
    from app.judging.paired_stress import VerifierRater, paired_stress_test
    from app.judging.verification import Verifier, read_contracts, verify_project
    from app.project import SAMPLE_DATASET, Project
    from models.checker import encoder
    from models.verifier.checks.values import forget_document_values
    from storage.db import url_for_path

    with tempfile.TemporaryDirectory() as folder:
        project = Project.open(url_for_path(Path(folder) / "sample.assay"))
        import_dataset(project.sessions, SAMPLE_DATASET)
        ids = [a.id for a in project.answers()]
        rows = []

        def timed(name: str, neural: bool, signed: bool | None = None, *, after_import: bool = False) -> None:
            """One pass over the sample, as a process that never read it before would make it; `after_import`,
            with what the import's reading of the contracts left in this process (their values)."""
            if not after_import:
                forget_document_values()
            before = _rss_mb()
            started = time.perf_counter()
            verifier = Verifier(project.sessions, neural=neural)
            if neural and (signed is not None or after_import):
                # encoders of its own, from the files named: the shipped ones remember the texts of the pass before
                verifier.engine.encoders = encoder.Encoders.load(signed=signed)
            loaded = time.perf_counter() - started
            assert not neural or verifier.engine.encoders is not None, verifier.engine.note
            times = []
            for answer_id in ids:
                t = time.perf_counter()
                verify_project(project.sessions, [answer_id], save=False, verifier=verifier)
                times.append(time.perf_counter() - t)
            again = []  # the same answers once more: their contracts already read, as in a long evaluation
            for answer_id in ids:
                t = time.perf_counter()
                verify_project(project.sessions, [answer_id], save=False, verifier=verifier)
                again.append(time.perf_counter() - t)
            total = loaded + sum(times)
            per = np.asarray(times)
            p50, p95 = np.percentile(per, 50), np.percentile(per, 95)
            rows.append((name, total, loaded, p50, p95, per.mean(), before, np.mean(again)))

        timed("words only (lexical)", False)
        timed("encoders, read per claim", True)  # as a project imported before its contracts were read at import
        rss = _rss_mb()
        forget_document_values()
        started = time.perf_counter()
        contracts = read_contracts(project.sessions)  # what an import through the window does
        reading = time.perf_counter() - started
        timed("with encoders (neural)", True, after_import=True)
        if encoder.signed_weights_exact():  # beside it, the unsigned files a processor without VNNI runs
            timed("  the same, uint8 weights", True, signed=False, after_import=True)

        started = time.perf_counter()
        verify_project(project.sessions, save=True)
        stored = time.perf_counter() - started
        started = time.perf_counter()
        result = paired_stress_test(project.sessions, [VerifierRater(project.sessions)], seed=1)
        stressed = time.perf_counter() - started
        project.close()

    print(f"sample project: {len(ids)} answers")
    for name, total, loaded, p50, p95, mean, _before, read in rows:
        print(
            f"  {name:24} {total:6.1f} s all ({loaded:4.1f} s loading)  p50 {p50:5.2f} s  p95 {p95:5.2f} s an answer"
            f"  10,000 answers ~{mean * 10_000 / 60:5.1f} min"
            f" (about contracts already read ~{read * 10_000 / 60:5.1f} min)"
        )
    print(f"  the import's reading of the {contracts} contracts: {reading:.1f} s, before the checks timed above it")
    print(f"  memory: {rows[1][6]:.0f} MB before the encoders, {rss:.0f} MB after running them (RSS)")
    print(f"  verify (check and store, default) {stored:6.1f} s")
    planted = sum(f["trials"] for f in result["raters"]["verifier"]["by_type"].values())
    print(f"  paired stress test         {stressed:6.1f} s   ({planted} planted errors)")


if __name__ == "__main__":
    main()
