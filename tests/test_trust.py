"""Trust: the audit chain catches edits, nothing opens a socket offline, keys are never written,
bad files are refused whole, bundles merge once and refuse tampering."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from app.cli import main
from app.errors import InvalidInput
from app.export.formats import export
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from app.review.service import ReviewService
from app.review.team import assign, export_bundle, import_bundle
from models.vocabulary import Tag
from storage.db import url_for_path

ANSWER = "contractnli-027"


def _review(project: Project, reviewer: str = "ana") -> None:
    service = ReviewService(project, reviewer)
    for point in service.open(ANSWER).points:
        service.set_tag(ANSWER, point.point.id, Tag.CORRECT)
    service.submit(ANSWER)


@pytest.mark.every_store
def test_audit_verify_passes_then_catches_an_edited_entry(sample_project: Project, capsys) -> None:
    _review(sample_project)
    url = sample_project.url
    assert main(["--db", url, "audit", "verify"]) == 0
    assert "the chain is intact" in capsys.readouterr().out
    if url.startswith("sqlite:///"):
        sample_project.close()
        with sqlite3.connect(url.removeprefix("sqlite:///")) as db:  # a person with sqlite3 and bad intentions
            db.execute("DROP TRIGGER audit_log_no_update")
            db.execute("UPDATE audit_log SET actor = 'mallory' WHERE id = 5")
    else:
        with sample_project.sessions.begin() as session:  # a database superuser with bad intentions
            session.execute(text("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only"))
            session.execute(text("UPDATE audit_log SET actor = 'mallory' WHERE id = 5"))
    assert main(["--db", url, "audit", "verify", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["ok"] and report["problems"][0]["entry_id"] == 5


def test_offline_run_opens_no_network_socket(monkeypatch, tmp_path: Path) -> None:
    """Import, judge (embedded model), review and export with every socket but AF_UNIX refused."""
    real = socket.socket

    def guarded(family=socket.AF_INET, *args, **kwargs):
        if family != socket.AF_UNIX:
            raise AssertionError(f"Assay opened a network socket (family {family})")
        return real(family, *args, **kwargs)

    monkeypatch.setattr(socket, "socket", guarded)
    project_file = tmp_path / "offline.assay"
    assert main(["--project", str(project_file), "import", str(SAMPLE_DATASET)]) == 0
    assert (
        main(["--project", str(project_file), "judge", "--answers", ANSWER, "--context", "4096", "--no-missing"]) == 0
    )
    project = Project.open(url_for_path(project_file))
    _review(project)
    for fmt in ("csv", "xlsx", "jsonl", "report"):
        export(project, fmt, tmp_path / f"out.{fmt}")


def test_an_api_key_is_never_written_anywhere(monkeypatch, tmp_path: Path) -> None:
    from tests.judge_helpers import chat_reply, scripted_http_server

    key = "sk-planted-0123456789abcdef"
    monkeypatch.setenv("ASSAY_API_KEY", key)
    project_file = tmp_path / "keys.assay"
    main(["--project", str(project_file), "import", str(SAMPLE_DATASET)])
    replies = [(200, chat_reply('{"tag": "correct"}'))] * 40
    with scripted_http_server(replies) as (url, received):
        main(
            [
                "--project",
                str(project_file),
                "judge",
                "--backend",
                "openai",
                "--base-url",
                url,
                "--model",
                "m",
                "--answers",
                ANSWER,
                "--allow-network",
                "--no-missing",
            ]
        )
    assert received and received[0]["headers"]["Authorization"] == f"Bearer {key}"  # it was used
    assert Project.open(url_for_path(project_file)).counts()["labels"] > 0
    project = Project.open(url_for_path(project_file))
    for fmt in ("csv", "xlsx", "jsonl", "report"):
        export(project, fmt, tmp_path / f"out.{fmt}")
    main(["--project", str(project_file), "audit", "export", str(tmp_path / "audit.jsonl")])
    project.close()
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written and not [p for p in written if key.encode() in p.read_bytes()]


@pytest.mark.every_store
def test_bundle_merges_once_and_refuses_a_changed_byte(
    sample_project: Project, tmp_path: Path, new_project_url
) -> None:
    _review(sample_project)
    bundle = tmp_path / "ana.bundle"
    assert export_bundle(sample_project, "ana", bundle) == 1
    lead = Project.open(new_project_url("lead"))
    import_dataset(lead.sessions, SAMPLE_DATASET)
    first = import_bundle(lead, bundle)
    labels = lead.counts()["labels"]
    again = import_bundle(lead, bundle)
    assert not first.already_imported and again.already_imported and lead.counts()["labels"] == labels > 0
    assert [p.point.tag for p in ReviewService(lead, "ana").state(ANSWER).points] == [
        p.point.tag for p in ReviewService(sample_project, "ana").state(ANSWER).points
    ]
    tampered = tmp_path / "tampered.bundle"
    tampered.write_bytes(bundle.read_bytes().replace(b'"correct"', b'"incorrect"', 1))
    with pytest.raises(InvalidInput, match="changed after it was written"):
        import_bundle(lead, tampered)
    lead.close()


def test_assignments_are_even(sample_project: Project) -> None:
    plan = assign(sample_project, ["ana", "ben", "cleo"], 2)
    assert all(len(set(names)) == 2 for names in plan.values())
    from collections import Counter

    load = Counter(r for names in plan.values() for r in names)
    assert max(load.values()) - min(load.values()) <= 1 and sum(load.values()) == 2 * 153


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400))
def test_random_bytes_as_qa_jsonl_are_refused_whole_or_imported(tmp_path_factory, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "documents").mkdir()
    (folder / "documents" / "nda.txt").write_text("1. The Vendor keeps secrets.\n")
    (folder / "qa.jsonl").write_bytes(data)
    project = Project.open(url_for_path(folder / "p.assay"))
    try:
        import_dataset(project.sessions, folder)
    except InvalidInput as exc:
        assert exc.place and exc.problem  # a place and a reason, never a traceback
        assert project.counts()["answers"] == 0
    project.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("\ufeffDoc\n".encode("utf-16"), "not UTF-8"),
        ("Clause 1 – café".encode("cp1252"), "not UTF-8"),
        (b"", "no text found"),
    ],
)
def test_bad_documents_are_named(tmp_path: Path, content: bytes, message: str) -> None:
    folder = tmp_path / "set"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "bad.txt").write_bytes(content)
    (folder / "qa.jsonl").write_text(json.dumps({"id": "1", "document": "bad.txt", "question": "Q", "answer": "A"}))
    with pytest.raises(InvalidInput, match=rf"bad\.txt: {message}"):
        import_dataset(Project.open(url_for_path(tmp_path / "p.assay")).sessions, folder)


def _dataset(folder: Path, documents: dict[str, str], rows: list[dict[str, str]]) -> Path:
    (folder / "documents").mkdir(parents=True)
    for name, body in documents.items():
        (folder / "documents" / name).write_text(body, encoding="utf-8")
    (folder / "qa.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return folder


def test_a_10_mb_contract_and_a_4_mb_single_line_import_whole(tmp_path: Path) -> None:
    policy = [p for p in (SAMPLE_DATASET / "documents" / "Keep.txt").read_text().split("\n\n") if p.strip()]
    clauses, size = [], 0
    while size < 10_000_000:
        clause = f"{len(clauses) + 1}. {policy[len(clauses) % len(policy)]}"
        clauses.append(clause)
        size += len(clause) + 2
    clauses.append("Any dispute goes to arbitration in Zanzibar.")
    one_line = "   ".join(policy).replace("\n", " ") * 400  # MAUD-style: a whole agreement on one line
    folder = _dataset(
        tmp_path / "big",
        {"big.txt": "\n\n".join(clauses), "one-line.txt": one_line},
        [
            {"id": "b1", "document": "big.txt", "question": "Where is arbitration?", "answer": "Zanzibar."},
            {"id": "b2", "document": "one-line.txt", "question": "Is data sold?", "answer": "No."},
        ],
    )
    project = Project.open(url_for_path(tmp_path / "p.assay"))
    import_dataset(project.sessions, folder)
    assert (folder / "documents" / "big.txt").stat().st_size > 10_000_000
    assert project.search("big.txt", "arbitration Zanzibar")[0].passage.text == clauses[-1]
    big, line = (project.answer(a).document_id for a in ("b1", "b2"))
    assert len(project.passages(big)) >= len(clauses)
    assert len(project.passages(line)) > 400  # split into readable passages, not one 4 MB block
    project.close()


def test_an_enormous_line_is_refused_by_its_line_and_nothing_is_imported(tmp_path: Path) -> None:
    rows = [
        {"id": "ok", "document": "nda.txt", "question": "Q?", "answer": "Fine."},
        {"id": "huge", "document": "nda.txt", "question": "Q?", "answer": "Delaware law governs. " * 1_500_000},
    ]
    folder = _dataset(tmp_path / "set", {"nda.txt": "1. The Vendor keeps secrets.\n"}, rows)
    assert (folder / "qa.jsonl").stat().st_size > 30_000_000
    project = Project.open(url_for_path(tmp_path / "p.assay"))
    with pytest.raises(InvalidInput, match=r"qa\.jsonl line 2: field 'answer' has 33,000,000 characters"):
        import_dataset(project.sessions, folder)
    assert project.counts()["answers"] == project.counts()["documents"] == 0
    project.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300), st.booleans())
def test_random_csv_is_refused_with_its_line_or_imported(tmp_path_factory, body: str, header: bool) -> None:
    folder = tmp_path_factory.mktemp("fuzzcsv")
    (folder / "documents").mkdir()
    (folder / "documents" / "nda.txt").write_text("1. The Vendor keeps secrets.\n")
    head = "id,document,question,answer\n" if header else ""
    (folder / "answers.csv").write_text(head + body, encoding="utf-8")
    project = Project.open(url_for_path(folder / "p.assay"))
    try:
        import_dataset(project.sessions, folder / "answers.csv")
    except InvalidInput as exc:
        assert "answers.csv" in exc.place and exc.problem
        assert project.counts()["answers"] == 0
    project.close()


def test_an_encrypted_project_is_unreadable_without_its_passphrase(monkeypatch, tmp_path: Path, capsys) -> None:
    path = tmp_path / "secret.assay"
    monkeypatch.setenv("ASSAY_PASSPHRASE", "correct horse 'battery'")
    assert main(["--project", str(path), "--encrypt", "import", str(SAMPLE_DATASET)]) == 0
    assert main(["--project", str(path), "info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["answers"] == 153

    written = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"Governing Law" not in written and b"SQLite format 3" not in written
    with pytest.raises(sqlite3.DatabaseError, match="file is not a database"):
        sqlite3.connect(path).execute("SELECT count(*) FROM answers").fetchall()

    monkeypatch.setenv("ASSAY_PASSPHRASE", "correct horse battery")
    assert main(["--project", str(path), "info"]) == 2
    assert f"wrong passphrase for {path}" in capsys.readouterr().err
    monkeypatch.delenv("ASSAY_PASSPHRASE")
    assert main(["--project", str(path), "info"]) == 2  # no terminal to ask in, under pytest
    assert "is encrypted: set ASSAY_PASSPHRASE" in capsys.readouterr().err


def test_the_judge_keeps_what_it_read_on_disk_only_for_a_project_without_a_passphrase(
    monkeypatch, tmp_path: Path
) -> None:
    """A local judge keeps each contract's KV state in the user's cache folder for the next run; that
    state encodes the contract's text, so an encrypted project's judge never writes one."""
    kept = tmp_path / "judge-state"
    monkeypatch.setenv("ASSAY_JUDGE_STATE_DIR", str(kept))
    monkeypatch.setenv("ASSAY_PASSPHRASE", "correct horse battery staple")
    for name, encrypt in (("secret.assay", ["--encrypt"]), ("plain.assay", [])):
        path = tmp_path / name
        if not encrypt:
            monkeypatch.delenv("ASSAY_PASSPHRASE")
        assert main(["--project", str(path), *encrypt, "import", str(SAMPLE_DATASET)]) == 0
        project = Project.open(url_for_path(path), passphrase="correct horse battery staple" if encrypt else None)
        answer = next(a.id for a in project.answers() if a.document.startswith("DoiT"))
        project.close()
        judge = ["--project", str(path), "judge", "--answers", answer, "--context", "4096", "--no-missing"]
        assert main(judge) == 0
        assert bool(list(kept.glob("*.kvstate"))) is not bool(encrypt), name


def test_redacted_exports_hide_emails_phones_and_listed_names(sample_project: Project, tmp_path: Path) -> None:
    import pandas as pd

    from app.ingest.labels import import_labels

    said = (
        "Notices go to Jane  Doe, jane.doe@fulucai.com, Telephone: 403-689-3901, for fees of $1,000,000 in 2019-2020."
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"answer_id": ANSWER, "rater": "ana", "data_points": [{"text": said, "tag": "missing"}]}) + "\n"
    )
    import_labels(sample_project, labels)
    out = tmp_path / "out"
    for fmt in ("csv", "jsonl", "xlsx", "report"):
        redacted = ["--redact", "--redact-name", "jane doe"]
        assert main(["--db", sample_project.url, "export", "--format", fmt, *redacted, str(out / f"export.{fmt}")]) == 0
    texts = [(out / f"export.{fmt}").read_text() for fmt in ("csv", "jsonl", "report")]
    texts.append(pd.read_excel(out / "export.xlsx", sheet_name="data_points").to_csv())
    for written in texts[:2] + texts[3:]:
        assert "Notices go to [NAME], [EMAIL], Telephone: [PHONE], for fees of $1,000,000 in 2019-2020." in written
    for written in texts:
        assert not any(secret in written for secret in ("Jane", "jane.doe", "403-689-3901"))

    main(["--db", sample_project.url, "export", "--format", "csv", str(out / "plain.csv")])
    assert "jane.doe@fulucai.com" in (out / "plain.csv").read_text()  # redaction is asked for, not imposed


def test_a_project_remembers_the_hosts_it_allows_and_audits_each_change(sample_project: Project, capsys) -> None:
    from tests.judge_helpers import chat_reply, scripted_http_server

    url = sample_project.url
    with scripted_http_server([(200, chat_reply('{"tag": "correct"}'))] * 60) as (server, received):
        judge = ["--db", url, "judge", "--backend", "openai", "--base-url", server, "--model", "m", "--no-missing"]
        assert main([*judge, "--answers", ANSWER]) == 2
        assert "would send document and answer text to 127.0.0.1" in capsys.readouterr().err and not received
        assert main(["--db", url, "network", "allow", "127.0.0.1"]) == 0
        assert main([*judge, "--answers", ANSWER]) == 0 and received  # no flag needed any more
        assert main(["--db", url, "network", "forbid", "127.0.0.1"]) == 0
        sent = len(received)
        assert main([*judge, "--answers", "contractnli-028"]) == 2 and len(received) == sent
    assert "no host allowed" in capsys.readouterr().out
    with sample_project.sessions() as session:
        actions = [row.action for row in session.execute(text("SELECT action FROM audit_log"))]
    assert [a for a in actions if a.startswith("network.")] == ["network.allowed", "network.forbidden"]
