"""What integrity checking and backups cost on a large project: 20,000 answers, 200,000 data points
(two raters' labels on each), built by bench/analytics_scale.py's generator.

Side by side: opening the project as Assay does (header + schema checks, then migrate), the
header and structure checks alone, SQLite's full page-by-page check, and one backup (copy with
the online backup API, plus that full check of the copy).

    PYTHONPATH=. .venv/bin/python bench/integrity_cost.py [--answers 20000] [--points 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analytics_scale import build


def timed(repeat: int, call) -> float:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from app import backups
    from app.project import Project
    from storage.db import connect, url_for_path
    from storage.integrity import check_structure, full_check, inspect_file

    folder = Path(tempfile.mkdtemp(prefix="assay-integrity-"))
    os.environ[backups.BACKUP_DIR_ENV] = str(folder / "backups")
    path = folder / "large.assay"
    build(url_for_path(path), args.answers, args.points)
    url = url_for_path(path)
    engine = connect(url)

    def full() -> None:
        with sqlite3.connect(path) as db:
            assert full_check(db) is None

    rows = {
        "open (as Assay does)": lambda: Project.open(url).close(),
        "header check": lambda: inspect_file(path),
        "structure check": lambda: check_structure(engine, path),
        "full check (quick_check)": full,
        "backup (copy + full check)": lambda: backups.make_backup(path),
    }
    print(f"{args.answers:,} answers, {args.answers * args.points:,} data points, {path.stat().st_size / 1e6:.0f} MB")
    for name, call in rows.items():
        print(f"  {name:28} {timed(args.repeat, call):8.3f} s (median of {args.repeat})")
    engine.dispose()


if __name__ == "__main__":
    main()
