"""Matters on a SQLite project: made, staffed and walled through `assay matters` (audited), imported
into, scoping every figure, export and report that takes `--matter`, and exported as an encrypted
project that holds no row of another matter. The walls of a database server: test_matters_postgres.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from unittest.mock import patch

import pytest
from sqlalchemy import ForeignKey, select, text

from app.cli import main
from app.matters import scoped
from app.project import SAMPLE_DATASET, Project
from app.workspace import Workspace
from storage.audit import audit_entries, audit_hash
from storage.db import url_for_path
from storage.matters import (
    MATTER_PARENTS,
    MATTER_TABLES,
    NO_MATTER_DATA,
    WALLED_TABLES,
    client_key,
    exported_entry_problems,
)
from storage.schema import Base, DocumentRow

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = {"A": "DoiT-ICN-NonDisclosure-Agreement.txt", "B": "EFCAConfidentialityAgreement.txt"}
PASSPHRASE = "correct horse battery staple"


def write_dataset(folder: Path, document: str) -> None:
    """The sample's answers about one contract, as a dataset folder."""
    (folder / "documents").mkdir(parents=True)
    shutil.copy(SAMPLE_DATASET / "documents" / document, folder / "documents" / document)
    lines = [line for line in (SAMPLE_DATASET / "qa.jsonl").read_text().splitlines() if document in line]
    (folder / "qa.jsonl").write_text("\n".join(lines) + "\n")


def answer_ids(folder: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (folder / "qa.jsonl").read_text().splitlines()]


def write_labels(path: Path, answer_ids: list[str], rater: str, kind: str) -> Path:
    """A reviewer's (or judge's) tags on these answers: each answer's first point incorrect."""
    with path.open("w") as out:
        for answer_id in answer_ids:
            spans = [{"start": 0, "end": 3, "label": "contradicted"}]
            out.write(json.dumps({"answer_id": answer_id, "rater": rater, "kind": kind, "spans": spans}) + "\n")
    return path


class Firm:
    """A project with two clients' matters, A (Acme) and B (Birch), each with its contract, answers, a
    judge's tags and a reviewer's review."""

    def __init__(self, root: Path, *, written: bool = True) -> None:
        self.root = root
        self.path = root / "firm.assay"
        if written:
            for key, document in DOCUMENTS.items():
                write_dataset(root / f"data{key}", document)
        self.answers = {key: answer_ids(root / f"data{key}") for key in DOCUMENTS}

    def run(self, *argv: str) -> int:
        return main(["--project", str(self.path), *argv])

    def json(self, capsys: pytest.CaptureFixture[str], *argv: str) -> object:
        capsys.readouterr()
        assert self.run(*argv, "--json") == 0
        return json.loads(capsys.readouterr().out)

    def state(self) -> dict[str, list[tuple[object, ...]]]:
        """Every row of every table: what a refused command must leave as it was."""
        with sqlite3.connect(self.path) as db:
            return {
                table: sorted(map(tuple, db.execute(f'SELECT * FROM "{table}"')), key=repr)
                for table in Base.metadata.tables
            }


@pytest.fixture(scope="module")
def _firm_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    firm = Firm(tmp_path_factory.mktemp("firm"))
    assert firm.run("init") == 0
    assert firm.run("matters", "--create", "A-1", "--client", "Acme", "--name", "Acme NDA review") == 0
    assert firm.run("matters", "--create", "B-1", "--client", "Birch", "--name", "Birch NDA review") == 0
    for key in "AB":
        assert firm.run("import", str(firm.root / f"data{key}"), "--matter", f"{key}-1") == 0
        ids = firm.answers[key]
        judge = write_labels(firm.root / f"judge{key}.jsonl", ids, "judge", "judge")
        assert firm.run("import-labels", str(judge)) == 0
        assert firm.run("import-labels", str(write_labels(firm.root / f"ana{key}.jsonl", ids[:3], "ana", "human"))) == 0
    assert firm.run("matters", "--add", "ana", "--to", "A-1", "--by", "lead") == 0
    assert firm.run("matters", "--add", "ben", "--to", "B-1", "--by", "lead") == 0
    return firm.root


