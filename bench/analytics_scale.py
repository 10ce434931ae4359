"""Analytics at scale: a synthetic project of 100,000 answers and 1,000,000 data points (two raters),
scores, agreement and triage timed against a plain pandas baseline on the same data, side by side.

    .venv/bin/python bench/analytics_scale.py [--answers 100000] [--points 10]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
import time
from pathlib import Path

TAGS = ["correct", "correct", "correct", "incorrect", "irrelevant", "missing"]


def build(path: Path, answers: int, points: int) -> None:
    from app.project import Project
    from storage.db import url_for_path

    Project.open(url_for_path(path)).close()  # the real schema, migrated
    rng = random.Random(1)
    db = sqlite3.connect(path)
    db.execute("INSERT INTO documents VALUES (1, 'synthetic.txt', 'txt', 'x', 1, 'Text.', '2026-01-01')")
    db.execute("INSERT INTO questions VALUES (1, 1, 'Q?')")
    db.executemany(
        "INSERT INTO answers (id, question_id, text, meta, created_at) VALUES (?, 1, 'An answer.', ?, '2026-01-01')",
        ((f"a{i}", f'{{"source": "s{i % 4}"}}') for i in range(answers)),
    )
    db.executemany(
        "INSERT INTO raters VALUES (?, ?, ?, '{}', '2026-01-01')", [(1, "judge", "judge"), (2, "ana", "human")]
    )
    db.executemany(
        "INSERT INTO data_points (id, answer_id, rater_id, ordinal, text, span_start, span_end, created_at) "
        "VALUES (?, ?, 1, ?, 'A point.', 0, 8, '2026-01-01')",
        ((i * points + j, f"a{i}", j) for i in range(answers) for j in range(points)),
    )

    def labels():
        for i in range(answers):
            for j in range(points):
                judge = rng.choice(TAGS)
                human = judge if rng.random() < 0.8 else rng.choice(TAGS)
                yield (i * points + j, 1, judge, rng.random())
                yield (i * points + j, 2, human, None)

    db.executemany(
        "INSERT INTO labels (data_point_id, rater_id, tag, confidence, created_at) VALUES (?, ?, ?, ?, '2026-01-01')",
        labels(),
    )
    db.executemany(
        "INSERT INTO judge_outcomes (rater_id, answer_id, status, attempts, passages_seen, prompt_tokens, "
        "completion_tokens, seconds, created_at) VALUES (1, ?, 'judged', 1, '[]', 0, 0, 0, '2026-01-01')",
        ((f"a{i}",) for i in range(answers)),
    )
    db.commit()
    db.close()


def pandas_scores(path: Path):
    """The baseline: load the labels into pandas and compute the same per-answer scores there."""
    import pandas as pd

    with sqlite3.connect(path) as db:
        frame = pd.read_sql_query(
            "SELECT d.answer_id, l.rater_id, l.tag FROM labels l JOIN data_points d ON d.id = l.data_point_id", db
        )
    counts = frame.pivot_table(index=["answer_id", "rater_id"], columns="tag", aggfunc="size", fill_value=0)
    c, i, irr, m = (counts.get(t, 0) for t in ("correct", "incorrect", "irrelevant", "missing"))
    p = c / (c + irr).replace(0, float("nan"))
    r = c / (c + m).replace(0, float("nan"))
    return pd.DataFrame(
        {"correctness": c / (c + i).replace(0, float("nan")), "precision": p, "recall": r, "f1": 2 * p * r / (p + r)}
    )


def timed(label: str, call):
    started = time.perf_counter()
    value = call()
    seconds = time.perf_counter() - started
    print(f"{label:44} {seconds:7.2f} s")
    return value, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--points", type=int, default=10)
    args = parser.parse_args()
    path = Path(tempfile.mkdtemp()) / "scale.assay"
    timed(
        f"build {args.answers} answers × {args.points} points × 2 raters",
        lambda: build(path, args.answers, args.points),
    )

    from app import analytics
    from app.project import Project
    from storage.db import url_for_path

    project = Project.open(url_for_path(path))
    sql, sql_s = timed("scores per answer (SQL aggregates)", lambda: analytics.scores(project))
    base, base_s = timed("scores per answer (pandas baseline)", lambda: pandas_scores(path))
    assert len(sql) == len(base) == 2 * args.answers
    sample = {(r["answer_id"], r["rater"]): r["correctness"] for r in sql[:1000]}
    names = {1: "judge", 2: "ana"}
    for (answer_id, rater_id), row in base.head(1000).iterrows():
        got, want = sample.get((answer_id, names[rater_id])), row["correctness"]
        assert (got is None and want != want) or got is None or abs(got - want) < 1e-9
    timed("scores by source (SQL)", lambda: analytics.scores(project, by="source"))
    timed("agreement, data points (4 coefficients)", lambda: analytics.agreement(project, ["judge", "ana"]))
    timed("triage with threshold sweep", lambda: analytics.triage(project))
    from app import calibration, estimates

    timed("estimates by source (PPI, judge-only, human-only)", lambda: estimates.estimate(project, "source"))
    timed("calibration: reliability and ECE (isotonic, cross-fitted)", lambda: calibration.reliability(project))
    print(f"scores: SQL {sql_s:.2f} s vs pandas {base_s:.2f} s ({base_s / sql_s:.1f}x)")


if __name__ == "__main__":
    main()
