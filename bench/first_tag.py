"""How long a lawyer who opens the sample waits for the first verdicts on the answer on screen.

    .venv/bin/python bench/first_tag.py [--all]

Makes the bundled sample in a fresh project (not timed: the window's welcome does it before the
window opens), then starts the first-open check as the window does (ui/sample_tour.py runs
app.judging.sample_tour.check_sample on a pool thread, the answer on screen first) with the claim
checker, no model, without a window. The clock starts when the window would start the check (the
checker is loaded inside it) and stops when the verdicts of the answer on screen are stored: the
moment the window's answerJudged signal shows them. The check then stops, unless --all checks the
whole tour. The last line: `first tag after N.N s`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="judge every answer of the tour, timing each")
    args = parser.parse_args()

    from app.judging.runs import Progress
    from app.judging.sample_tour import check_sample, import_sample, sample_tour
    from app.project import Project

    with tempfile.TemporaryDirectory() as folder:
        project = Project.open(f"sqlite:///{Path(folder) / 'sample.assay'}")
        made = time.perf_counter()
        import_sample(project)
        print(f"sample made in {time.perf_counter() - made:.1f} s (before the window opens; not timed)")
        tour = sample_tour(project)
        if tour is None:
            raise SystemExit("the fresh sample has no first-open tour: nothing to time")
        on_screen = tour.first_answer
        print(f"on screen: {on_screen}; tour of {len(tour.answer_ids)} answers; {os.cpu_count()} CPU cores")
        cancel = threading.Event()
        first: list[float] = []
        started = time.perf_counter()

        def progressed(progress: Progress) -> None:
            elapsed = time.perf_counter() - started
            print(f"  {progress.answer_id} checked at {elapsed:.1f} s")
            if progress.answer_id == on_screen and not first:
                first.append(elapsed)
                if not args.all:
                    cancel.set()

        summary = check_sample(project, tour, on_progress=progressed, cancel=cancel)
        project.close()
    if not first:
        raise SystemExit(f"the answer on screen got no tag: {summary.failed} failed, {dict(summary.failures)}")
    print(f"{summary.rater}: {summary.judged} answers checked")
    print(f"first tag after {first[0]:.1f} s")


if __name__ == "__main__":
    main()
