"""The newest entries of the audit log, after the last signed head, are witnessed outside the project.

An attacker who can write the project file deletes the newest audit entry of one kind (a guideline
change, a sign-off, a reopening, an adjudication, a key registered or retired, a matter or a wall),
with what it recorded, the triggers that keep the log append-only dropped and put back: in the file
itself, or in a copy of it on the same computer. `assay audit verify` must exit 1 with a sentence
naming the entry that is missing. Copies, moves and restores that are legitimate must stay green.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from sqlalchemy import text

from app import backups, keys, matters
from app.cli import main
from app.ingest.labels import import_labels
from app.project import DEFAULT_GUIDELINES, Project
from app.review import adjudication
from app.review.service import ReviewService
from models.segmentation import segment_answer
from models.vocabulary import Tag
from storage.audit import VERIFY_SEES
from storage.db import url_for_path

ANSWER = "contractnli-027"


def _verify(capsys: pytest.CaptureFixture[str], url: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["--db", url, "audit", "verify"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out + err


def _newest(project: Project) -> tuple[int, str]:
    with project.sessions() as session:
        entry_id, action = session.execute(text("SELECT id, action FROM audit_log ORDER BY id DESC LIMIT 1")).one()
    return int(entry_id), action


def _cut_newest(url: str, *also: str) -> None:
    """Delete the newest audit entry, the heads that name it and `also` (what it recorded), every
    trigger dropped and put back, as someone with sqlite3 would."""
    import sqlite3

    with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db:
        triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
        for name, _ in triggers:
            db.execute(f"DROP TRIGGER {name}")
        newest = db.execute("SELECT max(id) FROM audit_log").fetchone()[0]
        for statement in also:
            db.execute(statement)
        db.execute("DELETE FROM audit_heads WHERE entry_id = ?", (newest,))
        db.execute("DELETE FROM audit_log WHERE id = ?", (newest,))
        for _, sql in triggers:
            db.execute(sql)
        db.commit()


def _submitted(project: Project, reviewer: str, answer_id: str = ANSWER) -> ReviewService:
    service = ReviewService(project, reviewer)
    for point in service.open(answer_id).points:
        service.set_tag(answer_id, point.point.id, Tag.CORRECT)
    service.submit(answer_id)
    return service


# Each kind: what makes it the newest entry, and what the attacker deletes with it.


def _guideline_change(project: Project) -> list[str]:
    project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "lead")
    project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8") + "\nCite the clause.", "lead")
    return ["DELETE FROM guideline_versions WHERE version = (SELECT max(version) FROM guideline_versions)"]


def _signoff(project: Project) -> list[str]:
    _submitted(project, "ana").sign_off(ANSWER)
    return [f"DELETE FROM signoffs WHERE answer_id = '{ANSWER}'"]


def _reopening(project: Project) -> list[str]:
    service = _submitted(project, "ana")
    service.sign_off(ANSWER)
    service.reopen(ANSWER, "the guideline changed")
    return []


def _adjudication(project: Project) -> list[str]:
    lines = []
    segments = segment_answer(project.answer(ANSWER).text)
    for rater in ("ana", "ben"):  # ben tags the second point incorrect: one point disputed
        points = [
            {"text": s.text, "tag": "incorrect" if (rater, i) == ("ben", 1) else "correct"}
            for i, s in enumerate(segments)
        ]
        lines.append({"answer_id": ANSWER, "rater": rater, "kind": "human", "data_points": points, "sampled": True})
    path = Path(project.url.removeprefix("sqlite:///")).with_name("labels.jsonl")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_labels(project, path)
    assert adjudication.decide(project, ANSWER, 2, Tag.CORRECT, "reviewer error", "lead").settled
    return []


def _key_registration(project: Project) -> list[str]:
    project.set_host_allowed("before.example", True, "lead")
    with project.sessions.begin() as session:
        signer, _ = keys.signing_key(session, "ben")
    return [f"DELETE FROM reviewer_keys WHERE fingerprint = '{signer.fingerprint}'"]


def _key_retirement(project: Project) -> list[str]:
    _submitted(project, "ana").sign_off(ANSWER)
    with project.sessions() as session:
        fingerprint = session.execute(text("SELECT fingerprint FROM reviewer_keys")).scalar_one()
    assert main(["--db", project.url, "keys", "retire", fingerprint, "--reviewer", "ana"]) == 0
    return []


def _matter(project: Project) -> list[str]:
    project.set_host_allowed("before.example", True, "lead")
    matters.create(project, "Acme", "A-1", "Acme NDA review", "lead")
    return ["DELETE FROM matters"]


def _wall(project: Project) -> list[str]:
    matters.create(project, "Acme", "A-1", "Acme NDA review", "lead")
    matters.wall(project, "carol", "Acme", "acts for Acme's rival", "lead")
    return ["DELETE FROM matter_walls"]


KINDS: dict[str, tuple[Callable[[Project], list[str]], str, str]] = {
    "guideline change": (_guideline_change, "guidelines.set", "a guideline change"),
    "sign-off": (_signoff, "review.signed", "a sign-off"),
    "reopening": (_reopening, "review.reopened", "a reopening of a signed review"),
    "adjudication": (_adjudication, "adjudication.consensus", "an adjudication's consensus"),
    "key registration": (_key_registration, "key.registered", "a key's registration"),
    "key retirement": (_key_retirement, "key.retired", "a key's retirement"),
    "matter": (_matter, "matter.created", "a change to a matter"),
    "wall": (_wall, "wall.added", "a change to an ethical wall"),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_newest_entry_of_each_kind_deleted_is_reported_in_place_and_in_a_copy(
    kind: str, sample_project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make, action, words = KINDS[kind]
    also = make(sample_project)
    newest, made = _newest(sample_project)
    assert made == action
    url = sample_project.url
    sample_project.close()  # the write-ahead log folded into the file: a copy holds everything
    assert _verify(capsys, url)[0] == 0
    copy = url_for_path(tmp_path / "copy.assay")
    shutil.copy(url.removeprefix("sqlite:///"), copy.removeprefix("sqlite:///"))

    _cut_newest(url, *also)
    status, out = _verify(capsys, url)
    assert status == 1, out
    assert f"the log was cut short after entry {newest - 1}: entry {newest} ({words}: {action} " in out

    _cut_newest(copy, *also)
    status, out = _verify(capsys, copy)
    assert status == 1, out
    assert f"this copy's log ends at entry {newest - 1}, but entry {newest} ({words}: {action} " in out
    assert f"was in the project at {url.removeprefix('sqlite:///')}" in out


@pytest.mark.every_store
def test_the_newest_guideline_change_deleted_in_place_is_reported_on_either_store(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.set_host_allowed("before.example", True, "lead")
    project.set_guidelines("Tag each point.", "lead")
    newest, _ = _newest(project)
    with project.sessions.begin() as session:
        if session.get_bind().dialect.name == "sqlite":
            saved = session.execute(text("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")).all()
            for name, _ in saved:
                session.execute(text(f"DROP TRIGGER {name}"))
            session.execute(text("DELETE FROM audit_log WHERE id = :n"), {"n": newest})
            session.execute(text("DELETE FROM guideline_versions"))
            for _, sql in saved:
                session.execute(text(sql))
        else:
            for table in ("audit_log", "guideline_versions"):
                session.execute(text(f"ALTER TABLE {table} DISABLE TRIGGER USER"))
            session.execute(text("DELETE FROM audit_log WHERE id = :n"), {"n": newest})
            session.execute(text("DELETE FROM guideline_versions"))
            for table in ("audit_log", "guideline_versions"):
                session.execute(text(f"ALTER TABLE {table} ENABLE TRIGGER USER"))
    status, out = _verify(capsys, project.url)
    assert status == 1, out
    assert f"entry {newest} (a guideline change: guidelines.set guidelines 1, by lead" in out


def test_verify_says_what_it_can_and_cannot_see(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.set_host_allowed("a.example", True, "lead")
    status, out = _verify(capsys, project.url)
    assert status == 0 and VERIFY_SEES in out
    assert main(["--db", project.url, "audit", "verify", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["sees"] == VERIFY_SEES


# ---------------------------------------------------------------- legitimate copies stay green


def _opened(path: Path) -> Project:
    return Project.open(url_for_path(path))


def test_copies_moves_and_forks_of_a_project_stay_green(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    original = tmp_path / "review.assay"
    project = _opened(original)
    project.set_host_allowed("a.example", True, "lead")
    project.close()

    copy = tmp_path / "copy.assay"
    shutil.copy(original, copy)
    assert _verify(capsys, url_for_path(copy))[0] == 0  # a copy of the file as it is

    moved = tmp_path / "moved" / "review.assay"
    moved.parent.mkdir()
    shutil.move(original, moved)
    assert _verify(capsys, url_for_path(moved))[0] == 0  # a file moved holds what was anchored before

    for path, host in ((copy, "b.example"), (moved, "c.example")):  # each goes its own way
        opened = _opened(path)
        opened.set_host_allowed(host, True, "lead")
        opened.close()
    for path in (copy, moved):
        assert _verify(capsys, url_for_path(path))[0] == 0

    older = tmp_path / "older.assay"
    shutil.copy(copy, older)
    opened = _opened(copy)
    opened.set_guidelines("Tag each point.", "lead")
    opened.close()
    status, out = _verify(capsys, url_for_path(older))  # an older copy is what a copy cut short looks like
    assert status == 1 and "entries were cut off this copy, or it is an older copy" in out
    opened = _opened(older)
    opened.set_host_allowed("d.example", True, "lead")  # written to: a project of its own from now on
    opened.close()
    assert _verify(capsys, url_for_path(older))[0] == 0


def test_a_new_project_made_where_an_old_one_was_deleted_is_green(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "review.assay"
    for host in ("a.example", "b.example"):
        project = _opened(path)
        project.set_host_allowed(host, True, "lead")
        project.close()
        assert _verify(capsys, url_for_path(path))[0] == 0
        path.unlink()


def test_a_log_cut_and_then_written_to_stays_reported(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    sample_project.set_guidelines("Tag each point.", "lead")
    newest, _ = _newest(sample_project)
    sample_project.close()
    _cut_newest(sample_project.url, "DELETE FROM guideline_versions")
    project = Project.open(sample_project.url)
    project.set_host_allowed("after.example", True, "lead")  # the cut entry's id taken by a new entry
    project.close()
    status, out = _verify(capsys, sample_project.url)
    assert status == 1
    assert f"entry {newest} (a guideline change" in out and "is not the entry this computer recorded" in out


def test_a_commit_that_appends_no_entry_touches_no_anchor(sample_project: Project) -> None:
    service = ReviewService(sample_project, "ana")
    service.open(ANSWER)
    anchors = list((keys.key_folder() / "anchors").glob("*/*.json"))
    before = {p: p.stat().st_mtime_ns for p in anchors}
    time.sleep(0.01)
    service.add_active_time(ANSWER, 5)  # saved, not audited
    assert {p: p.stat().st_mtime_ns for p in anchors} == before


# ---------------------------------------------------------------- restore


def test_restore_keeps_audit_verify_green(tmp_path: Path, monkeypatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(backups.BACKUP_DIR_ENV, str(tmp_path / "backups"))
    path = tmp_path / "review.assay"
    project = _opened(path)
    project.set_host_allowed("a.example", True, "lead")
    project.close()
    made = backups.make_backup(path)
    project = _opened(path)
    project.set_guidelines("Tag each point.", "lead")  # after the backup: the restore takes it back
    project.close()
    assert _verify(capsys, url_for_path(path))[0] == 0

    aside = backups.restore(path, made.path)

    status, out = _verify(capsys, url_for_path(path))
    assert status == 0, out
    restored = _opened(path)
    newest, action = _newest(restored)
    with restored.sessions() as session:
        payload = session.execute(text("SELECT payload FROM audit_log WHERE id = :n"), {"n": newest}).scalar_one()
    restored.close()
    assert action == "project.restored"
    assert json.loads(payload) if isinstance(payload, str) else payload  # what it took back is recorded
    assert aside is not None and _verify(capsys, url_for_path(aside))[0] == 0  # the file replaced, as it was


def test_every_entry_deleted_in_place_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "review.assay"
    project = _opened(path)
    project.set_host_allowed("a.example", True, "lead")
    newest, _ = _newest(project)
    project.close()
    for _ in range(newest):
        _cut_newest(url_for_path(path))
    status, out = _verify(capsys, url_for_path(path))
    assert status == 1
    assert f"the log is empty, but this computer recorded entry {newest} (" in out
