"""Analytics at scale: a synthetic project of 100,000 answers and 1,000,000 data points, each tagged by
a judge and by a reviewer (on her copy of the point), every figure the dashboard and the CLI show
timed beside a pandas recomputation of the scores on the same data, on SQLite and, when a server is
given (ASSAY_TEST_POSTGRES, as tests/with_postgres.sh sets it), on PostgreSQL in the same run.

    .venv/bin/python bench/analytics_scale.py [--answers 100000] [--points 10] [--json] [--keep DIR]
    tests/with_postgres.sh .venv/bin/python bench/analytics_scale.py

With --keep, the SQLite project is built once in DIR and the PostgreSQL one once per server (a
database named after the size), and later runs of the same size measure them again.

With --rls (PostgreSQL), the cost of the matters' walls: every document is filed under one matter, and
the figures are computed twice by one login that is on it (and on 20 others), first with row-level
security switched off on every table, then on, side by side.

    tests/with_postgres.sh .venv/bin/python bench/analytics_scale.py --rls --no-sqlite

The project is built through the schema's own tables (Core bulk inserts), in a child process, so the
peak RSS reported is that of computing the figures, not of making up the data. The figures are
computed one after another in one process, as the dashboard computes its own: the first pays for
reading the label columns and the others reuse them while the project is unchanged
(storage/columns.py), on either store. Each figure's wall-clock time is said with the CPU time the
process spent on it: on a machine that other work shares, the CPU time is the one to compare.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TAGS = ["correct", "correct", "correct", "incorrect", "irrelevant", "missing"]
DOCUMENTS = 50
SAMPLED_SHARE = 0.05  # answers drawn at random and reviewed: what triage's guarantees rest on
CHUNK = 50_000
MATTERS = 21  # --rls: the reader is on all of them; every document is in the first
ROUNDS = 2  # --rls: rounds of walls off and on (in turn first); each figure's mean time is compared
READER = "bench_reader"  # --rls: the login that computes the figures, walls on and off


def build(url: str, answers: int, points: int, matter: bool = False) -> None:
    """Judge points with the reviewer's copies (same identity key), both tagged; judge outcomes;
    the reviewer's submitted reviews; a random review sample. `matter`: all of it in matter 1 (the
    database files every row under its document's matter)."""
    from sqlalchemy import insert

    from app.project import Project
    from storage.schema import (
        AnswerRow,
        DataPointRow,
        DocumentRow,
        JudgeOutcomeRow,
        LabelRow,
        MatterRow,
        QuestionRow,
        RaterRow,
        ReviewRow,
        ReviewSampleRow,
    )

    now = datetime(2026, 1, 1, tzinfo=UTC)
    rng = random.Random(1)
    project = Project.open(url)
    with project.sessions.begin() as session:
        db = session.connection()

        def bulk(table, rows) -> None:
            batch = []
            for row in rows:
                batch.append(row)
                if len(batch) == CHUNK:
                    db.execute(insert(table), batch)
                    batch = []
            if batch:
                db.execute(insert(table), batch)

        if matter:
            bulk(
                MatterRow,
                [
                    {"id": m, "client": f"Client {m}", "number": f"M-{m}", "name": f"Matter {m}", "created_at": now}
                    for m in range(1, MATTERS + 1)
                ],
            )
        bulk(
            DocumentRow,
            (
                {"id": d, "name": f"contract{d}.txt", "format": "txt", "sha256": "x", "parser_version": 1}
                | {"text": "Text.", "created_at": now}
                | ({"matter_id": 1} if matter else {})
                for d in range(1, DOCUMENTS + 1)
            ),
        )
        bulk(QuestionRow, ({"id": d, "document_id": d, "text": f"Q{d}?"} for d in range(1, DOCUMENTS + 1)))
        bulk(
            AnswerRow,
            (
                {"id": f"a{i:06d}", "question_id": i % DOCUMENTS + 1, "text": "An answer.", "generator": f"g{i % 3}"}
                | {"meta": {"source": f"s{i % 4}"}, "created_at": now}
                for i in range(answers)
            ),
        )
        bulk(
            RaterRow,
            [
                {"id": 1, "name": "judge", "kind": "judge", "config": {}, "created_at": now},
                {"id": 2, "name": "ana", "kind": "human", "config": {}, "created_at": now},
            ],
        )
        total = answers * points
        keyed = "point_key" in DataPointRow.__table__.c  # the identity of a point (migration 0008)

        def point(n: int, copy: bool) -> dict:
            i, j = divmod(n, points)
            return {
                "id": n + 1 + (total if copy else 0),
                "answer_id": f"a{i:06d}",
                "rater_id": 2 if copy else 1,
                "ordinal": j,
                "text": "A point.",
                "span_start": 10 * j,
                "span_end": 10 * j + 8,
                "source_id": n + 1 if copy else None,
                "created_at": now,
            } | ({"point_key": f"span:{10 * j}-{10 * j + 8}"} if keyed else {})

        bulk(DataPointRow, (point(n, False) for n in range(total)))
        bulk(DataPointRow, (point(n, True) for n in range(total)))
        tags = [(j, j if rng.random() < 0.8 else rng.choice(TAGS)) for j in (rng.choice(TAGS) for _ in range(total))]
        bulk(
            LabelRow,
            (
                {"data_point_id": n + 1, "rater_id": 1, "tag": tags[n][0], "confidence": rng.random()}
                | {"created_at": now}
                for n in range(total)
            ),
        )
        bulk(
            LabelRow,
            (
                {"data_point_id": total + n + 1, "rater_id": 2, "tag": tags[n][1], "created_at": now}
                for n in range(total)
            ),
        )
        bulk(
            JudgeOutcomeRow,
            (
                {"rater_id": 1, "answer_id": f"a{i:06d}", "status": "judged", "attempts": 1, "passages_seen": []}
                | {"prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "created_at": now}
                for i in range(answers)
            ),
        )
        bulk(
            ReviewRow,
            (
                {"answer_id": f"a{i:06d}", "rater_id": 2, "status": "submitted", "active_seconds": 90.0}
                | {"holistic_correctness": 1 + i % 5, "holistic_relevance": 1 + i * 7 % 5, "updated_at": now}
                for i in range(answers)
            ),
        )
        sampled = rng.sample(range(answers), int(answers * SAMPLED_SHARE))
        bulk(
            ReviewSampleRow,
            (
                {"answer_id": f"a{i:06d}", "draw": 1, "seed": 1, "population": answers, "drawn_by": "bench"}
                | {"drawn_at": now}
                for i in sampled
            ),
        )
    project.close()


def pandas_scores(url: str):
    """The baseline: the labels read into pandas (one query), the same per-answer scores computed there."""
    import pandas as pd
    from sqlalchemy import create_engine

    engine = create_engine(url)
    frame = pd.read_sql_query(
        "SELECT d.answer_id, l.rater_id, l.tag FROM labels l JOIN data_points d ON d.id = l.data_point_id", engine
    )
    engine.dispose()
    counts = frame.pivot_table(index=["answer_id", "rater_id"], columns="tag", aggfunc="size", fill_value=0)
    c, i, irr, m = (counts.get(t, 0) for t in ("correct", "incorrect", "irrelevant", "missing"))
    p = c / (c + irr).replace(0, float("nan"))
    r = c / (c + m).replace(0, float("nan"))
    return pd.DataFrame(
        {"correctness": c / (c + i).replace(0, float("nan")), "precision": p, "recall": r, "f1": 2 * p * r / (p + r)}
    )


def timed(label: str, call, quiet: bool, cpu: dict[str, float] | None = None, key: str = ""):
    """The value of `call` and its wall-clock seconds; with `cpu`, the CPU seconds this process spent
    on it go there under `key` (the figure to compare where other work shares the machine)."""
    started, cpu_started = time.perf_counter(), time.process_time()
    value = call()
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    if cpu is not None:
        cpu[key] = cpu_seconds
    if not quiet:
        print(f"  {label:52} {seconds:7.2f} s  (CPU {cpu_seconds:5.2f} s)", flush=True)
    return value, seconds


def check_scores(fast: list[dict], baseline) -> None:
    """Every per-answer score equals pandas' (the same figure, computed another way)."""
    names = {1: "judge", 2: "ana"}
    want = {(a, names[r]): row for (a, r), row in zip(baseline.index, baseline.itertuples(), strict=True)}
    assert len(fast) == len(want), (len(fast), len(want))
    for row in fast:
        other = want[(row["answer_id"], row["rater"])]
        for key in ("correctness", "precision", "recall", "f1"):
            got, expected = row[key], getattr(other, key)
            assert (got is None) == (expected != expected), (row, other)
            assert got is None or abs(got - expected) < 1e-12, (row, other)


def _import_libraries() -> None:
    import pandas  # noqa: F401
    import scipy.optimize
    import scipy.stats  # noqa: F401


def measure(url: str, quiet: bool) -> dict:
    from app.figures import analytics
    from app.figures.triage import triage as triage_of
    from app.project import Project

    project = Project.open(url)
    seconds: dict[str, float] = {}
    # Once per process, not per figure (the dashboard's worker and a CLI command pay it once): timed
    # apart, so that no figure is charged for being the first to need a library.
    _, imports = timed("importing scipy.stats, scipy.optimize and pandas (once)", _import_libraries, quiet)
    cpu: dict[str, float] = {}

    def figure(key: str, label: str, call):
        value, seconds[key] = timed(label, call, quiet, cpu, key)
        return value

    fast = figure("scores", "scores per answer and rater", lambda: analytics.scores(project))
    base, pandas_s = timed("scores per answer and rater: pandas baseline", lambda: pandas_scores(url), quiet)
    check_scores(fast, base)
    del fast, base
    figure("scores_by_source", "scores by source", lambda: analytics.scores(project, "source"))
    figure("scores_by_rater", "scores by rater", lambda: analytics.scores(project, "rater"))
    figure("scores_by_document", "scores by document", lambda: analytics.scores(project, "document"))
    agreement = figure(
        "agreement", "agreement over every data point (5 coefficients, by source)", lambda: analytics.agreement(project)
    )
    figure(
        "agreement_answers",
        "agreement on answer scores (bucketed, holistic)",
        lambda: analytics.agreement(project, level="answer"),
    )
    figure("alignment", "judge–human alignment", lambda: analytics.alignment(project, "judge", "ana"))
    triage = figure(
        "triage",
        "triage: sweep, bounds, recommendation for 5 %",
        lambda: triage_of(project, target_miss_rate=0.05),
    )
    project.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not quiet:
        print(
            f"  agreement: {agreement['n_items']} items, Cohen's κ {agreement['cohen_kappa']:.4f}, "
            f"Gwet's AC1 {agreement['gwet_ac1']:.4f}; triage: {triage['reviews_used']} random reviews"
        )
        print(
            f"  every figure: {sum(seconds.values()):.2f} s (CPU {sum(cpu.values()):.2f} s); load average "
            f"{os.getloadavg()[0]:.1f}"
        )
        print(
            f"  scores: {seconds['scores']:.2f} s against pandas {pandas_s:.2f} s "
            f"({pandas_s / seconds['scores']:.1f}× faster); peak RSS {peak:.0f} MB"
        )
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "pandas_scores_seconds": pandas_s,
        "peak_rss_mb": round(peak),
        "import_seconds": imports,
    }


