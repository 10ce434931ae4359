"""Nothing a user types destroys a project or slips past a sign-off: no command writes its output over
the open project, its logs or its backups; every signed-off review refuses every writer; the consensus
is adjudication's alone; and broken files, full disks, closed pipes, unreadable model stores, crafted
GGUF headers, pipes named like files and endless devices each get one sentence, never a traceback
or a hang."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import event

from app.cli import main
from app.errors import AssayError, InvalidInput
from app.ingest.labels import import_labels
from app.project import Project
from app.review import adjudication
from app.review.service import ReviewService
from models.segmentation import segment_answer
from models.vocabulary import Tag
from storage.audit import audit_entries
from storage.db import sqlite_path

ANSWER = "contractnli-027"
GOPAGE = "GopageCorp_20140221_10-K_EX-10.1_8432966_EX-10.1_Content License Agreement.txt"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        status = main(list(argv))
    except SystemExit as exc:
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


def _state(project: Project) -> tuple[dict[str, int], int]:
    with project.sessions() as session:
        return project.counts(), len(list(audit_entries(session)))


def _write_labels(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _line(project: Project, answer_id: str, rater: str, tag: str, kind: str = "human") -> dict:
    answer = project.answer(answer_id)
    assert answer is not None
    points = [{"text": s.text, "tag": tag} for s in segment_answer(answer.text)]
    return {"answer_id": answer_id, "rater": rater, "kind": kind, "data_points": points}


def _signed(project: Project, answer_id: str = ANSWER, reviewer: str = "alice") -> ReviewService:
    service = ReviewService(project, reviewer)
    state = service.open(answer_id)
    for point in state.points:
        service.set_tag(answer_id, point.point.id, Tag.CORRECT)
    service.submit(answer_id)
    service.sign_off(answer_id)
    return service


# ---------------------------------------------------------------- 1. the project is never an output


@pytest.mark.parametrize("fmt", ["csv", "report", "jsonl"])
def test_export_over_the_open_project_is_refused_and_the_project_survives(
    fmt: str, sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    path = sqlite_path(sample_project.url)
    assert path is not None
    before = _state(sample_project)
    for target in (path, path.with_name(path.name + "-wal"), path.parent / "." / path.name):
        status, out, err = _run(capsys, "--project", str(path), "export", "--format", fmt, str(target))
        assert status == 2 and out == "" and "writing there would" in err, err
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    assert _state(sample_project) == before


def test_no_command_writes_over_the_project_or_its_backups(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_BACKUP_DIR", str(tmp_path / "backups"))
    path = sqlite_path(sample_project.url)
    assert path is not None
    project = ["--project", str(path)]
    assert _run(capsys, *project, "backup")[0] == 0
    backup = next((tmp_path / "backups").rglob("*.assay"))
    link = tmp_path / "link.assay"
    link.symlink_to(path)
    cases = [
        ["audit", "export", str(path)],
        ["bundle", "export", str(link), "--reviewer", "ana"],
        ["compare", "long-form", "gpt", "--export", str(path)],
        ["export", "--format", "csv", str(backup)],
        ["export", "--format", "xlsx", str(link)],
    ]
    for argv in cases:
        status, _, err = _run(capsys, *project, *argv)
        assert status == 2, (argv, err)
    # The window's export and bundle go through the same door.
    from app.export.formats import export
    from app.review.team import export_bundle

    with pytest.raises(InvalidInput, match="it is the open project"):
        export(sample_project, "jsonl", path)
    with pytest.raises(InvalidInput, match="backup folder"):
        export_bundle(sample_project, "ana", backup)
    assert path.read_bytes()[:16] == b"SQLite format 3\x00"
    assert backup.read_bytes()[:16] == b"SQLite format 3\x00"
    assert Project.open(sample_project.url).counts() == sample_project.counts()


# ---------------------------------------------------------------- 2–5. sign-offs and the consensus


def test_a_signed_review_refuses_imported_labels_and_bundles(sample_project: Project, tmp_path: Path) -> None:
    _signed(sample_project)
    before = _state(sample_project)
    labels = _write_labels(tmp_path / "labels.jsonl", [_line(sample_project, ANSWER, "alice", "incorrect")])
    with pytest.raises(InvalidInput, match=r"alice signed off answer contractnli-027"):
        import_labels(sample_project, labels)
    with pytest.raises(InvalidInput, match=r"signed off"):
        import_labels(
            sample_project,
            _write_labels(
                tmp_path / "plain.jsonl",
                [{k: v for k, v in _line(sample_project, ANSWER, "alice", "missing").items() if k != "rater"}],
            ),
            default_rater="alice",
        )
    assert _state(sample_project) == before

    # A bundle from alice's laptop that changes the review signed here is refused too.
    from app.review.team import export_bundle, import_bundle

    other = tmp_path / "other.assay"
    sample_project.close()  # its write-ahead log folded into the file before the copy
    shutil.copy(sqlite_path(sample_project.url), other)
    laptop = Project.open(f"sqlite:///{other}")
    try:
        service = ReviewService(laptop, "alice")
        service.reopen(ANSWER, "second look")
        first = service.open(ANSWER).points[0].point.id
        service.set_tag(ANSWER, first, Tag.INCORRECT)
        bundle = tmp_path / "alice.json"
        with laptop.sessions.begin() as session:  # the reopen stays on the laptop: the bundle carries none
            session.execute(__import__("sqlalchemy").text("UPDATE signoffs SET reopened_at = NULL"))
        export_bundle(laptop, "alice", bundle)
    finally:
        laptop.close()
    with pytest.raises(InvalidInput, match=r"reopen it first"):
        import_bundle(sample_project, bundle)
    assert _state(sample_project) == before


def test_the_consensus_is_written_only_by_adjudication(
    sample_project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = [a.id for a in sample_project.answers()[:2]]
    lines = [_line(sample_project, a, r, t) for a in answers for r, t in (("ana", "correct"), ("ben", "incorrect"))]
    import_labels(sample_project, _write_labels(tmp_path / "two.jsonl", lines))
    before = _state(sample_project)
    waiting = len(adjudication.waiting(sample_project))
    settle = _write_labels(
        tmp_path / "settle.jsonl", [_line(sample_project, a, "consensus", "correct") for a in answers]
    )
    for rater in (None, "consensus", " Consensus "):
        with pytest.raises(InvalidInput, match=r"written only by adjudication"):
            import_labels(sample_project, settle, default_rater=rater)
    assert len(adjudication.waiting(sample_project)) == waiting and _state(sample_project) == before

    # A reviewer in the dispute does not decide it, even when named an adjudicator.
    adjudication.set_adjudicators(sample_project, ["ana", "lead"], "lead")
    with pytest.raises(AssayError, match=r"ana reviewed answer .* party to its dispute"):
        adjudication.decide(sample_project, answers[0], 1, Tag.CORRECT, None, "ana")
    case = adjudication.case(sample_project, answers[0])
    for point in case.disputed:
        case = adjudication.decide(sample_project, answers[0], point.number, Tag.CORRECT, None, "lead")
    assert case.settled

    # Nobody signs off the consensus; a consensus signed before that rule is not changed by adjudication.
    status, _, err = _run(capsys, "--db", sample_project.url, "signoff", answers[0], "--reviewer", "consensus")
    assert status == 2 and "written only by adjudication" in err
    from storage.adjudication import consensus_id
    from storage.schema import SignOffRow, utcnow

    with sample_project.sessions.begin() as session:  # a sign-off of the consensus, as an older Assay let be
        consensus = consensus_id(session)
        assert consensus is not None
        record = {"reviewer": "consensus", "signed_at": utcnow().isoformat()}
        session.add(
            SignOffRow(answer_id=answers[0], rater_id=consensus, signed_at=utcnow(), digest="0" * 64, record=record)
        )
    with pytest.raises(AssayError, match=r"consensus of answer .* is signed off"):
        adjudication.decide(sample_project, answers[0], case.disputed[0].number, Tag.INCORRECT, None, "lead")


# ---------------------------------------------------------------- 9. full disks, missing folders, closed pipes


def test_full_disk_missing_folder_and_closed_pipe_are_one_sentence(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = ["--db", sample_project.url]
    if Path("/dev/full").exists():
        for fmt in ("csv", "report"):
            status, _, err = _run(capsys, *db, "export", "--format", fmt, "/dev/full")
            assert status == 2 and "not a regular file (a device or a pipe)" in err, err  # full disk: test_output_guard
    status, _, err = _run(capsys, *db, "bundle", "export", str(tmp_path / "nope" / "b.json"), "--reviewer", "x")
    assert status == 2
    from app.cli.output import writing

    with (
        pytest.raises(InvalidInput, match=r"the folder .* does not exist"),
        writing(tmp_path / "no-such-folder" / "regressions.csv"),
    ):
        raise AssertionError("not reached")
    # `| head -1`: the reader goes away after one line; no BrokenPipeError, no traceback.
    path = sqlite_path(sample_project.url)
    command = f"{sys.executable} -m app.cli --project '{path}' segment | head -1"
    done = subprocess.run(
        command, shell=True, capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[1]
    )
    assert done.stdout.count("\n") == 1 and "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_compare_export_without_regressions_writes_the_header(tmp_path: Path) -> None:
    from app.figures.comparison import export_regressions

    out = export_regressions({"a": "old", "b": "new", "regressions": []}, tmp_path / "none.csv")
    assert out.read_text().splitlines()[0].startswith("rank,question,document,answer (old),answer (new)")


# ---------------------------------------------------------------- 10. model stores


def _gguf(path: Path, payload: bytes, count: int = 1) -> Path:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, count) + payload)
    return path


def test_crafted_gguf_files_and_pipes_are_refused_quickly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.judging.model_discovery import find_models
    from app.judging.model_files import read_model_info

    monkeypatch.setenv("ASSAY_CONFIG_DIR", str(tmp_path / "config"))
    key = struct.pack("<Q", 4) + b"deep" + struct.pack("<I", 9)
    nested = b"".join(struct.pack("<IQ", 9, 1) for _ in range(5000)) + struct.pack("<IQ", 0, 0)
    folder = tmp_path / "models"
    folder.mkdir()
    deep = _gguf(folder / "deep.gguf", key + nested)
    with pytest.raises(InvalidInput, match=r"nested more than"):
        read_model_info(deep)
    _gguf(folder / "long.gguf", struct.pack("<Q", 2**62) + b"x")
    fifo = folder / "pipe.gguf"
    os.mkfifo(fifo)
    with pytest.raises(InvalidInput, match=r"not a regular file"):
        read_model_info(fifo)
    started = time.monotonic()
    found = {Path(m.path).name: m for m in find_models([str(folder)])}
    assert time.monotonic() - started < 10
    assert "regular file" in (found["pipe.gguf"].problem or "")
    assert "nested" in (found["deep.gguf"].problem or "") and found["long.gguf"].problem


def test_unreadable_and_broken_ollama_stores_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.judging import model_discovery
    from app.judging.model_discovery import find_models, resolve_model

    monkeypatch.setenv("ASSAY_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    root = tmp_path / "ollama"
    monkeypatch.setenv("OLLAMA_MODELS", str(root))
    library = root / "manifests" / "registry.ollama.ai" / "library"
    (library / "broken").mkdir(parents=True)
    (library / "broken" / "latest").write_text("{not json", encoding="utf-8")
    (library / "gone").mkdir()
    layer = {"mediaType": model_discovery.OLLAMA_MODEL_LAYER, "digest": "sha256:00"}
    (library / "gone" / "latest").write_text(json.dumps({"layers": [layer]}), encoding="utf-8")
    found = {m.name: m for m in find_models()}
    assert "damaged" in (found["broken:latest"].problem or "")
    assert "weights are missing" in (found["gone:latest"].problem or "")
    with pytest.raises(InvalidInput, match=r"'broken:latest' cannot be used: its manifest"):
        resolve_model("ollama:broken")

    # This test runs as root, which no permission stops: a store the user may not read is stood in
    # for by a listing that raises PermissionError, as the kernel's would (PermissionDeniedListing).
    real_listdir = os.listdir

    def permission_denied_listing(path: object) -> list[str]:
        if str(path).startswith(str(root)) or ".lmstudio" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)  # type: ignore[arg-type]

    (tmp_path / ".lmstudio" / "models").mkdir(parents=True)
    monkeypatch.setattr(model_discovery.os, "listdir", permission_denied_listing)
    problems = [m for m in find_models() if m.problem]
    assert {m.source for m in problems} >= {"Ollama", "LM Studio"}
    assert all("permission denied" in (m.problem or "") for m in problems)
    with pytest.raises(InvalidInput, match=r"permission denied"):
        resolve_model("ollama:anything")


# ---------------------------------------------------------------- 11. every read bounded


def test_an_endless_device_is_refused_at_once(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = ["--db", sample_project.url]
    started = time.monotonic()
    for argv in (
        ["guidelines", "--set", "/dev/zero"],
        ["import-labels", "/dev/zero"],
        ["bundle", "import", "/dev/zero"],
        ["export", "--format", "csv", str(tmp_path / "x.csv"), "--redact-names-file", "/dev/zero"],
    ):
        status, _, err = _run(capsys, *db, *argv)
        assert status == 2 and "not a regular file" in err, (argv, err)
    fifo = tmp_path / "labels.jsonl"
    os.mkfifo(fifo)
    status, _, err = _run(capsys, *db, "import-labels", str(fifo))
    assert status == 2 and "not a regular file" in err
    assert time.monotonic() - started < 5
    big = tmp_path / "guidelines.md"
    with big.open("wb") as handle:
        handle.truncate(6 * 1000**2)
    status, _, err = _run(capsys, *db, "guidelines", "--set", str(big))
    assert status == 2 and "read up to 5.0 MB" in err


# ---------------------------------------------------------------- 12–13. labels: checked first, no nonsense


def test_a_bad_last_line_is_reported_before_anything_is_written(sample_project: Project, tmp_path: Path) -> None:
    answers = [a.id for a in sample_project.answers()[:20]]
    lines = [_line(sample_project, a, "ana", "correct") for a in answers]
    lines.append({"answer_id": "nope", "rater": "ana", "data_points": [{"text": "x", "tag": "correct"}]})
    path = _write_labels(tmp_path / "labels.jsonl", lines)
    writes: list[str] = []
    engine = sample_project.sessions.kw["bind"]

    def record(_conn, _cursor, statement: str, *_args: object) -> None:
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE")):
            writes.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        with pytest.raises(InvalidInput, match=r"labels.jsonl line 21: no answer 'nope'"):
            import_labels(sample_project, path)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert writes == []
    seen: list[tuple[int, int]] = []
    import_labels(sample_project, _write_labels(path, lines[:-1]), on_progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (20, 20)


def test_labels_that_contradict_themselves_or_the_project_are_refused(sample_project: Project, tmp_path: Path) -> None:
    first, second = (a.id for a in sample_project.answers()[:2])
    before = _state(sample_project)
    conflicting = [_line(sample_project, first, "ana", "correct"), _line(sample_project, second, "ana", "correct")]
    conflicting.append(_line(sample_project, first, "ana", "incorrect"))
    with pytest.raises(InvalidInput, match=r"line 3: answer .* labelled by 'ana' at labels.jsonl line 1 and again"):
        import_labels(sample_project, _write_labels(tmp_path / "labels.jsonl", conflicting))
    both = [_line(sample_project, first, "x", "correct"), _line(sample_project, second, "x", "correct", kind="judge")]
    with pytest.raises(InvalidInput, match=r"line 2: rater 'x' is judge here but human at"):
        import_labels(sample_project, _write_labels(tmp_path / "labels.jsonl", both))
    assert _state(sample_project) == before

    # The same line twice counts once; " alice " is alice.
    twice = [_line(sample_project, first, "alice", "correct"), _line(sample_project, first, " alice ", "correct")]
    summary = import_labels(sample_project, _write_labels(tmp_path / "twice.jsonl", twice))
    assert summary.lines == 1 and summary.raters_created == ["alice"]
    judge = [_line(sample_project, second, "alice", "correct", kind="judge")]
    with pytest.raises(InvalidInput, match=r"'alice' is a human rater in this project, not a judge one"):
        import_labels(sample_project, _write_labels(tmp_path / "judge.jsonl", judge))
    with pytest.raises(InvalidInput, match=r"field 'labels' is missing"):
        import_labels(sample_project, _write_labels(tmp_path / "truth.jsonl", [{"id": first}]), default_rater="t")


# ---------------------------------------------------------------- 14–15. said clearly


def test_empty_findings_say_none_found_and_an_empty_model_is_refused(
    sample_project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ["--db", sample_project.url]
    for command in ("terms", "references", "parties"):
        status, out, _ = _run(capsys, *db, command, "Keep.txt")
        assert status == 0 and out.strip(), command
        if not out.strip().startswith(" "):
            assert "found in Keep.txt" in out or out.count("\n") >= 1
    status, _, err = _run(capsys, *db, "judge", "--model", "", "--answers", ANSWER)
    assert status == 2 and "an empty name" in err


def test_a_busy_project_waits_then_says_busy(sample_project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    path = sqlite_path(sample_project.url)
    assert path is not None
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another Assay in the middle of a write
    released = threading.Timer(30, holder.rollback)
    released.start()
    try:
        started = time.monotonic()
        status, _, err = _run(capsys, "--project", str(path), "network", "allow", "10.0.0.7")
        waited = time.monotonic() - started
    finally:
        released.cancel()
        holder.rollback()
        holder.close()
    assert status == 2 and "is busy: another Assay is writing to it" in err and "damaged" not in err
    assert 4 < waited < 30
    assert sample_project.allowed_hosts() == []


# ---------------------------------------------------------------- 16. redaction leaves no trace


def test_a_redacted_name_is_gone_from_every_export(
    sample_project: Project, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import pandas as pd
    from pypdf import PdfReader

    answer = next(a.id for a in sample_project.answers() if sample_project.answer(a.id).document == GOPAGE)
    labels = [_line(sample_project, answer, "ana", "incorrect"), _line(sample_project, answer, "ben", "correct")]
    import_labels(sample_project, _write_labels(tmp_path / "labels.jsonl", labels))
    db = ["--db", sample_project.url]
    for fmt, name in (
        ("pdf", "r.pdf"),
        ("report", "r.html"),
        ("csv", "r.csv"),
        ("xlsx", "r.xlsx"),
        ("jsonl", "r.jsonl"),
    ):
        assert _run(capsys, *db, "export", "--format", fmt, "--redact-name", "gopage", str(tmp_path / name))[0] == 0
    reader = PdfReader(tmp_path / "r.pdf")
    texts = {"pdf": "\n".join(page.extract_text() or "" for page in reader.pages)}
    texts["pdf metadata"] = json.dumps({k: str(v) for k, v in (reader.metadata or {}).items()})
    for name in ("r.html", "r.csv", "r.jsonl"):
        texts[name] = (tmp_path / name).read_text(encoding="utf-8")
    sheets = pd.read_excel(tmp_path / "r.xlsx", sheet_name=None)
    texts["xlsx"] = "\n".join(frame.to_csv() + " ".join(map(str, frame.columns)) for frame in sheets.values())
    for where, text in texts.items():
        assert "gopage" not in text.lower().replace("\n", ""), where
    assert "[NAME]Corp_20140221" in texts["r.csv"]


def test_a_document_name_longer_than_the_system_allows_is_one_sentence(tmp_path: Path) -> None:
    """Found by bench/fuzz_inputs.py: the file system's 'name too long' was a traceback."""
    from app.ingest.datasets import read_dataset

    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps({"id": "a", "document": "x" * 300, "question": "Q?", "answer": "A."}) + "\n")
    with pytest.raises(InvalidInput, match=r"qa.jsonl line 1: field 'document': not a file it can open"):
        read_dataset(qa)


_FULL_DISK = """
import resource, signal, sys
from app.cli import main
from app.project import Project
from storage.db import url_for_path
held = Project.open(url_for_path(sys.argv[1]))  # its files are as large as they get before the limit
held.counts()
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000))
sys.exit(main(["--project", sys.argv[1], "export", "--format", sys.argv[2], sys.argv[3]]))
"""


def test_an_xlsx_export_that_fills_the_disk_says_so_in_one_sentence(sample_project: Project, tmp_path: Path) -> None:
    """Issue 62 §11: a write that fails part-way (a full disk; here a file-size limit) is one sentence,
    without the traceback of the spreadsheet's writer or the `Exception ignored` noise of its zip."""
    path = sqlite_path(sample_project.url)
    sample_project.close()
    out = tmp_path / "out.xlsx"
    run = subprocess.run(
        [sys.executable, "-c", _FULL_DISK, str(path), "xlsx", str(out)],
        capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr[-3000:]
    assert run.stderr == f"assay: {out}: cannot write it: file too large\n"
    assert not out.exists()
