"""Each figure of bench/analytics_scale.py timed in CPU seconds beside wall seconds, over a few rounds in
fresh processes, and with --profile its cProfile: on a machine shared with others, wall time is mostly
their load, CPU time what the figure itself costs.

    .venv/bin/python bench/analytics_cpu.py --keep DIR [--answers 100000] [--points 10] [--rounds 3]
    .venv/bin/python bench/analytics_cpu.py --keep DIR --profile OUT   # OUT/<figure>.prof, one round

The SQLite project is the one analytics_scale.py keeps in DIR (built there first when missing). Each
round runs the figures in the bench's order in one process, as the dashboard computes them: the first
pays for reading the label columns. Run it from the root of the tree whose figures it times (another
checkout measures that one's code on the same project).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, os.getcwd())  # the tree it is run from, which need not be this file's

from bench.analytics_scale import _sqlite_project

FIGURES = (
    ("scores", lambda analytics, project: analytics.scores(project)),
    ("scores_by_source", lambda analytics, project: analytics.scores(project, "source")),
    ("scores_by_rater", lambda analytics, project: analytics.scores(project, "rater")),
    ("scores_by_document", lambda analytics, project: analytics.scores(project, "document")),
    ("agreement", lambda analytics, project: analytics.agreement(project)),
    ("agreement_answers", lambda analytics, project: analytics.agreement(project, level="answer")),
    ("alignment", lambda analytics, project: analytics.alignment(project, "judge", "ana")),
    ("triage", lambda _analytics, project: _triage(project)),
)


def _triage(project: object) -> object:
    from app.figures.triage import triage  # its own module: analytics no longer forwards it

    return triage(project, target_miss_rate=0.05)  # type: ignore[arg-type]


def one_round(url: str, profile: str | None) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds of each figure, in a process of its own; with `profile`, each one's cProfile there."""
    import cProfile

    import pandas  # noqa: F401  # imported once, as analytics_scale does: no figure pays for it
    import scipy.optimize
    import scipy.stats  # noqa: F401

    from app.figures import analytics
    from app.project import Project

    project = Project.open(url)
    seconds = {}
    for name, figure in FIGURES:
        profiler = cProfile.Profile() if profile else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        figure(analytics, project)
        if profiler:
            profiler.disable()
            profiler.dump_stats(str(Path(profile) / f"{name}.prof"))
        seconds[name] = (time.perf_counter() - wall, time.process_time() - cpu)
    project.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", metavar="DIR", required=True, help="where analytics_scale.py keeps its project")
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", metavar="OUT", help="write each figure's cProfile to OUT (one round)")
    parser.add_argument("--json", action="store_true", help="print one JSON object, nothing else")
    args = parser.parse_args()

    url = _sqlite_project(args.keep, args.answers, args.points, quiet=args.json)
    if args.profile:
        Path(args.profile).mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("spawn")
    runs = []
    for _ in range(1 if args.profile else args.rounds):
        with context.Pool(1) as pool:
            runs.append(pool.apply(one_round, (url, args.profile)))
    median = {name: [statistics.median(run[name][k] for run in runs) for k in (0, 1)] for name, _ in FIGURES}
    load = os.getloadavg()[0]
    if args.json:
        print(json.dumps({"points": args.answers * args.points, "load_average": load, "median": median}))
        return
    print(f"{args.answers * args.points} points, median of {len(runs)} rounds; load average {load:.1f}")
    print(f"  {'figure':24} {'wall':>8} {'CPU':>8}")
    for name, (wall, cpu) in median.items():
        print(f"  {name:24} {wall:7.2f}s {cpu:7.2f}s")


if __name__ == "__main__":
    main()
