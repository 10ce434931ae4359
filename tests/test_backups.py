"""Backups, restore, and damaged files: a clear sentence and the way back, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from app import backups
from app.cli import main
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from app.review.session import ReviewSession
from models.vocabulary import Tag
from storage.db import url_for_path


@pytest.fixture
def sample_file(tmp_path: Path, monkeypatch) -> Path:
    """A closed sample project, with its own backup folder."""
    monkeypatch.setenv(backups.BACKUP_DIR_ENV, str(tmp_path / "backups"))
    path = tmp_path / "review.assay"
    project = Project.open(url_for_path(path))
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()
    return path


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_a_truncated_project_is_named_with_the_backup_to_restore(sample_file: Path, capsys) -> None:
    assert _run(capsys, "--project", str(sample_file), "backup")[0] == 0
    data = sample_file.read_bytes()
    sample_file.write_bytes(data[: len(data) // 2])  # a copy interrupted half-way

    status, _out, err = _run(capsys, "--project", str(sample_file), "info")

    assert status == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"{sample_file} is damaged: it is cut short" in err
    newest = backups.list_backups(sample_file)[0]
    assert f"restore {newest.path}" in err


def test_a_garbage_file_is_not_called_encrypted(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("ASSAY_PASSPHRASE", raising=False)
    garbage = tmp_path / "garbage.assay"
    garbage.write_bytes(os.urandom(10_001))
    pdf = tmp_path / "contract.assay"
    pdf.write_bytes(b"%PDF-1.7\n" + b"1 0 obj << >> endobj\n" * 300)
    for path, kind in ((garbage, "if it was an encrypted project, it has been cut short"), (pdf, "a PDF document")):
        before = path.read_bytes()
        status, _out, err = _run(capsys, "--project", str(path), "info")
        assert status == 2
        assert f"{path} is not an Assay project: it is neither a SQLite database nor an encrypted project" in err
        assert kind in err and "ASSAY_PASSPHRASE" not in err
        assert path.read_bytes() == before  # refused, not "repaired" into a new project


def test_ciphertext_that_starts_like_json_is_still_an_encrypted_project(tmp_path: Path, capsys, monkeypatch) -> None:
    """One encrypted page in 128 starts with { or [: it must ask for the passphrase, not say JSON."""
    monkeypatch.delenv("ASSAY_PASSPHRASE", raising=False)
    for start in (b"{", b"["):
        locked = tmp_path / f"locked{start.decode()}.assay"
        locked.write_bytes(start + os.urandom(4 * 4096 - 1))
        status, _out, err = _run(capsys, "--project", str(locked), "info")
        assert status == 2 and "is encrypted" in err and "JSON" not in err
    text = tmp_path / "labels.assay"
    text.write_bytes(b'[{"answer_id": "a", "tag": "correct"}]\n' * 200)
    status, _out, err = _run(capsys, "--project", str(text), "info")
    assert status == 2 and "it looks like a JSON file" in err


def test_a_sqlite_database_of_another_program_is_left_alone(tmp_path: Path, capsys) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE contacts (name TEXT)")
    status, _out, err = _run(capsys, "--project", str(other), "info")
    assert status == 2 and "a SQLite database of another program (tables contacts)" in err
    with sqlite3.connect(other) as db:
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["contacts"]


def test_a_damaged_page_is_found_by_the_backup_check_and_no_backup_is_kept(sample_file: Path, capsys) -> None:
    with sqlite3.connect(sample_file) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'passages'").fetchone()[0]
    with sample_file.open("r+b") as handle:  # the passages table's root page, overwritten
        handle.seek((root - 1) * page_size)
        handle.write(b"\xff" * page_size)

    status, _out, err = _run(capsys, "--project", str(sample_file), "backup")

    assert status == 2 and "Traceback" not in err
    assert f"{sample_file} is damaged" in err
    assert backups.list_backups(sample_file) == []
    assert not any(backups.backup_folder(sample_file).glob("*partial*"))


def _tamper(path: Path, *statements: str) -> None:
    with sqlite3.connect(path) as db:  # someone with sqlite3 and bad intentions
        db.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
        db.execute("DROP TRIGGER IF EXISTS audit_log_no_delete")
        for statement in statements:
            db.execute(statement)


@pytest.mark.parametrize(
    ("statements", "first", "problem"),
    [
        (["UPDATE audit_log SET actor = 'mallory' WHERE id = 2"], 2, "it was edited"),
        (["UPDATE audit_log SET payload = '{\"name\": oops' WHERE id = 2"], 2, "its payload is no longer JSON"),
        (["DELETE FROM audit_log WHERE id = 2"], 3, "an entry was removed or inserted"),
        (
            [
                "UPDATE audit_log SET id = -2 WHERE id = 2",
                "UPDATE audit_log SET id = 2 WHERE id = 3",
                "UPDATE audit_log SET id = 3 WHERE id = -2",
            ],
            2,
            "reordered",
        ),
        ([], None, "the trigger audit_log_no_update that keeps the log append-only was dropped"),
    ],
    ids=["edited", "invalid-json", "deleted", "reordered", "trigger-dropped"],
)
def test_audit_verify_reports_each_kind_of_tampering(sample_file: Path, capsys, statements, first, problem) -> None:
    url = url_for_path(sample_file)
    project = Project.open(url)
    for host in ("a.example", "b.example", "c.example"):  # a few more entries to tamper with
        project.set_host_allowed(host, True, "ana")
    project.close()
    assert _run(capsys, "--project", str(sample_file), "audit", "verify")[0] == 0
    _tamper(sample_file, *statements)

    status, out, err = _run(capsys, "--project", str(sample_file), "audit", "verify", "--json")

    assert status == 1 and not err
    report = json.loads(out)
    assert not report["ok"]
    entries = [p for p in report["problems"] if p["entry_id"] is not None]
    assert (entries[0]["entry_id"] if entries else None) == first
    assert any(problem in p["problem"] for p in report["problems"])
    status, out, _err = _run(capsys, "--project", str(sample_file), "audit", "verify")
    assert status == 1 and (first is None or f"first bad entry: {first}" in out)


def test_restore_round_trip_keeps_later_work_aside(sample_file: Path, capsys) -> None:
    url = url_for_path(sample_file)
    assert _run(capsys, "--project", str(sample_file), "backup")[0] == 0
    project = Project.open(url)
    project.set_host_allowed("after-the-backup.example", True, "ana")  # work made after the backup
    project.close()

    status, out, _err = _run(capsys, "--project", str(sample_file), "restore", "--list")
    assert status == 0 and out.startswith("  1  ")
    status, out, _err = _run(capsys, "--project", str(sample_file), "restore", "1")
    assert status == 0

    restored = Project.open(url)
    assert restored.allowed_hosts() == [] and restored.counts()["answers"] > 0
    restored.close()
    aside = next(sample_file.parent.glob("review.before-restore-*.assay"))
    assert f"kept as {aside}" in out
    kept = Project.open(url_for_path(aside))
    assert kept.allowed_hosts() == ["after-the-backup.example"]
    kept.close()


def _swapped(path: Path) -> bool:
    return any(path.parent.glob(f"{path.stem}.before-restore-*"))


def _holding(project: Project) -> tuple[threading.Thread, threading.Event]:
    """A reader on a worker thread (the dashboard's, say) in the middle of a transaction on the project file,
    until the event returned is set."""
    reading, read_on = threading.Event(), threading.Event()

    def read() -> None:
        with project.sessions() as session:
            session.execute(text("SELECT count(*) FROM answers")).scalar_one()
            reading.set()
            assert read_on.wait(60)

    reader = threading.Thread(target=read)
    reader.start()
    assert reading.wait(30)
    return reader, read_on


def _until(happened: Callable[[], bool], within_s: float = 120) -> None:
    """Wait for an event another thread makes happen (not for a time it should take)."""
    deadline = time.monotonic() + within_s
    while not happened():
        assert time.monotonic() < deadline, "it never happened"
        time.sleep(0.01)


def test_a_restore_waits_for_the_claim_check_reading_the_file(sample_file: Path) -> None:
    """The window's claim check reads the project on a worker thread, query after query. A restore made
    meanwhile waits for the whole check: it never reads part of one file and part of another."""
    backup = backups.make_backup(sample_file).path
    project = Project.open(url_for_path(sample_file))
    project.set_host_allowed("after-the-backup.example", True, "ana")  # work made after the backup
    between, go_on, seen = threading.Event(), threading.Event(), []

    def claim_checker():
        def claims(answer_id: str) -> None:
            seen.append(project.allowed_hosts())  # one query, its connection returned
            between.set()
            assert go_on.wait(30)
            seen.append(project.allowed_hosts())  # and the next, after the restore was asked for

        return claims

    review = ReviewSession(project, "ana", claim_checker=claim_checker)
    checking = threading.Thread(target=review.claim_findings, args=("contractnli-027",))
    checking.start()
    assert between.wait(30)
    restoring = threading.Thread(target=review.restore_backup, args=(backup,))
    restoring.start()
    _until(lambda: project._gate is not None and project._gate.waiting_to_replace)  # the restore waits
    assert restoring.is_alive() and not _swapped(sample_file)

    go_on.set()
    checking.join(30)
    restoring.join(30)
    assert seen == [["after-the-backup.example"]] * 2  # the whole check read the file it began on
    assert _swapped(sample_file) and project.allowed_hosts() == []  # the window's project is the restored file
    project.close()


def test_every_reader_on_another_thread_is_waited_for_and_then_reads_the_restored_file(sample_file: Path) -> None:
    """Not only the claim check: a restore waits for any reader's open connection (a connection on the old
    file, kept on, would delete the restored file's write-ahead log when it closed), and a reader that asks
    while the restore waits is given the restored file."""
    backup = backups.make_backup(sample_file).path
    project = Project.open(url_for_path(sample_file))
    project.set_host_allowed("after-the-backup.example", True, "ana")
    review = ReviewSession(project, "ana")
    reader, read_on = _holding(project)

    restoring = threading.Thread(target=review.restore_backup, args=(backup,))
    restoring.start()
    _until(lambda: project._gate is not None and project._gate.waiting_to_replace)  # the restore waits
    assert restoring.is_alive() and not _swapped(sample_file)
    later: list[list[str]] = []
    asking = threading.Thread(target=lambda: later.append(project.allowed_hosts()))
    asking.start()
    asking.join(0.5)
    assert asking.is_alive()  # held off until the file is replaced

    read_on.set()
    for thread in (reader, restoring, asking):
        thread.join(30)
    assert later == [[]] and _swapped(sample_file)
    project.set_host_allowed("after-the-restore.example", True, "ana")  # the restored file takes new work
    project.close()
    reopened = Project.open(url_for_path(sample_file))
    assert reopened.allowed_hosts() == ["after-the-restore.example"]
    reopened.close()


def test_a_restore_refused_while_a_reader_holds_on_leaves_the_file_as_it_was(sample_file: Path, monkeypatch) -> None:
    from storage import file_gate

    monkeypatch.setattr(file_gate, "WAIT_S", 0.5)
    backup = backups.make_backup(sample_file).path
    project = Project.open(url_for_path(sample_file))
    project.set_host_allowed("after-the-backup.example", True, "ana")
    review = ReviewSession(project, "ana")
    said: list[str] = []
    review.subscribe(lambda changes: said.append(changes.message or ""))
    reader, read_on = _holding(project)

    assert review.restore_backup(backup) is None
    assert "still being read" in said[-1] and "not replaced" in said[-1]
    assert not _swapped(sample_file) and not list(sample_file.parent.glob(".*.restoring"))
    read_on.set()
    reader.join(30)
    assert project.allowed_hosts() == ["after-the-backup.example"]  # nothing lost, nothing half done
    project.close()


def test_a_restore_is_refused_at_once_while_a_judge_run_writes(sample_file: Path, monkeypatch) -> None:
    """A long task that writes as it goes (a judge run, a model check, the dashboard's child process) is not
    waited for: the restore says what is using the project, at once, and nothing is replaced."""
    from storage import file_gate

    monkeypatch.setattr(file_gate, "WAIT_S", 600.0)  # what a short reader would be waited for
    backup = backups.make_backup(sample_file).path
    project = Project.open(url_for_path(sample_file))
    review = ReviewSession(project, "ana")
    said: list[str] = []
    review.subscribe(lambda changes: said.append(changes.message or ""))
    running, stop = threading.Event(), threading.Event()

    def judge_run() -> None:
        with project.reading("a judge run"):
            running.set()
            assert stop.wait(60)

    judging = threading.Thread(target=judge_run)
    judging.start()
    assert running.wait(30)
    started = time.monotonic()
    assert review.restore_backup(backup) is None
    assert time.monotonic() - started < 300  # not waited for as a short reader would be
    assert said[-1].startswith("a judge run is using the project: it was not replaced")
    assert not _swapped(sample_file)
    stop.set()
    judging.join(30)
    assert review.restore_backup(backup) is not None and _swapped(sample_file)  # once the run has ended
    project.close()


def test_a_restore_is_refused_while_another_process_has_the_project_open(sample_file: Path, capsys) -> None:
    """No gate of this process counts another's connections (a second window, `assay serve`): while one has the
    file open, `assay restore` says so and changes nothing; once it has let go, the restore goes through."""
    import subprocess
    import sys

    backups.make_backup(sample_file)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]);"
            " c.execute('SELECT count(*) FROM answers').fetchall(); print('open', flush=True); sys.stdin.readline()",
            str(sample_file),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        before = sample_file.read_bytes()
        status, _out, err = _run(capsys, "--project", str(sample_file), "restore", "1")
        assert status == 2 and "is open in another Assay window or command" in err
        assert sample_file.read_bytes() == before and not _swapped(sample_file)
    finally:
        holder.communicate("\n", timeout=30)
    status, _out, _err = _run(capsys, "--project", str(sample_file), "restore", "1")
    assert status == 0 and _swapped(sample_file)


def test_a_damaged_backup_is_never_restored(sample_file: Path, capsys) -> None:
    made = backups.make_backup(sample_file)
    made.path.write_bytes(made.path.read_bytes()[:8192])
    before = sample_file.read_bytes()
    status, _out, err = _run(capsys, "--project", str(sample_file), "restore", str(made.path))
    assert status == 2 and "this backup cannot be restored: it is cut short" in err
    assert sample_file.read_bytes() == before
    assert not list(sample_file.parent.glob("*before-restore*"))


def test_an_encrypted_projects_backup_stays_encrypted(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv(backups.BACKUP_DIR_ENV, str(tmp_path / "backups"))
    monkeypatch.setenv("ASSAY_PASSPHRASE", "correct horse 'battery'")
    path = tmp_path / "secret.assay"
    assert _run(capsys, "--project", str(path), "--encrypt", "import", str(SAMPLE_DATASET))[0] == 0
    assert _run(capsys, "--project", str(path), "backup")[0] == 0

    copy = backups.list_backups(path)[0].path
    assert not copy.read_bytes().startswith(b"SQLite format 3")
    assert b"Confidentiality" not in copy.read_bytes()  # a word of the sample contracts
    original = Project.open(url_for_path(path), "correct horse 'battery'")
    opened = Project.open(url_for_path(copy), "correct horse 'battery'")
    assert opened.counts() == original.counts()
    opened.close()
    original.close()

    monkeypatch.delenv("ASSAY_PASSPHRASE")
    status, _out, err = _run(capsys, "--project", str(copy), "info")
    assert status == 2 and "is encrypted" in err


def test_rotation_keeps_the_last_ten_and_one_a_day_for_a_week(sample_file: Path) -> None:
    now = datetime(2026, 11, 23, 12, 0)
    folder = backups.backup_folder(sample_file)
    folder.mkdir(parents=True)
    made = [now - timedelta(days=d, minutes=m) for d in range(10) for m in (0, 30)] + [
        now - timedelta(minutes=m) for m in range(1, 12)
    ]
    for taken in made:
        shutil.copy(sample_file, folder / f"review-{taken:%Y-%m-%d_%H%M%S_%f}.assay")

    backups.rotate(sample_file, now=now)

    kept = [b.taken for b in backups.list_backups(sample_file)]
    assert kept[:10] == sorted(made, reverse=True)[:10]
    days = {t.date() for t in kept}
    assert days == {(now - timedelta(days=d)).date() for d in range(7)}
    assert len(kept) == 10 + 6  # today is among the last ten; six older days keep one each


def test_a_timed_backup_is_due_only_after_a_change(sample_file: Path) -> None:
    clock = [0.0]
    schedule = backups.BackupSchedule(sample_file, minutes=15, clock=lambda: clock[0])
    clock[0] = 16 * 60
    assert not schedule.due()  # nothing changed
    project = Project.open(url_for_path(sample_file))
    project.set_host_allowed("x.example", True, "ana")
    assert schedule.due()
    schedule.done()
    assert not schedule.due()
    project.close()


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda item: item.pop("review"), "the field 'review' is missing"),
        (lambda item: item["review"].update(holistic_correctness=9), "holistic_correctness is 9, not a rating"),
        (lambda item: item["points"][0].update(span=[0, 10**30]), "point 1 has offsets 0, 10000000000"),
        (lambda item: item["points"][0].update(text={"a": 1}), 'point 1\'s text is {"a": 1}, not text'),
    ],
    ids=["field missing", "rating out of range", "span past the answer", "text of the wrong type"],
)
def test_a_resealed_bundle_that_is_not_well_formed_is_refused_whole(
    sample_file: Path, tmp_path: Path, capsys, edit, problem
) -> None:
    from app.review.service import ReviewService
    from app.review.team import _digest

    reviewed = tmp_path / "reviewed.assay"
    shutil.copy(sample_file, reviewed)
    project = Project.open(url_for_path(reviewed))
    service = ReviewService(project, "ana")
    answer = project.answers()[0].id
    service.set_tag(answer, service.open(answer).points[0].point.id, Tag.CORRECT)
    project.close()
    bundle = tmp_path / "ana.json"
    assert _run(capsys, "--project", str(reviewed), "bundle", "export", str(bundle), "--reviewer", "ana")[0] == 0
    body = json.loads(bundle.read_text(encoding="utf-8"))
    body.pop("sha256")
    edit(body["items"][0])  # a tool that writes its own bundles got a field wrong, then sealed it
    bundle.write_text(json.dumps({**body, "sha256": _digest(body)}), encoding="utf-8")
    with sqlite3.connect(sample_file) as db:
        before = db.execute("SELECT count(*) FROM labels").fetchone()

    status, _out, err = _run(capsys, "--project", str(sample_file), "bundle", "import", str(bundle))

    assert status == 2 and "Traceback" not in err
    assert f"{bundle}: not a valid bundle, nothing was merged: " in err and problem in err
    with sqlite3.connect(sample_file) as db:
        assert db.execute("SELECT count(*) FROM labels").fetchone() == before
