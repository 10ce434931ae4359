"""Every command refuses broken input in one sentence (issue 30): exit status 2, no traceback,
nothing printed as a result and nothing changed in the project.

The commands are read from the parser: one added there without cases here fails
`test_every_command_has_cases`, naming it. The cases run in this process against the sample
project with two reviewers' and a judge run's labels, so an unknown answer id or rater name is
checked against real data. No judge model loads: llama.cpp's loader fails the test if reached.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from app.cli import main
from app.cli.parser import build_parser
from app.ingest.labels import import_labels
from app.project import SAMPLE_DATASET, Project
from models.segmentation import segment_answer
from storage.audit import audit_entries
from storage.db import url_for_path

SKIPPED = {"gui": "opens a window"}

# Placeholders: {missing} names nothing, {folder} an empty folder, {file} a small text file,
# {blocked} a path under that file (unwritable, even for root), {sample} the sample dataset,
# {project} the open project's own file.
CASES: list[tuple[list[str], str]] = [
    # the project itself, for every command: init, info, models, backup and calibration take nothing else
    (["--project", "{blocked}/p.assay", "init"], "a part of its path is a file, not a folder"),
    (["--project", "{folder}", "init"], "it is a folder or a device, not a file"),
    (["--project", "{file}", "info"], "is not an Assay project"),
    (["--db", "", "info"], "--db: no URL given"),
    (["--db", "nonsense://host/db", "info"], "not a database URL Assay can use"),
    (["--db", "postgresql+psycopg://someone:secret@127.0.0.1:1/assay", "info"], "someone:***@127.0.0.1:1"),
    (["info", "extra"], "unrecognized arguments: extra"),
    (["--project", "{folder}", "models"], "it is a folder or a device, not a file"),
    (["models", "--all"], "unrecognized arguments: --all"),
    (["models", "--check", "ollama:no-such-model"], "no Ollama model named 'no-such-model:latest'"),
    (["models", "--check", "{file}"], "not a GGUF model file"),
    (["models", "--check", "embedded", "--size", "0"], "'0' is not a whole number of at least 1"),
    (["models", "--check", "m", "--base-url", "http://127.0.0.1:9/v1"], "`assay network allow 127.0.0.1`"),
    (["models", "--add-folder", "{missing}"], "not a folder"),
    (["models", "--add-server", "ftp://gpu-box"], "is not a server address"),
    (["calibration", "--bins", "5"], "unrecognized arguments: --bins 5"),
    (["--project", "{file}", "calibration"], "is not an Assay project"),
    (["--project", "{folder}", "backup"], "it is a folder or a device, not a file"),
    (["backup", "now"], "unrecognized arguments: now"),
    # import and import-labels
    (["import", "{missing}"], "no such file or folder"),
    (["import", "{file}"], "expected a folder with qa.jsonl"),
    (["import", "{folder}"], "needs a qa.jsonl file"),
    (["import", "{sample}", "--pdf-password", "secret"], "write FILE=PASSWORD"),
    (["import", "{sample}", "--pdf-password", "=secret"], "write FILE=PASSWORD"),
    (["import", "{sample}", "--matter", "Z-9"], "matter 'Z-9': no such matter"),
    # matters
    (["matters", "--add", "ana", "--to", "Z-9"], "matter 'Z-9': no such matter"),
    (["matters", "--add", "ana"], "--add: say which with --to"),
    (["matters", "--create", "A-1"], "a new matter needs --client CLIENT and --name NAME too"),
    (["matters", "--export", "Z-9", "{missing}"], "matter 'Z-9': no such matter"),
    (["matters", "--delete", "Z-9"], "matter 'Z-9': no such matter"),
    (["scores", "--matter", "Z-9"], "matter 'Z-9': no such matter"),
    # the claim checker fitted to the reviews: ana and ben disagree on every point, so no tag is a label
    (["checker", "fit", "--matter", "Z-9"], "matter 'Z-9': no such matter"),
    (["checker", "fit"], "no person has tagged a point of the project"),
    (["import-labels", "{missing}"], "{missing}"),
    (["import-labels", "{folder}"], "{folder}"),
    (["import-labels", "{file}"], "file.txt"),
    # reading the project
    (["search", "no such contract", "term"], "no document has that name"),
    (["search", "", "term"], "documents match it"),
    (["search", "CopAcc", "term", "--limit", "0"], "'0' is not a whole number of at least 1"),
    (["search", "CopAcc", "term", "--limit", "-3"], "'-3' is not a whole number of at least 1"),
    (["terms", "no such contract"], "no document has that name"),
    (["references", "no such contract", "--json"], "no document has that name"),
    (["parties", "no such contract"], "no document has that name"),
    (["citations", "nope"], "no answer with id 'nope'"),
    (["segment", "--answer", "nope"], "no answer with id 'nope'"),
    (["show", "nope"], "no answer with id 'nope'"),
    # the judge: refused before any model loads
    (["judge", "--answers", "nope"], "--answers: no answer with id nope"),
    (["judge", "--answers", "contractnli-000,nope"], "--answers: no answer with id nope"),
    (["judge", "--answers", ","], "--answers: no answer id given"),
    (["judge", "--limit", "-1"], "'-1' is not a whole number of at least 1"),
    (["judge", "--more", "0"], "'0' is not a whole number of at least 1"),
    (["judge", "--parallel", "0"], "'0' is not a whole number of at least 1"),
    (["judge", "--context", "-5"], "'-5' is not a whole number of at least 1"),
    (["judge", "--threads", "0"], "'0' is not a whole number of at least 1"),
    (["judge", "--gpu-layers", "-2"], "'-2' is not a whole number of at least -1"),
    (["judge", "--seed", "-1"], "'-1' is not a whole number from 0 to 4294967295"),
    (["judge", "--seed", "x"], "'x' is not a whole number from 0 to 4294967295"),
    (["judge", "--mode", "bogus"], "invalid choice: 'bogus'"),
    (["judge", "--model", "{missing}.gguf"], "no model file at"),
    (["judge", "--model", "{folder}"], "no model file at"),
    (["judge", "--model", "{file}"], "not a GGUF model file"),
    (["judge", "--parallel", "2"], "the local judge runs one answer at a time"),
    (["judge", "--backend", "openai"], "needs --base-url and --model"),
    (["judge", "--backend", "openai", "--base-url", "http://llm.example.com/v1", "--model", "m"], "--allow-network"),
    (["judge", "--jury", "local"], "a jury needs at least two judges"),
    (["judge", "--jury", "local", "--jury", "verifier", "--rubric", "dece"], "leave --rubric at lemaj"),
    (["judge", "--jury", "local:seed=abc", "--jury", "local"], "a seed is a whole number"),
    (["judge", "--jury", "local:strictness=lax", "--jury", "verifier"], "strictness is one of"),
    (["judge", "--jury", "local:colour=red", "--jury", "verifier"], "juror option 'colour=red'"),
    (["judge", "--jury", "robot", "--jury", "local"], "juror 'robot': the judge is one of"),
    (["judge", "--jury", "local", "--jury", "verifier", "--priority", "incorrect,correct"], "order the four tags"),
    (["judge", "--jury", "local", "--jury", "local", "--answers", "nope"], "no answer with id nope"),
    # the verifier, the stress tests and the judges' figures
    (["verify", "--answers", "nope"], "--answers: no answer with id nope"),
    (["verify", "--answers", ","], "--answers: no answer id given"),
    (["stress-test"], "name the raters to test"),
    (["stress-test", "--raters", "nobody"], "no judge run named 'nobody'"),
    (["stress-test", "--raters", ","], "--raters: no rater given"),
    (["stress-test", "--judge", "nobody"], "no LeMAJ judge run named 'nobody'"),
    (["stress-test", "--raters", "verifier", "--judge", "run1"], "not both"),
    (["stress-test", "--raters", "verifier", "--limit", "0"], "'0' is not a whole number of at least 1"),
    (["stress-test", "--raters", "verifier", "--seed", "-1"], "'-1' is not a whole number from 0"),
    (["stress-test", "--raters", "verifier", "--answers", "nope"], "no answer with id nope"),
    (["rubric-scores"], "the following arguments are required: --rubric"),
    (["rubric-scores", "--rubric", "lemaj"], "invalid choice: 'lemaj'"),
    (["criteria", "nope", "--run", "run1"], "no answer with id 'nope'"),
    (["criteria", "contractnli-000", "--run", "run1", "--accept", "x"], "--accept: 'x': write criterion numbers"),
    (["criteria", "contractnli-000", "--run", "run1", "--reject", "-1"], "--reject: '-1': write criterion numbers"),
    (["criteria", "contractnli-000", "--run", "run1", "--edit", "one=text"], "write N=new text"),
    (["criteria", "contractnli-000", "--run", "nobody"], "no DeCE result of 'nobody'"),
    # the reviewers' side
    (["audit", "export"], "audit export needs an output file"),
    (["audit", "export", "{folder}"], "it is a folder: give the name of the file to write"),
    (["audit", "export", "{blocked}/audit.jsonl"], "cannot write it: a part of its path is a file, not a folder"),
    (["audit", "verify", "{file}"], "audit verify takes no file"),
    (["audit", "delete"], "invalid choice: 'delete'"),
    (["network", "allow"], "network allow needs a host"),
    (["network", "allow", "http://llm.example.com/v1"], "not a host: write the host alone"),
    (["network", "allow", "llm.example.com:8000"], "not a host: write the host alone"),
    (["network", "forbid", "never.example.com"], "not an allowed host"),
    (["network", "list", "llm.example.com"], "network list takes no host"),
    (["bundle", "export", "{missing}.json"], "bundle export needs --reviewer NAME"),
    (["bundle", "export", "{missing}.json", "--reviewer", "nobody"], "no reviewer named 'nobody'"),
    (["bundle", "export", "{missing}.json", "--reviewer", "run1"], "no reviewer named 'run1'"),
    (["bundle", "export", "{folder}", "--reviewer", "ana"], "it is a folder: give the name of the file to write"),
    (["bundle", "export", "{blocked}/b.json", "--reviewer", "ana"], "a part of its path is a file, not a folder"),
    (["bundle", "import", "{missing}"], "no such file"),
    (["bundle", "import", "{folder}"], "it is a folder, not a bundle file"),
    (["bundle", "import", "{file}"], "not a readable bundle"),
    (["bundle", "import", "{file}", "--reviewer", "ana"], "bundle import takes no --reviewer"),
    (["assign", "--reviewers", "ana,ben", "--per-answer", "0"], "'0' is not a whole number of at least 1"),
    (["assign", "--reviewers", "ana,ben", "--per-answer", "3"], "between 1 and the number of reviewers (2)"),
    (["assign", "--reviewers", ","], "--reviewers: no name given"),
    (["sample", "--size", "0"], "'0' is not a whole number of at least 1"),
    (["sample", "--size", "-1"], "'-1' is not a whole number of at least 1"),
    (["sample", "--size", "2", "--seed", "-1"], "'-1' is not a whole number from 0"),
    (["sample", "--size", "two"], "'two' is not a whole number of at least 1"),
    # guidelines and sign-off (issue 32): ana reviewed the first six answers, not cnli-0015-nda-17
    (["guidelines", "--set", "{missing}"], "cannot read it: no such file or folder"),
    (["guidelines", "--set", "{folder}"], "it is a folder: give the Markdown file of the guidelines"),
    (["guidelines", "--set", "{blocked}"], "cannot read it: a part of its path is a file, not a folder"),
    (["guidelines", "--version", "2"], "unrecognized arguments: --version 2"),
    (["signoff", "nope", "--reviewer", "ana"], "no answer with id 'nope'"),
    (["signoff", "cnli-0015-nda-1", "--reviewer", "nobody"], "--reviewer: no reviewer named 'nobody'"),
    (["signoff", "cnli-0015-nda-1", "--reviewer", "run1"], "--reviewer: no reviewer named 'run1'"),
    (["signoff", "cnli-0015-nda-17", "--reviewer", "ana"], "ana has not submitted a review of answer"),
    (["signoff", "cnli-0015-nda-1"], "--reviewer: no reviewer named"),  # the OS user, who reviewed nothing
    (["signoff", "cnli-0015-nda-1", "--reviewer", "ana", "--export", "{folder}"], "it is a folder: give the name"),
    (
        ["signoff", "cnli-0015-nda-1", "--reviewer", "ana", "--export", "{blocked}/c.json"],
        "a part of its path is a file",
    ),
    # reviewers' signing keys
    (["keys", "retire"], "retire: give the key's fingerprint"),
    (["keys", "export", "0000beef"], "no key in this project has the fingerprint '0000beef'"),
    (["keys", "retire", "0000beef"], "no key in this project has the fingerprint '0000beef'"),
    (["keys", "list", "0000beef"], "keys list takes no fingerprint or file"),
    (["keys", "burn"], "invalid choice: 'burn'"),
    (["reopen", "cnli-0015-nda-1", "--reviewer", "ana", "--reason", "typo"], "ana has no sign-off of answer"),
    (["reopen", "cnli-0015-nda-1", "--reviewer", "ana", "--reason", " "], "say why the signed review is reopened"),
    (["reopen", "nope", "--reviewer", "ana", "--reason", "typo"], "no answer with id 'nope'"),
    (["reopen", "cnli-0015-nda-1", "--reviewer", "ana"], "the following arguments are required: --reason"),
    # the figures
    (["scores", "--rater", "nobody"], "no rater named nobody"),
    (["scores", "--rater", "ana", "--rater", " "], "--rater: a rater's name is empty"),
    (["scores", "--by", "planet"], "invalid choice: 'planet'"),
    (["agreement", "--raters", "ana,nobody"], "no rater named nobody"),
    (["agreement", "--raters", "ana"], "agreement needs at least two raters"),
    (["agreement", "--raters", "ana,"], "--raters: a rater's name is empty"),
    (["agreement", "--level", "word"], "invalid choice: 'word'"),
    (["alignment", "--judge", "run1", "--human", "nobody"], "no rater named nobody"),
    (["alignment", "--judge", "nobody", "--human", "ana"], "no rater named nobody"),
    (["alignment", "--judge", "ana", "--human", "ana"], "--judge and --human both name 'ana'"),
    (["alignment", "--judge", "run1"], "the following arguments are required: --human"),
    (["raters", "--default", "judge:nobody"], "no automatic rater named 'judge:nobody'"),
    (["raters", "--default", " "], "no rater named: write --default verifier, or --default auto"),
    (["title", "Acme", "--clear"], "give a name, or --clear to forget the one set, not both"),
    (["title", " "], "the name is empty"),
    (["triage", "--target-miss-rate", "-1"], "'-1' is not a number between 0 and 1 (0 and 1 excluded)"),
    (["triage", "--target-miss-rate", "0"], "'0' is not a number between 0 and 1"),
    (["triage", "--target-miss-rate", "1"], "'1' is not a number between 0 and 1"),
    (["triage", "--min-correctness", "1.5"], "'1.5' is not a number from 0 to 1"),
    (["triage", "--min-relevance", "-0.1"], "'-0.1' is not a number from 0 to 1"),
    (["triage", "--min-confidence", "nan"], "'nan' is not a number from 0 to 1"),
    (["triage", "--min-correctness", "most"], "'most' is not a number from 0 to 1"),
    (["triage", "--minutes-per-answer", "0"], "'0' is not a number above 0"),
    (["triage", "--minutes-per-answer", "-3"], "'-3' is not a number above 0"),
    (["estimate", "--compare", "gpt"], "--compare takes two generators"),
    (["estimate", "--compare", "gpt,"], "--compare takes two generators"),
    (["estimate", "--compare", "nobody,noone"], "no question was answered by both 'nobody' and 'noone'"),
    (["estimate", "--by", "planet"], "invalid choice: 'planet'"),
    # issue 33: compare two generators (the sample here has one generator with a name)
    (["compare"], "name the baseline and the candidate generator"),
    (["compare", "long-form", "gpt-9"], "'gpt-9': no answers of this generator"),
    (["compare", "long-form", "long-form"], "compare two different generators"),
    (["compare", "long-form", "unknown"], "no question was answered by both 'long-form' and 'unknown'"),
    (["compare", "--blind", "maybe"], "invalid choice: 'maybe'"),
    # export
    (["export", "--format", "csv", "{folder}"], "it is a folder: give the name of the file to write"),
    (["export", "--format", "csv", "{missing}.csv", "--sign"], "--sign: only the pdf report is signed, not csv"),
    (["export", "--format", "pdf", "{missing}.pdf", "--cert", "{file}"], "a certificate is for signing: add --sign"),
    (["export", "--format", "pdf", "{missing}.pdf", "--sign", "--cert", "{file}"], "give the CA's certificate and"),
    (
        ["export", "--format", "pdf", "{missing}.pdf", "--sign", "--cert", "{file}", "--cert-key", "{file}"],
        "it is not a PEM certificate",
    ),
    (["export", "--format", "xlsx", "{folder}"], "it is a folder: give the name of the file to write"),
    (["export", "--format", "jsonl", "{folder}"], "it is a folder: give the name of the file to write"),
    (["export", "--format", "csv", "{blocked}/x.csv"], "cannot write it: a part of its path is a file"),
    (["export", "--format", "xlsx", "{blocked}/x.xlsx"], "cannot write it: a part of its path is a file"),
    (["export", "--format", "report", "{blocked}/x.html"], "cannot write it: a part of its path is a file"),
    (["export", "--format", "docx", "{missing}.docx"], "invalid choice: 'docx'"),
    # the open project, its write-ahead log and endless devices are never an export's file or an input
    (["export", "--format", "csv", "{project}"], "it is the open project: writing there would destroy it"),
    (["export", "--format", "jsonl", "{project}-wal"], "writing there would damage it"),
    (["audit", "export", "{project}"], "it is the open project"),
    (["signoff", "cnli-0015-nda-1", "--reviewer", "ana", "--export", "{project}-wal"], "writing there would damage"),
    (["signoff", "cnli-0015-nda-1", "--reviewer", "ana", "--export", "/dev/full"], "not a regular file"),
    (["export", "--format", "csv", "/dev/zero"], "not a regular file (a device or a pipe)"),
    (["export", "--format", "pdf", "{missing}.txt"], "a pdf export is written to a .pdf file, not .txt"),
    (["--project", "{missing}.assay", "info"], "no such project: `assay init` or `assay import` makes one"),
    (["compare", "long-form", "gpt", "--export", "{missing}/r.csv"], "does not exist"),
    (["guidelines", "--set", "/dev/zero"], "not a regular file (a device or a pipe)"),
    (["import-labels", "/dev/zero"], "not a regular file (a device or a pipe)"),
    (["judge", "--model", ""], "an empty name: give a GGUF file"),
    (["export", "--format", "csv"], "the following arguments are required: out"),
    (
        ["export", "--format", "jsonl", "{missing}.jsonl", "--redact-names-file", "{missing}"],
        "cannot read the names: no such file or folder",
    ),
    (
        ["export", "--format", "jsonl", "{missing}.jsonl", "--redact-names-file", "{folder}"],
        "cannot read the names: it is a folder, not a file",
    ),
    # adjudication and qualification (issue 32): ana and ben disagree on the first six answers
    (["adjudicate"], "give an answer id with --point N --tag TAG, or --list"),
    (["adjudicate", "nope", "--point", "1", "--tag", "correct"], "no answer with id 'nope'"),
    (["adjudicate", "cnli-0015-nda-1", "--tag", "correct"], "needs --point N and --tag TAG"),
    (["adjudicate", "cnli-0015-nda-1", "--point", "99", "--tag", "correct"], "has data points 1 to"),
    (["adjudicate", "cnli-0015-nda-1", "--point", "0", "--tag", "correct"], "'0' is not a whole number"),
    (["adjudicate", "cnli-0015-nda-1", "--point", "1", "--tag", "maybe"], "invalid choice: 'maybe'"),
    (["adjudicate", "cnli-0015-nda-1", "--point", "1", "--tag", "correct", "--reason", "tired"], "invalid choice"),
    (["adjudicate", "cnli-0015-nda-17", "--point", "1", "--tag", "correct"], "fewer than two submitted reviews"),
    (["adjudicate", "--list", "cnli-0015-nda-1"], "--list lists the answers waiting"),
    (["adjudicators", "--set", ","], "--set: no name given"),
    (["adjudicators", "--set", "ana", "--clear"], "give one of them"),
    (["qualification", "--gold-share", "1"], "the gold share is a number from 0 up to (not including) 1"),
    (["qualification", "--gold-share", "half"], "'half' is not a number from 0 to 1"),
    (["qualification", "--gold-raters", "nobody"], "no human rater named 'nobody' to take as gold"),
    (["qualification", "--gold-raters", "run1"], "no human rater named 'run1' to take as gold"),
    (["qualification", "--training", "maybe"], "invalid choice: 'maybe'"),
    (["export", "--format", "pdf", "{missing}.pdf", "--sign", "--reviewer", "é" * 40], "at most 64 bytes of UTF-8"),
    # checking a signed report (issue 62)
    (["report", "--check", "{missing}.pdf"], "cannot read it: no such file or folder"),
    (["report", "--check", "{file}"], "cannot read this signed PDF"),
    (["report", "--check", "{folder}"], "it is a folder: give a signed PDF report"),
    (["report", "--check", "{file}", "--ca", "{file}"], "it is not a PEM certificate"),
    # arguments nothing can store or print, and ids of 100,000 digits (issue 62)
    (["title", "\ud800"], "argument 4 ('\\ud800') is not valid text: it holds bytes that are not UTF-8"),
    (["show", "x\udcff"], "is not valid text: it holds bytes that are not UTF-8"),
    (["signoff", "cnli-0015-nda-1", "--reviewer", "\ud800"], "is not valid text"),
    (["show", "1" * 100_000], "is 100,000 characters long; no name, id or path is longer than 10,000"),
    (["criteria", "contractnli-000", "--run", "run1", "--accept", "1" * 5000], "write criterion numbers"),
    # backups
    (["restore", "1" * 5000], "no such backup"),
    (["restore", "99"], "no such backup"),
    (["restore", "{missing}"], "no such backup"),
]

# A backup folder that cannot be made (ASSAY_BACKUP_DIR under a file): `backup` must say so too.
BACKUP_DIR_BLOCKED = (["backup"], "cannot write there: a part of its path is a file, not a folder")


class Place(NamedTuple):
    project: Path
    folder: Path
    file: Path
    missing: Path

    def fill(self, text: str) -> str:
        return text.format(
            missing=self.missing,
            folder=self.folder,
            file=self.file,
            blocked=self.file / "inside",
            sample=SAMPLE_DATASET,
            project=self.project,
        )


def _commands() -> set[str]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(actions[0].choices)


def _command_of(argv: list[str]) -> str:
    return next(word for word in argv if word in _commands())


def _state(path: Path) -> dict[str, object]:
    """What a refused command must leave as it was: the counts, the audit log, the allowed hosts."""
    project = Project.open(url_for_path(path))
    try:
        with project.sessions() as session:
            entries = len(list(audit_entries(session)))
        return {**project.counts(), "audit": entries, "hosts": project.allowed_hosts()}
    finally:
        project.close()


@pytest.fixture(scope="module")
def reviewed_file(_sample_file: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """The sample project with labels by two reviewers (ana, ben) and a judge run (run1)."""
    path = tmp_path_factory.mktemp("bad-input") / "reviewed.assay"
    shutil.copy(_sample_file, path)
    project = Project.open(url_for_path(path))
    lines = []
    for answer in project.answers()[:6]:
        segments = segment_answer(project.answer(answer.id).text)
        for rater, kind, tag in (
            ("ana", "human", "correct"),
            ("ben", "human", "incorrect"),
            ("run1", "judge", "correct"),
        ):
            points = [{"text": s.text, "tag": tag} for s in segments]
            lines.append({"answer_id": answer.id, "rater": rater, "kind": kind, "data_points": points})
    labels = path.parent / "labels.jsonl"
    labels.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    import_labels(project, labels)
    project.close()
    return path, _state(path)


@pytest.fixture
def place(reviewed_file: tuple[Path, dict[str, object]], tmp_path: Path) -> Iterator[Place]:
    project = tmp_path / "project.assay"
    shutil.copy(reviewed_file[0], project)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("not what any command wants\n", encoding="utf-8")
    yield Place(project, tmp_path / "folder", tmp_path / "file.txt", tmp_path / "missing")


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A judge case reaching llama.cpp's loader was accepted too far: fail it (and keep the test fast).
    A case that wrongly reached the default project finds it here, not in the user's data folder."""
    import llama_cpp

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "user-data"))

    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("a model was loaded: the judge accepted this input")

    monkeypatch.setattr(llama_cpp, "Llama", refuse)


