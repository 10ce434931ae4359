"""The model-free verifier on the whole sample project (119 answers, 10 contracts): checking alone, and
checking plus storing the findings as the `verifier` rater, side by side in one run; the paired
stress test of the verifier is timed too.

    .venv/bin/python bench/verifier_speed.py          # run it pinned to 2 cores: taskset -c 0,1 ...
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def main() -> None:
    from app.ingest.datasets import import_dataset
    from app.judging.paired_stress import VerifierRater, paired_stress_test
    from app.judging.verification import verify_project
    from app.project import SAMPLE_DATASET, Project
    from storage.db import url_for_path

    with tempfile.TemporaryDirectory() as folder:
        project = Project.open(url_for_path(Path(folder) / "sample.assay"))
        import_dataset(project.sessions, SAMPLE_DATASET)
        answers = len(project.answers())

        started = time.perf_counter()
        reports = verify_project(project.sessions, save=False)
        checked = time.perf_counter() - started

        started = time.perf_counter()
        verify_project(project.sessions, save=True)
        stored = time.perf_counter() - started

        started = time.perf_counter()
        result = paired_stress_test(project.sessions, [VerifierRater(project.sessions)], seed=1)
        stressed = time.perf_counter() - started
        project.close()

    points = sum(len(r.points) for r in reports)
    print(f"sample project: {answers} answers, {points} points")
    print(f"  verify (check only)        {checked:6.2f} s   {points / checked:7.0f} points/s")
    print(f"  verify (check and store)   {stored:6.2f} s")
    planted = sum(f["trials"] for f in result["raters"]["verifier"]["by_type"].values())
    print(f"  paired stress test         {stressed:6.2f} s   ({planted} planted errors)")


if __name__ == "__main__":
    main()
