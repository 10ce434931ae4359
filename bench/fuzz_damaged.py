"""Fuzz run: damaged inputs of every kind a user can hand Assay, through the real `assay` commands.

Kinds: project files (`info`, then `backup`, whose page-by-page check is the full integrity check),
datasets (qa.jsonl, CSV, XLSX), PDF and DOCX contracts inside a dataset, label files and review
bundles. Each input is a valid file damaged at random (cut short, bytes flipped, overwritten,
inserted, deleted, zeroed, replaced) or, for JSON inputs, edited in structure (keys dropped,
values of the wrong type), bundles resealed so the edit gets past the seal. Counted:
- tracebacks: the command raised instead of answering (must be 0);
- partial writes: a refused command changed something (the project's rows, the damaged file, a
  stray or half-written backup) (must be 0);
- unclear refusals: a refusal that is not one `assay: …` sentence naming the file (must be 0).

    PYTHONPATH=. .venv/bin/python bench/fuzz_damaged.py [--cases 1150] [--seed 1]
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import json
import os
import random
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

SHARE = {  # kind -> share of the cases
    "project": 0.26,
    "qa.jsonl": 0.13,
    "qa.csv": 0.09,
    "qa.xlsx": 0.09,
    "pdf": 0.13,
    "docx": 0.13,
    "labels": 0.09,
    "bundle": 0.08,
}
CONTRACT = (
    "NON-DISCLOSURE AGREEMENT\n\n1. Definitions\n1.1 Confidential Information means all information disclosed "
    "by either party.\n\n2. Obligations\n2.1 The Recipient shall keep the Confidential Information secret.\n"
    "2.2 The Recipient shall not disclose it to any third party.\n\n3. Term\n3.1 This Agreement lasts three years.\n"
)


# ------------------------------------------------------------------ damage


def damage(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    n = len(data)
    at = rng.randrange(max(n, 1))
    span = rng.randint(1, max(1, min(n // 4, 4096)))
    how = rng.choice(["truncate", "flip", "overwrite", "insert", "delete", "zero", "replace", "duplicate"])
    if how == "truncate":
        return how, data[:at]
    if how == "flip":
        out = bytearray(data)
        for _ in range(rng.randint(1, 64)):
            i = rng.randrange(max(n, 1))
            if i < n:
                out[i] ^= 1 << rng.randrange(8)
        return how, bytes(out)
    if how == "overwrite":
        return how, data[:at] + rng.randbytes(span) + data[at + span :]
    if how == "insert":
        return how, data[:at] + rng.randbytes(span) + data[at:]
    if how == "delete":
        return how, data[:at] + data[at + span :]
    if how == "zero":
        return how, data[:at] + bytes(span) + data[at + span :]
    if how == "duplicate":
        return how, data[:at] + data[at : at + span] * 2 + data[at + span :]
    return how, rng.randbytes(rng.choice([0, 1, 100, 4096, 10_000, n]))


def mangle(value, rng: random.Random):
    """A structural edit somewhere in a JSON value: a key dropped, a value of the wrong type."""
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        if rng.random() < 0.3:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: mangle(value[key], rng)}
    if isinstance(value, list) and value:
        i = rng.randrange(len(value))
        if rng.random() < 0.2:
            return value[:i] + value[i + 1 :]
        return [*value[:i], mangle(value[i], rng), *value[i + 1 :]]
    return rng.choice([None, 0, -1, 1e308, "", "x" * 3, [], {}, True, "\x00", "😀" * 3, 2**70])


# ------------------------------------------------------------------ fixtures


def build_fixtures(root: Path) -> dict[str, Path]:
    import docx
    from reportlab.pdfgen import canvas

    from app.cli import main
    from app.ingest.datasets import import_dataset
    from app.project import SAMPLE_DATASET, Project
    from app.review.service import ReviewService
    from models.vocabulary import Tag
    from storage.db import url_for_path

    files: dict[str, Path] = {}
    empty = root / "empty.assay"
    Project.open(url_for_path(empty)).close()
    files["empty"] = empty

    sample = root / "sample.assay"
    project = Project.open(url_for_path(sample))
    import_dataset(project.sessions, SAMPLE_DATASET)
    project.close()
    files["sample"] = sample

    reviewed = root / "reviewed.assay"
    shutil.copy(sample, reviewed)
    project = Project.open(url_for_path(reviewed))
    service = ReviewService(project, "ana")
    answers = [a.id for a in project.answers()[:3]]
    for answer_id in answers:
        for point in service.open(answer_id).points[:3]:
            service.set_tag(answer_id, point.point.id, Tag.CORRECT)
    project.close()
    files["bundle"] = root / "ana.bundle.json"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--project", str(reviewed), "bundle", "export", str(files["bundle"]), "--reviewer", "ana"]) == 0

    labels = root / "labels.jsonl"
    with labels.open("w", encoding="utf-8") as handle:
        for answer_id in answers:
            record = {
                "answer_id": answer_id,
                "rater": "external",
                "data_points": [{"text": "The agreement is confidential.", "tag": "correct"}],
            }
            handle.write(json.dumps(record) + "\n")
    files["labels"] = labels

    dataset = root / "dataset"
    (dataset / "documents").mkdir(parents=True)
    (dataset / "documents" / "nda.txt").write_text(CONTRACT, encoding="utf-8")
    pdf = canvas.Canvas(str(dataset / "documents" / "nda.pdf"))
    for y, line in enumerate(CONTRACT.splitlines()):
        pdf.drawString(72, 780 - 16 * y, line)
    pdf.save()
    document = docx.Document()
    for line in CONTRACT.splitlines():
        document.add_paragraph(line)
    document.save(str(dataset / "documents" / "nda.docx"))
    rows = [
        {
            "id": f"q{i}-{name}",
            "source": "fuzz",
            "document": name,
            "question": "How long does it last?",
            "answer": "Three years (3.1).",
        }
        for i, name in enumerate(["nda.txt", "nda.pdf", "nda.docx"])
    ]
    (dataset / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with (dataset / "qa.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(list(rows[0]))
    for row in rows:
        sheet.append(list(row.values()))
    book.save(dataset / "qa.xlsx")
    files["dataset"] = dataset
    with contextlib.redirect_stdout(io.StringIO()):  # the undamaged inputs are all accepted
        for qa in ("qa.jsonl", "qa.csv", "qa.xlsx"):
            copy = root / f"check-{qa}.assay"
            shutil.copy(empty, copy)
            assert main(["--project", str(copy), "import", str(dataset / qa)]) == 0, qa
    return files


# ------------------------------------------------------------------ one case


def rows_of(path: Path) -> tuple:
    """Every table's row count and the audit log's last hash: what a refused command must not change."""
    with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        counts = tuple(db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables)
        return counts, db.execute("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1").fetchone()


def run(argv: list[str]) -> tuple[int | None, str, str | None]:
    from app.cli import main

    err = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            status = main(argv)
    except BaseException:  # a traceback is what this run counts
        return None, err.getvalue(), traceback.format_exc()
    return status, err.getvalue(), None


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


class Tally:
    def __init__(self) -> None:
        self.counts: dict[str, Counter] = defaultdict(Counter)
        self.examples: dict[str, list[str]] = defaultdict(list)
        self.slowest = (0.0, "")

    def note(self, kind: str, outcome: str, example: str = "") -> None:
        self.counts[kind][outcome] += 1
        if example and len(self.examples[outcome]) < 5:
            self.examples[outcome].append(f"[{kind}] {example}")

    def refusal(self, kind: str, status, err: str, tb: str | None, named: str, how: str) -> bool:
        """Count the answer; True when it was a refusal."""
        if tb is not None or "Traceback" in err:
            self.note(kind, "traceback", f"{how}: {(tb or err).strip().splitlines()[-1]}")
            return True
        if status == 0:
            self.note(kind, "accepted")
            return False
        lines = err.strip().splitlines()  # progress lines (OCR pages) may come first; the refusal is last
        refusals = [line for line in lines if line.startswith("assay: ")]
        clear = len(refusals) == 1 and lines[-1] == refusals[0] and named in refusals[0]
        self.note(kind, "refused, clear" if clear else "refused, unclear", "" if clear else f"{how}: {err.strip()}")
        return True


def project_case(files, work: Path, rng: random.Random, tally: Tally) -> None:
    target = work / "damaged.assay"
    how, data = damage(files["sample"].read_bytes(), rng)
    target.write_bytes(data)
    before = sha(target)
    backups = work / "backups"
    os.environ["ASSAY_BACKUP_DIR"] = str(backups)
    for command in (["info"], ["backup"]):
        status, err, tb = run(["--project", str(target), *command])
        refused = tally.refusal("project", status, err, tb, target.name, f"{how} → {command[0]}")
        if refused:
            left = sorted(p.name for p in work.iterdir() if p.name not in {target.name, "backups"})
            if sha(target) != before or any(not n.endswith(("-wal", "-shm")) for n in left):
                tally.note("project", "partial write", f"{how} → {command[0]}: {left}")
            made = list(backups.rglob("*")) if backups.exists() else []
            if command == ["backup"] and any(p.is_file() for p in made):
                tally.note("project", "partial write", f"{how} → backup left {made}")
            return
        before = sha(target)  # an accepted open may fold its log back into the file


def import_case(kind: str, files, work: Path, rng: random.Random, tally: Tally) -> None:
    dataset = work / "dataset"
    shutil.copytree(files["dataset"], dataset)
    qa = {"pdf": "qa.jsonl", "docx": "qa.jsonl"}.get(kind, kind)
    victim = dataset / "documents" / f"nda.{kind}" if kind in {"pdf", "docx"} else dataset / qa
    if kind == "qa.jsonl" and rng.random() < 0.4:
        lines = victim.read_text(encoding="utf-8").splitlines()
        i = rng.randrange(len(lines))
        lines[i] = json.dumps(mangle(json.loads(lines[i]), rng))
        how, data = "structure", ("\n".join(lines) + "\n").encode()
    else:
        how, data = damage(victim.read_bytes(), rng)
    victim.write_bytes(data)
    project = work / "project.assay"
    shutil.copy(files["empty"], project)
    before = rows_of(project)
    status, err, tb = run(["--project", str(project), "import", str(dataset / qa)])
    if tally.refusal(kind, status, err, tb, victim.name, how) and rows_of(project) != before:
        tally.note(kind, "partial write", f"{how}: rows changed")


def json_case(kind: str, files, work: Path, rng: random.Random, tally: Tally) -> None:
    source = files[kind]
    victim = work / source.name
    if rng.random() < 0.5:
        if kind == "bundle":
            from app.review.team import _digest

            body = json.loads(source.read_text(encoding="utf-8"))
            body.pop("sha256")
            body = mangle(body, rng)
            if isinstance(body, dict):
                body = {**body, "sha256": _digest(body)}  # resealed: the edit gets past the seal
            data = json.dumps(body).encode()
        else:
            lines = source.read_text(encoding="utf-8").splitlines()
            i = rng.randrange(len(lines))
            lines[i] = json.dumps(mangle(json.loads(lines[i]), rng))
            data = ("\n".join(lines) + "\n").encode()
        how = "structure"
    else:
        how, data = damage(source.read_bytes(), rng)
    victim.write_bytes(data)
    project = work / "project.assay"
    shutil.copy(files["sample"], project)
    before = rows_of(project)
    argv = ["import-labels", str(victim)] if kind == "labels" else ["bundle", "import", str(victim)]
    status, err, tb = run(["--project", str(project), *argv])
    if tally.refusal(kind, status, err, tb, victim.name, how) and rows_of(project) != before:
        tally.note(kind, "partial write", f"{how}: rows changed")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=1150)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    root = Path(tempfile.mkdtemp(prefix="assay-fuzz-"))
    os.environ.setdefault("ASSAY_CONFIG_DIR", str(root / "config"))
    os.environ.pop("ASSAY_PASSPHRASE", None)
    files = build_fixtures(root)
    tally = Tally()
    cases: dict[str, Callable] = {
        "project": lambda w: project_case(files, w, rng, tally),
        **{k: (lambda w, k=k: import_case(k, files, w, rng, tally)) for k in ("qa.jsonl", "qa.csv", "qa.xlsx")},
        **{k: (lambda w, k=k: import_case(k, files, w, rng, tally)) for k in ("pdf", "docx")},
        **{k: (lambda w, k=k: json_case(k, files, w, rng, tally)) for k in ("labels", "bundle")},
    }
    plan = [kind for kind, share in SHARE.items() for _ in range(round(share * args.cases))]
    started = time.perf_counter()
    for number, kind in enumerate(plan):
        work = root / f"case-{number}"
        work.mkdir()
        t0 = time.perf_counter()
        cases[kind](work)
        took = time.perf_counter() - t0
        if took > tally.slowest[0]:
            tally.slowest = (took, kind)
        shutil.rmtree(work, ignore_errors=True)
        if number % 100 == 99:
            print(f"  {number + 1}/{len(plan)} cases, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    total = Counter()
    print(f"{len(plan)} damaged inputs (seed {args.seed}), {time.perf_counter() - started:.0f} s")
    print(f"{'kind':10} " + " ".join(f"{o:>17}" for o in OUTCOMES))
    for kind in SHARE:
        total.update(tally.counts[kind])
        print(f"{kind:10} " + " ".join(f"{tally.counts[kind][o]:>17}" for o in OUTCOMES))
    print(f"{'all':10} " + " ".join(f"{total[o]:>17}" for o in OUTCOMES))
    print(f"slowest case: {tally.slowest[0]:.1f} s ({tally.slowest[1]})")
    for outcome, examples in tally.examples.items():
        print(f"\n{outcome}:")
        for example in examples:
            print(f"  {example[:400]}")
    shutil.rmtree(root, ignore_errors=True)


OUTCOMES = ["accepted", "refused, clear", "refused, unclear", "traceback", "partial write"]

if __name__ == "__main__":
    main()