def _refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run `assay ARGV` here and return its one-line refusal; fail on a traceback, a result, or success."""
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse refuses what it parses this way
        status = exc.code
    except Exception:
        pytest.fail(f"assay {' '.join(argv)} ended in a traceback:\n{traceback.format_exc()}")
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, f"assay {' '.join(argv)} printed a traceback:\n{out}{err}"
    assert status == 2, f"assay {' '.join(argv)} exited {status} on broken input:\n{out}{err}"
    assert out == "", f"assay {' '.join(argv)} printed a result while refusing:\n{out}"
    lines = err.strip().splitlines()
    if lines and lines[0].startswith("usage: "):  # argparse's usage, then its one line
        message = lines[-1]
        assert re.match(r"assay( [\w-]+)?: error: ", message), err
    else:
        assert len(lines) == 1, f"assay {' '.join(argv)}: the refusal is not one line:\n{err}"
        message = lines[0]
        assert message.startswith("assay: "), message
    assert not re.search(r"Errno|\w+(Error|Exception)\b|\bNone\b", message), f"not a sentence for a person: {message}"
    assert len(message) <= 240, f"not one short sentence: {message}"
    return message


def test_every_command_has_cases() -> None:
    covered = {_command_of(argv) for argv, _ in CASES} | {_command_of(BACKUP_DIR_BLOCKED[0])}
    missing = sorted(_commands() - covered - set(SKIPPED))
    assert not missing, f"commands without bad-input cases in {Path(__file__).name}: {', '.join(missing)}"


@pytest.mark.parametrize(("argv", "says"), CASES, ids=[" ".join(argv)[:120] for argv, _ in CASES])
def test_broken_input_is_refused_in_one_sentence(
    argv: list[str],
    says: str,
    place: Place,
    reviewed_file: tuple[Path, dict[str, object]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    filled = [place.fill(word) for word in argv]
    if not filled[0].startswith("--"):
        filled = ["--project", str(place.project), *filled]
    message = _refusal(filled, capsys)
    assert place.fill(says) in message
    assert _state(place.project) == reviewed_file[1], "a refused command changed the project"


def test_an_unwritable_backup_folder_is_refused(
    place: Place, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ASSAY_BACKUP_DIR", str(place.file / "backups"))
    argv, says = BACKUP_DIR_BLOCKED
    assert says in _refusal(["--project", str(place.project), *argv], capsys)


def test_models_lists_this_computers_models_without_a_project(tmp_path, monkeypatch, capsys) -> None:
    """`assay models` is about the computer, not a project: on a fresh machine, with no default project yet, it
    lists and makes none (`--check`, which measures on a project, still needs one)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # where the default project would be made
    assert main(["models"]) == 0
    assert not list(tmp_path.rglob("*.assay"))
    assert main(["models", "--check", "anything.gguf"]) == 2
    assert "no such project" in capsys.readouterr().err and not list(tmp_path.rglob("*.assay"))
