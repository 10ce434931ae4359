"""A seeded fuzz of bad input over every door into a project: label files, guidelines, datasets,
bundles, GGUF headers found by model discovery, and export paths. Each of the 1,200 generated inputs
must be refused in one sentence (an AssayError, never another exception), within 10 s, and leave the
project exactly as it was; the process stays under 1 GB. The cases run in this process (a few also
through `python -m app.cli`, to see no traceback there either); bench/fuzz_inputs.py runs many more.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import struct
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from app import limits
from app.errors import AssayError
from app.project import Project
from storage.db import sqlite_path

CASES = 1200
SEED = 41

Case = tuple[str, Callable[[], object]]  # (what it is, the call that must refuse it)

_JUNK: list[Any] = [
    None,
    True,
    -1,
    2**70,
    1.5e308,
    float("nan"),
    "",
    " ",
    "\x00",
    "\u202e",
    "x" * 300,
    [],
    {},
    [[[[[]]]]],
    {"a": {"b": {"c": []}}},
]


def _junk(rng: random.Random) -> Any:
    return rng.choice(_JUNK) if rng.random() < 0.8 else "".join(chr(rng.randrange(1, 0x3000)) for _ in range(8))


def _mutated(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """A JSON value with one thing wrong somewhere: a field dropped, renamed or of the wrong type."""
    if isinstance(value, dict) and value and depth < 4:
        key = rng.choice(sorted(value))
        out = dict(value)
        action = rng.randrange(4)
        if action == 0:
            del out[key]
        elif action == 1:
            out[key] = _junk(rng)
        elif action == 2:
            out[key + "_"] = out.pop(key)
        else:
            out[key] = _mutated(rng, value[key], depth + 1)
        return out
    if isinstance(value, list) and value and depth < 4:
        out = list(value)
        i = rng.randrange(len(out))
        out[i] = _mutated(rng, out[i], depth + 1) if rng.random() < 0.6 else _junk(rng)
        return out
    return _junk(rng)


def _damaged_bytes(rng: random.Random, data: bytes) -> bytes:
    """Bytes cut short, flipped, zeroed, or with invalid UTF-8 or deep nesting put in."""
    action = rng.randrange(6)
    if not data or action == 0:
        return data[: rng.randrange(len(data) + 1)] + b"\xff\xfe"
    i = rng.randrange(len(data))
    if action == 1:
        return data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :]
    if action == 2:
        return data[:i] + b"\x00" * rng.randrange(1, 64) + data[i:]
    if action == 3:
        return data[:i] + b"[" * 5000 + data[i:]
    if action == 4:
        return data[:i] + b"\xc3\x28" + data[i:]
    return data[:i]


class Cases:
    """The generator: files written under `folder`, calls made against `project`."""

    def __init__(self, project: Project, folder: Path, seed: int = SEED, cases: int = CASES) -> None:
        self.project, self.folder, self.rng, self.cases = project, folder, random.Random(seed), cases
        self.answers = [a.id for a in project.answers()[:5]]
        self.texts = {a: (project.answer(a) or _missing(a)).text for a in self.answers}
        self.count = 0

    def _file(self, suffix: str, data: bytes) -> Path:
        self.count += 1
        path = self.folder / f"case-{self.count}{suffix}"
        path.write_bytes(data)
        return path

    def labels(self) -> Case:
        from app.ingest.labels import import_labels

        rng = self.rng
        answer_id = rng.choice(self.answers)
        text = self.texts[answer_id]
        good = {
            "answer_id": answer_id,
            "rater": "fuzz",
            "kind": "human",
            "data_points": [{"text": text[:40], "tag": "correct", "citations": ["par_1"]}],
        }
        kind = rng.randrange(5)
        if kind == 0:
            data = _damaged_bytes(rng, (json.dumps(good) + "\n").encode())
        elif kind == 1:
            spans = {"id": answer_id, "labels": [{"start": 0, "end": 5, "label": "supported"}]}
            data = (json.dumps(_mutated(rng, spans)) + "\n").encode()
        elif kind == 2:  # the good line, then a contradicting one
            other = dict(good, data_points=[{"text": text[:40], "tag": "incorrect"}])
            data = (json.dumps(good) + "\n" + json.dumps(_mutated(rng, other)) + "\n").encode()
        elif kind == 3:  # a consensus line, or a judge line for a human
            line = dict(good, rater=rng.choice(["consensus", " CONSENSUS ", "ana"]), kind="judge")
            data = (json.dumps(good | {"rater": "ana"}) + "\n" + json.dumps(line) + "\n").encode()
            if line["rater"] == "ana":
                data = (json.dumps(line) + "\n").encode()
        else:
            data = (json.dumps(_mutated(rng, good)) + "\n").encode()
        path = self._file(".jsonl", data)
        return "labels " + data[:80].decode("utf-8", "replace"), lambda: _no_change_on_success(
            lambda: import_labels(self.project, path, default_rater=None)
        )

    def guidelines(self) -> Case:
        rng = self.rng
        data = rng.choice([b"", b"   \n\t", b"\xff\xfe# Rules", b"# Rules\n" + b"\xc3\x28" * 3, b"\x00" * 10])
        path = self._file(".md", data)
        if rng.random() < 0.2:
            path = rng.choice([Path("/dev/zero"), self.folder, self.folder / "missing.md", path / "below.md"])

        def call() -> None:
            text = limits.read_bounded(path, limits.GUIDELINES, "the Markdown file of the guidelines")
            try:
                self.project.set_guidelines(text.decode("utf-8"), "fuzz")
            except UnicodeDecodeError as exc:
                raise AssayError("not UTF-8") from exc

        return f"guidelines {path.name}", call

    def dataset(self) -> Case:
        from app.ingest.datasets import import_dataset

        rng = self.rng
        good = {"id": "fz-1", "document": "Keep.txt", "question": "Q?", "answer": "A.", "gold_spans": []}
        suffix = rng.choice([".jsonl", ".csv"])
        if suffix == ".jsonl":
            line = _mutated(rng, good) if rng.random() < 0.7 else good | {"document": "../../etc/passwd"}
            data = json.dumps(line).encode() + b"\n"
            if rng.random() < 0.3:
                data = _damaged_bytes(rng, data)
        else:
            header = rng.choice(["id,document,question,answer", "id,document,question", "id,document,question,answer"])
            data = _damaged_bytes(rng, f"{header}\nfz-1,nope.txt,Q?,A.\n".encode())
        path = self._file(suffix, data)
        return f"dataset {data[:60]!r}", lambda: import_dataset(self.project.sessions, path)

    def bundle(self) -> Case:
        from app.review.team import BUNDLE_FORMAT, import_bundle

        rng = self.rng
        body = {
            "format": BUNDLE_FORMAT,
            "reviewer": "fuzz",
            "items": [
                {
                    "answer_id": self.answers[0],
                    "answer_sha256": "0" * 64,
                    "points": [{"text": "x", "span": [0, 1], "tag": "correct"}],
                    "review": {
                        "status": "submitted",
                        "active_seconds": 1,
                        "holistic_correctness": None,
                        "holistic_relevance": None,
                        "comment": None,
                    },
                }
            ],
            "audit": [],
        }
        body = _mutated(rng, body) if rng.random() < 0.8 else dict(body, reviewer="consensus")
        if isinstance(body, dict):
            sealed = json.dumps(body, sort_keys=True, ensure_ascii=False).encode()
            body = {**body, "sha256": hashlib.sha256(sealed).hexdigest()}
        data = json.dumps(body).encode()
        if rng.random() < 0.2:
            data = _damaged_bytes(rng, data)
        path = self._file(".json", data)
        return f"bundle {data[:60]!r}", lambda: import_bundle(self.project, path)

    def gguf(self) -> Case:
        from app.judging.model_files import read_model_info

        rng = self.rng
        key = struct.pack("<Q", 4) + b"name"
        value = rng.choice(
            [
                struct.pack("<I", 8) + struct.pack("<Q", rng.choice([2**63, 10**9, 3])) + b"abc",
                struct.pack("<I", 9) + b"".join(struct.pack("<IQ", 9, 1) for _ in range(rng.randrange(9, 3000))),
                struct.pack("<I", 9) + struct.pack("<IQ", 6, 2**62),
                struct.pack("<I", rng.randrange(13, 2**32)),
                struct.pack("<I", 9) + struct.pack("<IQ", 8, 2**40) + struct.pack("<Q", 0) * 4,
            ]
        )
        version = rng.choice([3, 3, 3, 1, 2**31])
        data = b"GGUF" + struct.pack("<IQQ", version, rng.choice([0, 2**60]), rng.choice([1, 2**60])) + key + value
        if rng.random() < 0.3:
            data = _damaged_bytes(rng, data)
        path = self._file(".gguf", data)
        return f"gguf {data[:40]!r}", lambda: read_model_info(path)

    def export_path(self) -> Case:
        from app.cli.output import writing

        path = sqlite_path(self.project.url)
        assert path is not None
        target = self.rng.choice(
            [
                path,
                path.with_name(path.name + "-wal"),
                path.with_name(path.name + "-shm"),
                path.parent / "." / path.name,
                self.folder,
                self.folder / "missing" / "x.csv",
                self._file(".txt", b"x") / "below.csv",
            ]
        )

        def call() -> None:
            with writing(target, project=self.project):
                target.write_text("overwritten", encoding="utf-8")

        return f"export to {target}", call

    def __iter__(self) -> Iterator[Case]:
        kinds = [self.labels, self.labels, self.guidelines, self.dataset, self.bundle, self.gguf, self.export_path]
        for _ in range(self.cases):
            yield self.rng.choice(kinds)()


def _missing(answer_id: str) -> Any:
    raise AssertionError(f"the sample has no answer {answer_id}")


def _no_change_on_success(call: Callable[[], object]) -> object:
    """A generated line may happen to be valid: then it must have imported, not half-imported."""
    raise _Accepted(call())


class _Accepted(Exception):
    pass


def _entries(project: Project) -> int:
    with project.sessions() as session:
        return int(session.execute(text("SELECT count(*) FROM audit_log")).scalar_one())


def _state(project: Project) -> tuple[dict[str, int], int, str | None, list[str]]:
    entries = _entries(project)
    guidelines = project.guidelines()
    return project.counts(), entries, guidelines.sha256 if guidelines else None, project.allowed_hosts()


def test_a_thousand_bad_inputs_are_each_refused_in_a_sentence(
    sample_project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ASSAY_CONFIG_DIR", str(tmp_path / "config"))
    path = sqlite_path(sample_project.url)
    assert path is not None
    before = path.read_bytes()[:16]
    state = _state(sample_project)
    refused = accepted = 0
    slowest = 0.0
    tracemalloc.start()
    for what, call in Cases(sample_project, tmp_path):
        started = time.monotonic()
        try:
            call()
        except _Accepted:
            accepted += 1
            state = _state(sample_project)  # a valid input, imported whole: the new state to keep
            continue
        except AssayError:
            refused += 1
        except Exception as exc:  # anything else reaches the user as a traceback
            pytest.fail(f"{what}: {type(exc).__name__}: {exc}")
        else:
            accepted += 1
            state = _state(sample_project)
            continue
        finally:
            slowest = max(slowest, time.monotonic() - started)
        # Every write of Assay adds an audit entry: the log's length tells a change at once; the whole
        # state is compared every 200 refusals and at the end.
        assert _entries(sample_project) == state[1], f"{what}: refused, but the project changed"
        if refused % 200 == 0:
            assert _state(sample_project) == state, f"{what}: refused, but the project changed"
    assert _state(sample_project) == state
    assert refused >= 1000 and refused + accepted == CASES
    assert slowest < 10, f"one input took {slowest:.1f} s"
    assert path.read_bytes()[:16] == before
    peak = tracemalloc.get_traced_memory()[1]  # what this loop allocated at most (a file read whole shows here)
    tracemalloc.stop()
    assert peak < 2**30, f"peak memory {peak / 2**20:.0f} MB"


@pytest.mark.parametrize(
    "argv",
    [
        ["import-labels", "{bad}"],
        ["guidelines", "--set", "{bad}"],
        ["bundle", "import", "{bad}"],
        ["export", "--format", "jsonl", "{project}"],
    ],
)
def test_the_command_line_refuses_in_a_sentence(argv: list[str], sample_project: Project, tmp_path: Path) -> None:
    path = sqlite_path(sample_project.url)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"[" * 100_000 + b"\xff\n")
    filled = [word.format(bad=bad, project=path) for word in argv]
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "--project", str(path), *filled],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).parents[1],
        env={**os.environ, "ASSAY_CONFIG_DIR": str(tmp_path / "config")},
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