def _in_child(target, *args):
    """Run in a fresh process: its memory is not counted in the peak RSS of the one that measures."""
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        return pool.apply(target, args)


def _build_once(url: str, answers: int, points: int, quiet: bool, matter: bool = False) -> None:
    started = time.perf_counter()
    _in_child(build, url, answers, points, matter)
    if not quiet:
        load = os.getloadavg()[0]
        print(f"  built in {time.perf_counter() - started:.0f} s; load average {load:.1f}", flush=True)


def _sqlite_project(keep: str | None, answers: int, points: int, quiet: bool) -> str:
    """A fresh project, or with `keep` the one built there before (built under another name, then
    renamed: an interrupted build is never measured)."""
    from storage.db import url_for_path

    if keep is None:
        path = Path(tempfile.mkdtemp(prefix="assay-bench-")) / "scale.assay"
        _build_once(url_for_path(path), answers, points, quiet)
        return url_for_path(path)
    path = Path(keep) / f"scale-{answers}x{points}.assay"
    if not path.exists():
        part = path.with_suffix(".part")
        part.unlink(missing_ok=True)
        _build_once(url_for_path(part), answers, points, quiet)
        part.rename(path)
    return url_for_path(path)


def _postgres_project(server: str, keep: bool, answers: int, points: int, quiet: bool, matter: bool = False) -> str:
    from sqlalchemy import create_engine

    name = f"assay_bench_{answers}x{points}" if keep else f"assay_bench_{os.getpid()}"
    name += "_matter" if matter else ""
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        exists = connection.exec_driver_sql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'").first()
        if exists and keep:
            admin.dispose()
            return server.replace("/postgres?", f"/{name}?")
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}_part")
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
        connection.exec_driver_sql(f"CREATE DATABASE {name}_part")
        _build_once(server.replace("/postgres?", f"/{name}_part?"), answers, points, quiet, matter)
        connection.exec_driver_sql(f"ALTER DATABASE {name}_part RENAME TO {name}")
    admin.dispose()
    url = server.replace("/postgres?", f"/{name}?")
    # Measured on a settled server: autovacuum would otherwise analyse the freshly loaded tables
    # while the figures are computed (it does so minutes after any bulk load).
    settled = create_engine(url, isolation_level="AUTOCOMMIT")
    with settled.connect() as connection:
        connection.exec_driver_sql("VACUUM ANALYZE")
    settled.dispose()
    return url


