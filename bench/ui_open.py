"""How fast the reviewer's window is on a large project: 10,000 answers, 200,000 judged data points.

    .venv/bin/python bench/ui_open.py [--answers 10000] [--points-per-answer 20] [--keep build/ui_open.assay]

With --keep the built project is kept at that path and reused by later runs of the same size; each
run works on a fresh copy of it, so every run opens answers the reviewer has never opened.

Measures, in wall-clock time and in the CPU time this process spent (the figure to compare on a
machine that other work shares; "the window's thread" leaves out the backup made on open, which runs
beside it), the time to a usable window (queue filled, first answer open) and to the next answer: a
real Ctrl+Down key press, timed until the window's frame showing the new answer is painted, and
until the window is idle again. The window prepares the next answer once the reviewer has read for
100 ms, so a move is timed after 300 ms of the window left to itself, as a reviewer reading gives
it; moves with no pause at all (a key held down) are timed apart: nothing is prepared for them.
The window is left to itself in an event loop, as the application's runs (so that work beside it, the
claim checker's, runs too); a key is pressed once that loop lets it, and how late that was is said:
a window busy on its own thread when the reviewer pressed takes the key only once it is free.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


READING_MS = 300  # a reviewer reads an answer for seconds; the window prepares the next one after 100 ms


def build(path: Path, answers: int, per_answer: int) -> None:
    """The sample, its answers copied until there are `answers`, each with judged data points."""
    import sqlite3

    from app.ingest.datasets import import_dataset
    from app.project import SAMPLE_DATASET, Project
    from storage.db import url_for_path

    project = Project.open(url_for_path(path))
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()
    db = sqlite3.connect(path)
    real = db.execute("SELECT id, question_id, text, meta FROM answers").fetchall()
    copies = [
        (f"{answer_id}-copy{n}", question_id, text, meta)
        for n in range(1, answers // len(real) + 2)
        for answer_id, question_id, text, meta in real
    ][: answers - len(real)]
    db.executemany(
        "INSERT INTO answers (id, question_id, text, meta, created_at) VALUES (?, ?, ?, ?, '2026-01-01')", copies
    )
    db.execute(
        "INSERT INTO raters (id, name, kind, config, created_at) "
        "VALUES (99, 'bench-judge', 'judge', '{}', '2026-01-01')"
    )
    all_answers = db.execute("SELECT id, text FROM answers").fetchall()
    tags = ["correct", "correct", "incorrect", "irrelevant"]
    point_id = 1_000_000
    points, labels, outcomes = [], [], []
    for answer_id, text in all_answers:
        step = max(1, len(text) // per_answer)
        for ordinal in range(per_answer):
            start = min(ordinal * step, len(text) - 1)
            end = min(start + step, len(text))
            points.append((point_id, answer_id, 99, ordinal, text[start:end] or ".", start, end, "2026-01-01"))
            labels.append((point_id, 99, tags[ordinal % 4], 0.7, "2026-01-01"))
            point_id += 1
        outcomes.append((99, answer_id, "judged", 1, "[]", 0, 0, 0.0, "2026-01-01"))
    db.executemany(
        "INSERT INTO data_points (id, answer_id, rater_id, ordinal, text, span_start, span_end, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        points,
    )
    db.executemany(
        "INSERT INTO labels (data_point_id, rater_id, tag, confidence, created_at) VALUES (?, ?, ?, ?, ?)", labels
    )
    db.executemany(
        "INSERT INTO judge_outcomes (rater_id, answer_id, status, attempts, passages_seen, prompt_tokens, "
        "completion_tokens, seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        outcomes,
    )
    db.commit()
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=10_000)
    parser.add_argument("--points-per-answer", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="keep the built project here and reuse it in later runs")
    parser.add_argument(
        "--profile", type=Path, help="write cProfile's figures of the window's thread over the moves here"
    )
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory()  # the copy worked on: 0.7 GB at 100,000 answers, removed at the end
    path = Path(folder.name) / "large.assay"
    os.environ["ASSAY_BACKUP_DIR"] = str(Path(folder.name) / "backups")  # the backup made on open goes with it
    kept = args.keep.with_name(f"{args.keep.stem}-{args.answers}x{args.points_per_answer}.assay") if args.keep else None
    started = time.perf_counter()
    if kept is not None and kept.exists():
        shutil.copyfile(kept, path)
        print(f"copied the kept project {kept} in {time.perf_counter() - started:.1f} s")
    else:
        build(path, args.answers, args.points_per_answer)
        print(
            f"built {args.answers} answers × {args.points_per_answer} data points "
            f"in {time.perf_counter() - started:.1f} s"
        )
        if kept is not None:
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, kept)

    from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from app.project import Project
    from app.workspace import Workspace
    from storage.db import url_for_path
    from ui.review.window import ReviewWindow

    app = QApplication([])
    started, cpu_started, thread_started = time.perf_counter(), time.process_time(), time.thread_time()
    project = Project.open(url_for_path(path))
    window = ReviewWindow(Workspace(project), "bench")
    window.show()
    window.activateWindow()  # the keys go to it
    app.processEvents()
    usable, usable_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    usable_thread = time.thread_time() - thread_started
    rows = window.queue_pane.model.rowCount()
    print(
        f"usable window (queue of {rows} answers, first answer open): {usable * 1000:.0f} ms "
        f"(CPU {usable_cpu * 1000:.0f} ms, the window's thread {usable_thread * 1000:.0f} ms)"
    )

    painted: list[tuple[float, float, float]] = []  # when, the process's CPU time and the window thread's then

    def stamp() -> None:
        painted.append((time.perf_counter(), time.process_time(), time.thread_time()))

    class FramePainted(QObject):
        """Stamps the end of each frame of the window: a call posted as the frame starts runs after it."""

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
            if watched is window and event.type() == QEvent.Type.UpdateRequest:
                QTimer.singleShot(0, stamp)
            return False

    frames = FramePainted()
    window.installEventFilter(frames)

    def leave_alone(ms: int) -> None:
        """The window left to itself in an event loop, as the application's own runs while a reviewer
        reads: waiting there lets a worker thread (the claim checker's) run, where QTest.qWait, which
        holds Python's lock while it sleeps, leaves a worker 1 % of a core."""
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def move(step: int, reading_ms: int) -> tuple[float, float, float, float, float]:
        """A real move: Ctrl+Down (Ctrl+Up) pressed after `reading_ms` of the window left to itself, as a
        reviewer reading the answer leaves it. Returns (key press → the frame showing the new answer
        painted, → the window idle again: the answer saved as opened, the CPU times, and how late the key
        got in: a window busy when the reviewer pressed it lets the key in only once it is free)."""
        due = time.perf_counter() + reading_ms / 1000
        leave_alone(reading_ms)
        late = max(time.perf_counter() - due, 0.0)
        painted.clear()
        key = Qt.Key.Key_Down if step > 0 else Qt.Key.Key_Up
        started, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
        QTest.keyClick(window.answer_pane.points, key, Qt.KeyboardModifier.ControlModifier)
        while not painted:
            app.processEvents()
        # The clocks read as the frame ends: what runs after it in the same turn (the answer saved as
        # opened) is not the reviewer's wait.
        shown, shown_cpu, shown_thread = (
            after - before for after, before in zip(painted[0], (started, cpu, thread), strict=True)
        )
        app.processEvents()  # what the move left for after that frame
        return shown, time.perf_counter() - started, shown_cpu, shown_thread, late

    def report(what: str, moves: list[tuple[float, float, float, float, float]]) -> None:
        shown, idle, cpu, thread, late = ([m[i] * 1000 for m in moves] for i in range(5))
        print(
            f"{what}: shown in median {statistics.median(shown):.0f} ms (max {max(shown):.0f}; CPU median "
            f"{statistics.median(cpu):.0f} ms, the window's thread {statistics.median(thread):.0f} ms), "
            f"window idle again after median {statistics.median(idle):.0f} ms "
            f"(max {max(idle):.0f}); the key let in late by median {statistics.median(late):.0f} ms "
            f"(max {max(late):.0f}: the window was busy)"
        )

    moves = 30
    profiler = None
    if args.profile is not None:  # the window's thread only: cProfile follows the thread it is enabled on
        import cProfile

        profiler = cProfile.Profile()

    def profiled(step: int, reading_ms: int) -> tuple[float, float, float, float, float]:
        """A move of the first set, under the profiler if asked for (the reading left out)."""
        if profiler is None:
            return move(step, reading_ms)
        leave_alone(reading_ms)
        profiler.enable()
        try:
            return move(step, 0)
        finally:
            profiler.disable()

    first = window.queue_pane.model.answer_at(window.queue_pane.table.currentIndex().row()).id
    report(
        f"next answer, each after {READING_MS} ms of reading ({moves} moves, each answer opened for the first time)",
        [profiled(1, READING_MS) for _ in range(moves)],
    )
    report(
        f"back to an answer already opened, each after {READING_MS} ms of reading",
        [move(-1, READING_MS) for _ in range(moves)],
    )
    assert window.state is not None and window.state.answer.id == first
    report(
        "next answer with no pause (a key held down: nothing is prepared ahead), first openings",
        [move(1, 0) for _ in range(2 * moves)][moves:],
    )
    if profiler is not None:
        profiler.dump_stats(args.profile)
        print(f"profile of the first moves written to {args.profile}")
    window.close()
    project.close()
    folder.cleanup()


if __name__ == "__main__":
    main()
