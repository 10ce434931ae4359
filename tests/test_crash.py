"""A killed process loses nothing it acknowledged: SIGKILL at random moments during import, review
and judge runs (24 kills), then integrity, all-or-nothing imports, acknowledged actions, resumed runs."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from storage.db import url_for_path

from .judge_helpers import chat_reply, scripted_http_server, wait_for

ASSAY = str(Path(sys.executable).with_name("assay"))
RNG = random.Random(20261122)


def _kill_after(command: list[str], seconds: float) -> str:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(seconds)
    os.kill(process.pid, signal.SIGKILL)
    out, _ = process.communicate()
    return out


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


def test_killed_imports_are_all_or_nothing(tmp_path: Path) -> None:
    for run in range(8):
        path = tmp_path / f"import{run}.assay"
        Project.open(url_for_path(path)).close()  # the schema exists; the kill hits the import itself
        _kill_after([ASSAY, "--project", str(path), "import", str(SAMPLE_DATASET)], RNG.uniform(0.3, 4.0))
        assert _integrity(path) == "ok"
        with sqlite3.connect(path) as db:
            documents, answers, passages = (
                db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("documents", "answers", "passages")
            )
        assert (documents, answers) in ((0, 0), (12, 153)), (documents, answers)
        assert passages in (0, 2283)


REVIEWER = """
import sys
from app.project import Project
from app.review.service import ReviewService
from models.vocabulary import Tag
from storage.db import url_for_path
service = ReviewService(Project.open(url_for_path(sys.argv[1])), "ana")
tags = [Tag.CORRECT, Tag.INCORRECT, Tag.IRRELEVANT]
for answer in [a.id for a in service.project.answers()][:40]:
    for i, point in enumerate(service.open(answer).points):
        service.set_tag(answer, point.point.id, tags[(i + len(answer)) % 3])
        print(point.point.id, tags[(i + len(answer)) % 3].value, flush=True)  # acknowledged: saved
"""


def _acknowledged(out: str) -> dict[int, str]:
    """The actions the reviewer's script printed whole: a line the kill cut short acknowledged nothing
    (once, on a loaded machine, a line held one word)."""
    whole = [line.split() for line in out.splitlines()]
    return {
        int(w[0]): w[1]
        for w in whole
        if len(w) == 2 and w[0].isdigit() and w[1] in {"correct", "incorrect", "irrelevant"}
    }


def test_killed_review_keeps_every_acknowledged_action(tmp_path: Path) -> None:
    path = tmp_path / "review.assay"
    project = Project.open(url_for_path(path))
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()
    acknowledged: dict[int, str] = {}
    for _ in range(8):
        out = _kill_after([sys.executable, "-c", REVIEWER, str(path)], RNG.uniform(1.5, 4.0))
        acknowledged |= _acknowledged(out)
        assert _integrity(path) == "ok"
    with sqlite3.connect(path) as db:
        stored = dict(
            db.execute(
                "SELECT l.data_point_id, l.tag FROM labels l JOIN raters r ON r.id = l.rater_id WHERE r.name = 'ana'"
            ).fetchall()
        )
    assert len(acknowledged) > 20
    lost = {pid: tag for pid, tag in acknowledged.items() if stored.get(pid) != tag}
    assert lost == {}


def test_killed_api_judge_runs_resume_without_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "judge.assay"
    project = Project.open(url_for_path(path))
    import_dataset(project.sessions, SAMPLE_DATASET)
    ids = ",".join(a.id for a in project.answers()[:30])
    project.close()
    replies = [(200, chat_reply('{"tag": "correct"}'))] * 5000
    with scripted_http_server(replies) as (url, _):
        command = [
            ASSAY,
            "--project",
            str(path),
            "judge",
            "--backend",
            "openai",
            "--base-url",
            url,
            "--model",
            "m",
            "--allow-network",
            "--no-missing",
            "--answers",
            ids,
            "--name",
            "api",
        ]
        for _ in range(8):
            _kill_after(command, RNG.uniform(0.8, 3.0))
            assert _integrity(path) == "ok"
        assert subprocess.run(command, capture_output=True, timeout=300).returncode == 0

    def counts() -> tuple[int, int]:
        with sqlite3.connect(path) as db:
            return db.execute("SELECT count(*), count(DISTINCT answer_id) FROM judge_outcomes").fetchone()

    assert wait_for(lambda: counts() == (30, 30), timeout=5)
    with sqlite3.connect(path) as db:
        duplicated = db.execute(
            "SELECT answer_id, ordinal FROM data_points GROUP BY answer_id, rater_id, ordinal HAVING count(*) > 1"
        ).fetchall()
    assert duplicated == []


def test_two_processes_writing_one_project_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.assay"
    project = Project.open(url_for_path(path))
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()
    script = REVIEWER.replace('"ana"', "sys.argv[2]").replace("[:40]", "[:20]")
    runs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), name], stdout=subprocess.PIPE, text=True)
        for name in ("ana", "ben")
    ]
    outputs = [run.communicate(timeout=300)[0] for run in runs]
    assert all(run.returncode == 0 for run in runs)
    with sqlite3.connect(path) as db:
        for name, out in zip(("ana", "ben"), outputs, strict=True):
            stored = db.execute(
                "SELECT count(*) FROM labels l JOIN raters r ON r.id = l.rater_id WHERE r.name = ?", (name,)
            ).fetchone()[0]
            assert stored == len(out.splitlines()) > 30