def _walls(url: str, on: bool | None = None) -> str:
    """--rls: the reader's login, on every matter of the project (made once); with `on`, row-level
    security switched on or off on every table that has it. The reader's URL."""
    from sqlalchemy import create_engine, make_url

    from storage.matters import MATTER_TABLES, WALLED_TABLES

    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as db:
        if on is None:
            if db.exec_driver_sql(f"SELECT 1 FROM pg_roles WHERE rolname = '{READER}'").first() is None:
                db.exec_driver_sql(f"CREATE ROLE {READER} LOGIN")
            db.exec_driver_sql(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {READER}")
            db.exec_driver_sql(
                "INSERT INTO matter_members (matter_id, person, added_by, added_at) "
                f"SELECT id, '{READER}', 'bench', now() FROM matters ON CONFLICT DO NOTHING"
            )
        else:
            for table in (*WALLED_TABLES, *MATTER_TABLES):
                db.exec_driver_sql(f"ALTER TABLE {table} {'ENABLE' if on else 'DISABLE'} ROW LEVEL SECURITY")
    admin.dispose()
    return make_url(url).set(username=READER).render_as_string(hide_password=False)


def _rls_side_by_side(server: str, keep: bool, answers: int, points: int, quiet: bool) -> dict:
    """The figures of one login on the matter, walls off then on; the ratio of each figure's time."""
    url = _postgres_project(server, keep, answers, points, quiet, matter=True)
    reader = _walls(url)
    runs: dict[str, list[dict]] = {"without_rls": [], "with_rls": []}
    order = [("without_rls", False), ("with_rls", True)]
    for round_ in range(ROUNDS):  # off, on, on, off: a drift in the machine's load weighs on both alike
        for label, on in order if round_ % 2 == 0 else order[::-1]:
            _walls(url, on)
            if not quiet:
                print(f"postgresql, one login on the matter, row-level security {'on' if on else 'off'}:", flush=True)
            runs[label].append(_in_child(measure, reader, quiet))
    off, on_ = (
        {key: sum(run["seconds"][key] for run in runs[label]) / ROUNDS for key in runs[label][0]["seconds"]}
        for label in runs
    )
    ratio = {key: on_[key] / off[key] for key in off if off[key] > 0}
    total = sum(on_.values()) / sum(off.values())
    if not quiet:
        print(f"  mean of {ROUNDS} runs each (off, on, on, off):")
        print(f"  {'figure':28} {'RLS off':>9} {'RLS on':>9} {'ratio':>7}")
        for key in off:
            print(f"  {key:28} {off[key]:8.2f}s {on_[key]:8.2f}s {ratio.get(key, float('nan')):6.2f}×")
        print(f"  {'all figures':28} {sum(off.values()):8.2f}s {sum(on_.values()):8.2f}s {total:6.2f}×")
    return {"without_rls": off, "with_rls": on_, "runs": runs, "ratio": ratio, "ratio_all": total}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print one JSON object, nothing else")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="build the SQLite project in DIR once, and reuse it")
    parser.add_argument("--rls", action="store_true", help="PostgreSQL: the figures with the walls off and on")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()

    stores = [] if args.no_sqlite else ["sqlite"]
    server = os.environ.get("ASSAY_TEST_POSTGRES")
    if server and not args.no_postgres and not args.rls:
        stores.append("postgresql")
    points = args.answers * args.points
    out: dict = {"points": points, "load_average": os.getloadavg()[0]}  # 2 cores shared: read figures beside it
    for store in stores:
        if not args.json:
            print(f"{store}: {args.answers} answers × {args.points} points, judge and reviewer", flush=True)
        if store == "sqlite":
            url = _sqlite_project(args.keep, args.answers, args.points, args.json)
        else:
            url = _postgres_project(server, args.keep is not None, args.answers, args.points, args.json)
        figures = _in_child(measure, url, args.json)
        if store == "sqlite":
            out |= figures
        else:
            out[store] = figures
    if args.rls and server:
        out["postgresql_rls"] = _rls_side_by_side(server, args.keep is not None, args.answers, args.points, args.json)
    if args.json:
        print(json.dumps(out))
    elif "postgresql" not in out and "postgresql_rls" not in out:
        print("(no PostgreSQL: run under tests/with_postgres.sh to measure it too)")


if __name__ == "__main__":
    main()