@pytest.fixture
def firm(_firm_folder: Path, tmp_path: Path) -> Firm:
    """The firm's project and datasets, a copy of this test's own."""
    shutil.copytree(_firm_folder, tmp_path / "firm")
    return Firm(tmp_path / "firm", written=False)


def test_every_table_is_classified_and_every_table_of_matter_data_carries_its_matter() -> None:
    tables = Base.metadata.tables
    unclassified = set(tables) - set(WALLED_TABLES) - set(MATTER_TABLES) - set(NO_MATTER_DATA)
    assert not unclassified, f"say whether these hold matter data (storage/matters.py): {sorted(unclassified)}"

    def reaches_documents(name: str, seen: frozenset[str] = frozenset()) -> bool:
        keys: list[ForeignKey] = [fk for column in tables[name].c for fk in column.foreign_keys]
        parents = {fk.column.table.name for fk in keys} - seen - {name}
        return "documents" in parents or any(reaches_documents(p, seen | {name}) for p in parents)

    holding = {name for name in tables if name not in MATTER_TABLES and reaches_documents(name)}
    assert holding <= set(WALLED_TABLES), f"matter data not walled: {sorted(holding - set(WALLED_TABLES))}"
    for name in WALLED_TABLES:
        assert "matter_id" in tables[name].c, f"{name} holds matter data but has no matter_id"
    assert set(MATTER_PARENTS) | {"documents", "audit_log"} == set(WALLED_TABLES)


def test_every_row_carries_its_documents_matter(firm: Firm, capsys: pytest.CaptureFixture[str]) -> None:
    listed = firm.json(capsys, "matters")
    ids = {m["number"]: m["id"] for m in listed["matters"]}
    assert {m["number"]: m["members"] for m in listed["matters"]} == {"A-1": ["ana"], "B-1": ["ben"]}
    assert {m["number"]: m["reviews"] for m in listed["matters"]} == {"A-1": 3, "B-1": 3}
    with sqlite3.connect(firm.path) as db:
        for table in MATTER_PARENTS:
            unfiled = db.execute(f"SELECT count(*) FROM {table} WHERE matter_id IS NULL").fetchone()[0]
            assert unfiled == 0, f"{table}: {unfiled} rows without a matter"
        for key in "AB":
            answer_matters = {
                row[0]
                for row in db.execute(
                    f"SELECT DISTINCT labels.matter_id FROM labels JOIN data_points d ON d.id = labels.data_point_id "
                    f"WHERE d.answer_id IN ({','.join('?' * len(firm.answers[key]))})",
                    firm.answers[key],
                )
            }
            assert answer_matters == {ids[f"{key}-1"]}


