"""Issue 62 §4, §6, §7 and §11: the file a project path names is the file opened; `audit verify` sees
a damaged file and nothing signs into one; a sign-off covers the document's passages; a sign-off
record edited into broken JSON is reported; a signed PDF report is checked by `assay report --check`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from sqlalchemy import text

from app.cli import main
from app.project import Project
from storage.db import url_for_path

from .forgery_helpers import ANSWER, submitted
from .forgery_helpers import computer as computer  # autouse: a key folder of each test's own


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out + err


# ---------------------------------------------------------------- §4 the path as given


def test_a_percent_sign_in_a_project_path_names_that_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "--project", str(tmp_path / "T.assay"), "init")[0] == 0
    before = sorted(p.name for p in tmp_path.iterdir())

    status, out = _run(capsys, "--project", str(tmp_path / "p%2e.assay"), "audit", "verify")
    assert status == 2 and "p%2e.assay: no such project" in out
    status, out = _run(capsys, "--project", str(tmp_path / "T%2eassay"), "signoff", ANSWER, "--reviewer", "ana")
    assert status == 2 and "T%2eassay: no such project" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no p..assay, nothing signed into T.assay

    assert _run(capsys, "--project", str(tmp_path / "p%2e.assay"), "init")[0] == 0
    assert (tmp_path / "p%2e.assay").is_file() and not (tmp_path / "p..assay").exists()
    assert _run(capsys, "--project", str(tmp_path / "p%2e.assay"), "audit", "verify")[0] == 0


def test_a_question_mark_in_a_project_path_is_part_of_its_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    named = tmp_path / "a?mode=ro.assay"
    assert _run(capsys, "--project", str(named), "init")[0] == 0
    assert named.is_file() and not (tmp_path / "a").exists()
    project = Project.open(url_for_path(named))
    project.set_matter_name("Acme", "lead")  # written, not read-only
    project.close()
    status, out = _run(capsys, "--project", str(named), "title")
    assert status == 0 and out.strip() == "Acme"
    assert _run(capsys, "--project", str(named), "audit", "verify")[0] == 0  # anchored at the same place


def test_a_project_path_through_a_symbolic_link_loop_is_one_sentence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for argv in (["info"], ["init"], ["restore", "--list"]):
        for where in (loop, loop / "p.assay"):
            status, out = _run(capsys, "--project", str(where), *argv)
            assert (
                status == 2
                and out.strip() == f"assay: {where} cannot be opened: a symbolic link in its path points to itself"
            ), out


def test_a_file_to_write_through_a_symbolic_link_loop_is_one_sentence(
    sample_project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    for argv in (["export", "--format", "csv"], ["export", "--format", "xlsx"], ["audit", "export"]):
        for where in (loop, loop / "out.csv"):
            status, out = _run(capsys, "--db", sample_project.url, *argv, str(where))
            assert (
                status == 2
                and out.strip() == f"assay: {where}: cannot write it: a symbolic link in its path points to itself"
            ), out
    status, out = _run(capsys, "--db", sample_project.url, "models", "--add-folder", str(loop))
    assert status == 2 and "not a folder: a symbolic link in its path points to itself" in out


# ---------------------------------------------------------------- §6 a damaged file


def test_audit_verify_sees_a_damaged_file_and_nothing_signs_into_it(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    submitted(sample_project, ANSWER)
    url = sample_project.url
    sample_project.close()
    path = Path(url.removeprefix("sqlite:///"))
    data = path.read_bytes()
    page = int.from_bytes(data[16:18], "big")
    first = len(data) // page * 3 // 10  # 16 pages of the documents' passages, zeroed
    with path.open("r+b") as file:
        file.seek(first * page)
        file.write(bytes(16 * page))

    status, out = _run(capsys, "--db", url, "audit", "verify")
    assert status == 1, out
    assert "the project file is damaged: SQLite's integrity check found" in out
    assert "btreeInitPage() returns error code 11" in out

    status, out = _run(capsys, "--db", url, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 2, out
    assert "is damaged: SQLite's check of every page found" in out and "a sign-off is not written into it" in out
    project = Project.open(url)
    try:
        assert project.signoffs() == []
    finally:
        project.close()


# ---------------------------------------------------------------- §7 what a signature covers


def _signed(capsys: pytest.CaptureFixture[str], project: Project) -> None:
    submitted(project, ANSWER)
    status, out = _run(capsys, "--db", project.url, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 0, out
    status, out = _run(capsys, "--db", project.url, "audit", "verify")
    assert status == 0 and "it matches what is stored" in out and "signed before sign-offs covered" not in out


@pytest.mark.every_store
def test_editing_the_passages_of_a_signed_answers_document_is_reported(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    _signed(capsys, sample_project)
    with sample_project.sessions.begin() as session:
        changed = session.execute(
            text(
                "UPDATE passages SET text = replace(text, 'shall', 'may') WHERE document_id = (SELECT q.document_id "
                "FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.id = :a)"
            ),
            {"a": ANSWER},
        ).rowcount
    assert changed > 0
    status, out = _run(capsys, "--db", sample_project.url, "audit", "verify")
    assert status == 1, out
    assert "DOES NOT MATCH: the document's passages changed (the words reviewers read and cite)" in out


def test_a_sign_off_record_edited_into_broken_json_is_reported(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    _signed(capsys, sample_project)
    with sample_project.sessions.begin() as session:
        session.execute(text("UPDATE signoffs SET record = substr(record, 1, 40)"))
    status, out = _run(capsys, "--db", sample_project.url, "audit", "verify")
    assert status == 1, out
    assert "DOES NOT MATCH: its stored record is not readable JSON (edited by hand?)" in out


# ---------------------------------------------------------------- §7 the signed report, checked by a command


def test_report_check_says_a_genuine_report_is_as_signed_and_names_what_changed(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.pdf"
    status, out = _run(capsys, "--db", sample_project.url, "export", "--format", "pdf", str(report), "--sign",
                       "--reviewer", "ana")  # fmt: skip
    assert status == 0, out
    status, out = _run(capsys, "--db", sample_project.url, "report", "--check", str(report))
    assert status == 0, out
    assert f"{report}: as signed" in out and "signed by ana with their registered key" in out

    appended = tmp_path / "appended.pdf"
    shutil.copy(report, appended)
    with appended.open("ab") as file:
        file.write(b"\n% a comment after the end\n")
    status, out = _run(capsys, "--db", sample_project.url, "report", "--check", str(appended), "--json")
    found = json.loads(out)
    assert status == 1 and not found["valid"]
    assert any("bytes were added after ana's signature" in p for p in found["problems"])


def test_the_passages_digest_is_of_what_reviewers_read(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    _signed(capsys, sample_project)
    with sample_project.sessions() as session:
        record = session.execute(text("SELECT record FROM signoffs")).scalar_one()
        document_id = session.execute(
            text("SELECT q.document_id FROM answers a JOIN questions q ON q.id = a.question_id WHERE a.id = :a"),
            {"a": ANSWER},
        ).scalar_one()
        rows = session.execute(
            text("SELECT citation_id, text FROM passages WHERE document_id = :d ORDER BY ordinal, id"),
            {"d": document_id},
        ).all()
    record = json.loads(record) if isinstance(record, str) else record
    passages = json.dumps({"passages": [[c, t] for c, t in rows]}, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)  # fmt: skip
    assert record["document"]["passages_sha256"] == hashlib.sha256(passages.encode()).hexdigest()


def test_a_sign_off_made_before_passages_were_covered_says_so(
    sample_project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sign-off whose record was made by an Assay before issue 62 (no passages digest in it): it still
    matches, and verify says what it does not cover. The old record is made by the signing code of
    today with the digest left out, as the old code wrote it."""
    from storage import signoffs

    today = signoffs.live_content

    def as_before(session, answer_id, rater_id):  # type: ignore[no-untyped-def]
        content = today(session, answer_id, rater_id)
        del content["document"]["passages_sha256"]
        return content

    submitted(sample_project, ANSWER)
    with monkeypatch.context() as patched:
        patched.setattr(signoffs, "live_content", as_before)
        assert _run(capsys, "--db", sample_project.url, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    status, out = _run(capsys, "--db", sample_project.url, "audit", "verify")
    assert status == 0, out
    assert "matches (it was signed before sign-offs covered the document's passages: an edit to the words " in out