def test_figures_exports_and_reports_of_one_matter_say_which(
    firm: Firm, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    counts = firm.json(capsys, "info", "--matter", "A-1")
    assert counts["matter"]["number"] == "A-1"
    assert counts["documents"] == 1 and counts["answers"] == len(firm.answers["A"])
    capsys.readouterr()
    assert firm.run("scores", "--matter", "A-1", "--json") == 0
    captured = capsys.readouterr()
    assert "matter Acme A-1 (Acme NDA review) only" in captured.err
    assert {row["answer_id"] for row in json.loads(captured.out)} <= set(firm.answers["A"])
    triage = firm.json(capsys, "triage", "--matter", "B-1")
    assert triage["matter"]["client"] == "Birch"
    assert triage["judged"] == len(firm.answers["B"])
    out = tmp_path / "a.jsonl"
    assert firm.run("export", "--format", "jsonl", str(out), "--matter", "A-1") == 0
    exported = {json.loads(line).get("answer_id") for line in out.read_text().splitlines()}
    assert exported and exported <= set(firm.answers["A"])
    report = tmp_path / "a.html"
    assert firm.run("export", "--format", "report", str(report), "--matter", "A-1") == 0
    html = report.read_text()
    assert "Acme A-1" in html
    assert DOCUMENTS["B"].removesuffix(".txt") not in html


def test_a_matter_exported_holds_no_row_of_another(
    firm: Firm, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "acme.assay"
    monkeypatch.setenv("ASSAY_PASSPHRASE", PASSPHRASE)
    assert firm.run("matters", "--export", "A-1", str(out)) == 0
    assert not out.read_bytes().startswith(b"SQLite format 3")  # encrypted, header and all
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(out).execute("SELECT count(*) FROM documents").fetchone()
    exported = Project.open(url_for_path(out), PASSPHRASE)
    try:
        with exported.sessions() as session:
            matter_ids = {
                name: set(session.scalars(text(f"SELECT DISTINCT matter_id FROM {name}")))
                for name in WALLED_TABLES
                if name != "audit_log"
            }
            names = set(session.scalars(select(DocumentRow.name)))
            answers = set(session.scalars(text("SELECT id FROM answers")))
            matters = list(session.execute(text("SELECT client, number FROM matters")))
            members = set(session.scalars(text("SELECT person FROM matter_members")))
        entries = audit_entries_of(exported)
    finally:
        exported.close()
    a_id = next(iter(matter_ids["documents"]))
    assert all(found in (set(), {a_id}) for found in matter_ids.values()), matter_ids
    assert names == {DOCUMENTS["A"]}
    assert answers == set(firm.answers["A"])
    assert matters == [("Acme", "A-1")] and members == {"ana"}
    assert not any(entry.entity_id in firm.answers["B"] for entry in entries)
    assert {e.entity for e in entries} <= {"answer", "document", "matter"}
    assert "ben" not in json.dumps([e.payload for e in entries])


def audit_entries_of(project: Project) -> list:
    with project.sessions() as session:
        return audit_entries(session)


def test_a_walled_person_is_refused_and_the_attempt_audited(firm: Firm, capsys: pytest.CaptureFixture[str]) -> None:
    assert firm.run("matters", "--wall", "carol", "--client", "Acme", "--reason", "acts for Acme's rival") == 0
    before = firm.state()
    capsys.readouterr()
    assert firm.run("matters", "--add", "carol", "--to", "A-1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "carol: is walled from Acme" in err
    after = firm.state()
    assert after["matter_members"] == before["matter_members"]
    added = [row for row in after["audit_log"] if row not in before["audit_log"]]
    assert len(added) == 1 and "matter.member_refused" in added[0]
    # a wall on someone already on the client's matter is refused too
    assert firm.run("matters", "--wall", "ana", "--client", "Acme") == 2
    assert "ana: is on Acme A-1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["matters", "--add", "ana", "--to", "Z-9"], "matter 'Z-9': no such matter"),
        (["matters", "--add", "ana", "--to", "A-1"], "ana: is already on matter Acme A-1"),
        (["matters", "--delete", "A-1"], "it is not deleted; archive it instead (--archive A-1)"),
        (["matters", "--create", "A-1", "--client", "Acme", "--name", "again"], "Acme already has a matter numbered"),
        (["matters", "--create", "C-1", "--client", "Cole"], "needs --client CLIENT and --name NAME"),
        (["matters", "--remove", "ben", "--from", "A-1"], "ben: is not on matter Acme A-1"),
        (["matters", "--export", "Z-9", "{tmp}/z.assay"], "matter 'Z-9': no such matter"),
        (["scores", "--matter", "Z-9"], "matter 'Z-9': no such matter"),
        (["import", "{tmp}/dataB", "--matter", "A-1"], "is in another matter in this project, not in Acme A-1"),
        (["import", "{tmp}/dataB", "--matter", "Z-9"], "matter 'Z-9': no such matter"),
    ],
)
def test_bad_input_is_one_sentence_and_changes_nothing(
    firm: Firm, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    before = firm.state()
    capsys.readouterr()
    assert firm.run(*(word.replace("{tmp}", str(firm.root)) for word in argv)) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err
    assert firm.state() == before
    assert not (firm.root / "z.assay").exists()


def test_an_unreviewed_matter_is_deleted_and_a_reviewed_one_archived(
    firm: Firm, capsys: pytest.CaptureFixture[str]
) -> None:
    assert firm.run("matters", "--create", "C-1", "--client", "Cole", "--name", "never reviewed") == 0
    assert firm.run("matters", "--delete", "C-1") == 0
    assert firm.run("matters", "--archive", "A-1") == 0
    listed = firm.json(capsys, "matters")
    assert [(m["number"], m["archived"]) for m in listed["matters"]] == [("A-1", True), ("B-1", False)]
    assert firm.run("import", str(firm.root / "dataA"), "--matter", "A-1") == 2


def test_the_window_shows_one_matters_answers_when_it_is_picked(firm: Firm, qtbot) -> None:
    from ui.review.window import ReviewWindow

    project = Project.open(url_for_path(firm.path))
    window = ReviewWindow(Workspace(project), "ana")
    qtbot.addWidget(window)
    picker, queue = window.matter_picker, window.queue_pane
    assert picker.isVisibleTo(window)
    assert [picker.itemText(i).split(" · ")[0] for i in range(picker.count())] == [
        "All matters (2)",
        "Acme A-1 (Acme NDA review)",
        "Birch B-1 (Birch NDA review)",
    ]
    assert queue.model.rowCount() == len(firm.answers["A"]) + len(firm.answers["B"])
    picker.setCurrentIndex(2)
    shown = {queue.model.answer_at(row).id for row in range(queue.model.rowCount())}
    assert shown == set(firm.answers["B"])
    assert queue.documents.count() == 2  # all of the matter's documents, and its one contract
    assert window.session.answer_id in firm.answers["B"]
    window.close()
    project.close()


def test_an_unassigned_document_is_filed_under_a_matter_with_all_about_it(
    firm: Firm, capsys: pytest.CaptureFixture[str]
) -> None:
    older = Firm(firm.root, written=False)
    older.path = firm.root / "older.assay"
    assert older.run("import", str(firm.root / "dataA")) == 0  # before matters: unassigned
    assert older.run("import-labels", str(firm.root / "judgeA.jsonl")) == 0
    assert older.run("matters", "--create", "A-1", "--client", "Acme", "--name", "Acme NDA review") == 0
    assert older.run("matters", "--assign", "DoiT", "--to", "A-1") == 0
    assert older.run("matters", "--assign", "DoiT", "--to", "A-1") == 2
    assert "is already in matter Acme A-1" in capsys.readouterr().err
    with sqlite3.connect(older.path) as db:
        for table in ("documents", *MATTER_PARENTS):
            assert db.execute(f"SELECT count(*) FROM {table} WHERE matter_id IS NULL").fetchone()[0] == 0, table
        assert db.execute("SELECT count(*) FROM labels").fetchone()[0] > 0
    counts = older.json(capsys, "info", "--matter", "A-1")
    assert counts["answers"] == len(firm.answers["A"]) and counts["labels"] > 0


# ---------------------------------------------------------------- issue 57: walls by any spelling, exports that verify


@pytest.mark.parametrize("spelling", ["ACME", "Acme Inc.", "\N{GREEK CAPITAL LETTER ALPHA}cme", "Acme, L.L.C."])
def test_a_wall_holds_whatever_the_spelling_of_the_client(
    firm: Firm, capsys: pytest.CaptureFixture[str], spelling: str
) -> None:
    assert firm.run("matters", "--wall", "carol", "--client", spelling, "--reason", "acts for Acme's rival") == 0
    before = firm.state()
    capsys.readouterr()
    assert firm.run("matters", "--add", "carol", "--to", "A-1") == 2
    err = capsys.readouterr().err
    assert f"carol: is walled from {spelling}" in err and err.count("\n") == 1, err
    assert firm.state()["matter_members"] == before["matter_members"]
    assert firm.run("matters", "--wall", "carol", "--client", "acme") == 2  # the same wall again
    assert "carol: is already walled from" in capsys.readouterr().err
    assert firm.run("matters", "--wall", "ana", "--client", spelling) == 2  # she is on Acme's matter
    assert "ana: is on Acme A-1" in capsys.readouterr().err
    assert firm.run("matters", "--unwall", "carol", "--client", "Acme") == 0
    assert firm.run("matters", "--add", "carol", "--to", "A-1") == 0


def test_client_names_fold_to_one_company_and_no_further() -> None:
    same = ["Acme", "ACME", "Acme Inc.", "Acme, Inc", "ACME S.A.", "Acme GmbH", "The Acme Company", "Acmé Corp"]
    same += ["\uff21\uff43\uff4d\uff45", "\u0410\u0441me", "\u0391cme Ltd"]  # full-width; Cyrillic А, с; Greek Α
    assert {client_key(name) for name in same} == {"acme"}
    assert len({client_key(name) for name in ("Acme", "Acne", "Acme Holdings", "Birch", "Inc")}) == 5


def _sign(firm: Firm, reviewer: str, answer_id: str) -> None:
    assert firm.run("signoff", answer_id, "--reviewer", reviewer) == 0


def test_a_matter_exported_passes_audit_verify_with_its_sign_offs(
    firm: Firm, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ana reviews B's answers too (in the firm's log, entries of both matters interleave)
    assert firm.run("import-labels", str(firm.root / "anaB.jsonl")) == 0
    _sign(firm, "ana", firm.answers["A"][0])
    _sign(firm, "ana", firm.answers["B"][0])
    _sign(firm, "ana", firm.answers["A"][1])
    monkeypatch.setenv("ASSAY_PASSPHRASE", PASSPHRASE)
    out = tmp_path / "acme.assay"
    assert firm.run("matters", "--export", "A-1", str(out)) == 0
    capsys.readouterr()
    assert main(["--project", str(out), "audit", "verify", "--json"]) == 0, capsys.readouterr()
    verified = json.loads(capsys.readouterr().out)
    assert verified["ok"] and {s["answer_id"] for s in verified["signoffs"]} == set(firm.answers["A"][:2])
    assert all(s["matches"] for s in verified["signoffs"])
    exported = Project.open(url_for_path(out), PASSPHRASE)
    try:
        entries = audit_entries_of(exported)
        with exported.sessions() as session:
            assert exported_entry_problems(session) == []
    finally:
        exported.close()
    assert entries[0].action == "matter.exported" and entries[0].prev_hash == "0" * 64
    assert not any(e.entity_id in firm.answers["B"] for e in entries)
    # an entry carried, then edited in the copy, no longer is the firm's
    with sqlite3.connect(firm.path) as db:
        firm_hashes = {row[0] for row in db.execute("SELECT hash FROM audit_log")}
    assert {e.hash for e in entries}.isdisjoint(firm_hashes)  # a chain of its own, never taken for the firm's

    # a carried entry rewritten in the copy, its chain rebuilt so every link holds: no longer the firm's
    exported = Project.open(url_for_path(out), PASSPHRASE)
    try:
        with exported.sessions.begin() as session:
            trigger = session.scalar(text("SELECT sql FROM sqlite_master WHERE name = 'audit_log_no_update'"))
            session.execute(text("DROP TRIGGER audit_log_no_update"))
            rows = session.execute(text("SELECT id, at, actor, action, entity, entity_id, payload FROM audit_log"))
            previous = "0" * 64
            for number, (entry_id, at, actor, action, entity, entity_id, payload) in enumerate(rows.all()):
                content = json.loads(payload)
                if number == 1:
                    content["forged"] = True
                at = datetime.fromisoformat(str(at))
                digest = audit_hash(previous, at, actor, action, entity, entity_id, content)
                session.execute(
                    text("UPDATE audit_log SET payload = :p, prev_hash = :prev, hash = :h WHERE id = :i"),
                    {"p": json.dumps(content), "prev": previous, "h": digest, "i": entry_id},
                )
                previous = digest
            session.execute(text(trigger))
    finally:
        exported.close()
    capsys.readouterr()
    assert main(["--project", str(out), "audit", "verify"]) == 1
    assert "is not entry" in capsys.readouterr().out


@pytest.mark.skipif(os.name != "posix", reason="kills itself with SIGKILL")
def test_a_killed_command_on_one_matter_leaves_no_readable_copy(firm: Firm, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    script = (
        "import os, signal, sys\n"
        "from app.matters import scoped\n"
        "from app.project import Project\n"
        "from storage.db import url_for_path\n"
        f"project = Project.open(url_for_path({str(firm.path)!r}))\n"
        "with scoped(project, 'A-1') as (view, matter):\n"
        "    view.counts()\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(scratch)}, cwd=ROOT, check=False
    )
    assert done.returncode == -signal.SIGKILL
    left = [path for path in scratch.rglob("*") if path.is_file()]
    assert left, "the copy the killed process worked on"
    secret = (SAMPLE_DATASET / "documents" / DOCUMENTS["A"]).read_bytes()[200:260]
    for path in left:
        data = path.read_bytes()
        assert not data.startswith(b"SQLite format 3") and secret not in data, path
    project = Project.open(url_for_path(firm.path))
    try:
        with patch.object(tempfile, "tempdir", str(scratch)), scoped(project, "B-1"):
            assert [p.name.split("-")[2] for p in scratch.iterdir()] == [str(os.getpid())]  # only its own
        assert not list(scratch.iterdir())  # the killed process's copy and this one's are gone
    finally:
        project.close()


@pytest.mark.skipif(os.name != "posix", reason="kills itself with SIGKILL")
def test_a_killed_export_leaves_nothing_at_its_name(
    firm: Firm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "acme.assay"
    out.parent.mkdir()
    script = (
        "import os, signal\n"
        "import storage.matters as store\n"
        "from app import matters\n"
        "from app.project import Project\n"
        "from pathlib import Path\n"
        "from storage.db import url_for_path\n"
        "copy = store.copy_matter\n"
        "def killed(*args, **kwargs):\n"
        "    copy(*args, **kwargs)\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
        "store.copy_matter = killed\n"
        f"project = Project.open(url_for_path({str(firm.path)!r}))\n"
        f"matters.export_matter(project, 'A-1', Path({str(out)!r}), {PASSPHRASE!r}, 'lead')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=False)
    assert done.returncode == -signal.SIGKILL
    assert not out.exists()
    left = list(out.parent.iterdir())
    assert left and all(not p.read_bytes().startswith(b"SQLite format 3") for p in left)
    monkeypatch.setenv("ASSAY_PASSPHRASE", PASSPHRASE)
    assert firm.run("matters", "--export", "A-1", str(out)) == 0
    assert [p.name for p in out.parent.iterdir()] == [out.name]  # the killed export's partial file is gone


def test_a_long_export_name_is_one_sentence(
    firm: Firm, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_PASSPHRASE", PASSPHRASE)
    capsys.readouterr()
    assert firm.run("matters", "--export", "A-1", str(firm.root / ("a" * 300 + ".assay"))) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1 and "its name is too long" in err, err


def test_a_matter_exported_carries_only_its_own_part_of_the_settings(
    firm: Firm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert firm.run("assign", "--reviewers", "ana,ben", "--per-answer", "1") == 0  # every answer, A's and B's
    with sqlite3.connect(firm.path) as db:
        db.execute("INSERT INTO settings (key, value) VALUES ('model_check.run', ?)", (json.dumps(firm.answers["B"]),))
    monkeypatch.setenv("ASSAY_PASSPHRASE", PASSPHRASE)
    out = tmp_path / "acme.assay"
    assert firm.run("matters", "--export", "A-1", str(out)) == 0
    exported = Project.open(url_for_path(out), PASSPHRASE)
    try:
        with exported.sessions() as session:
            settings = dict(session.execute(text("SELECT key, value FROM settings")).all())
    finally:
        exported.close()
    assert set(json.loads(settings["assignments"])) == set(firm.answers["A"])
    assert not any(answer in value for value in settings.values() for answer in firm.answers["B"])
