"""The shipped verifier on claims about commercial contracts: CUAD v1's expert clause labels, as
packaging/training/cuad_claims.py words them (issue 55: the checker beyond NDAs).

    .venv/bin/python bench/cuad_claims.py [--contracts 20] [--folder build/cuad-claims] [--git-dir DIR]

Builds the folder from CUAD (`--git-dir`, the bare git dir `fetch` gives for
maastrichtlawtech/law3027-advanced-legal-analytics) or reads one built before (`--folder`), keeps its first
`--contracts` contracts, imports them into a fresh project and verifies them as shipped (`assay verify`'s
neural verifier), scored as bench/real_errors.py scores them. Printed beside flag-everything (and, for the
"supported" precision, beside confirming everything): contradicted recall (synthetic wrong governing law),
never-made recall (a kind of clause the experts found absent), the share of supported claims flagged, the
precision of "supported" and how many present clauses it confirms, and how often the first passage it shows
overlaps the experts' clause (beside a passage drawn at random); then the same by kind of clause.
None of the shipped models learnt from CUAD: every figure here is held out by contract and by wording.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package

from real_errors import evidence_hits, import_project, score, verify  # noqa: E402

from training import cuad_claims  # noqa: E402

MIRROR = ROOT.parent / ".mirror" / "maastrichtlawtech+law3027-advanced-legal-analytics" / "repo"


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def first_contracts(folder: Path, contracts: int) -> Path:
    """A copy of the folder's claims about its first `contracts` documents (by name), sharing its documents."""
    rows = _jsonl(folder / "qa.jsonl")
    kept = set(sorted({r["document"] for r in rows})[:contracts])
    out = Path(tempfile.mkdtemp(prefix="cuad-claims-")) / folder.name
    out.mkdir()
    (out / "documents").symlink_to((folder / "documents").resolve())
    ids = {r["id"] for r in rows if r["document"] in kept}
    for name in ("qa.jsonl", "truth.jsonl", "meta.jsonl"):
        chosen = [r for r in _jsonl(folder / name) if r["id"] in ids]
        (out / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chosen), encoding="utf-8")
    return out


def random_passage_hits(folder: Path, project: Path, ids: set[str]) -> float:
    """The share of present clauses a passage drawn at random from the contract would hit: the floor for
    the evidence hit rate."""
    meta = [m for m in _jsonl(folder / "meta.jsonl") if m["id"] in ids and m["label"] == "supported"]
    db = sqlite3.connect(project)
    spans: dict[str, list[tuple[int, int]]] = {}
    for name, start, end in db.execute(
        "select d.name, p.char_start, p.char_end from passages p join documents d on d.id = p.document_id"
    ):
        spans.setdefault(name, []).append((start, end))
    db.close()
    shares = []
    for m in meta:
        passages = spans[m["document"]]
        hit = sum(any(a < ev["end"] and ev["start"] < b for ev in m["evidence"]) for a, b in passages)
        shares.append(hit / len(passages))
    return sum(shares) / len(shares) if shares else 0.0


def figures(folder: Path, project: Path, found: dict[str, list[dict]], ids: set[str]) -> str:
    """One line of figures over the answers `ids`, each beside flag-everything."""
    mine = {a: p for a, p in found.items() if a in ids}
    f = score(folder, mine)
    kinds = f["by_label"]
    parts = []
    if "contradicted" in kinds:
        flagged, n = kinds["contradicted"]
        parts.append(f"contradicted recall {flagged / n:.2f} of {n} (flag-everything 1.00)")
    if "unsupported" in kinds:
        flagged, n = kinds["unsupported"]
        parts.append(f"never-made recall {flagged / n:.2f} of {n} (flag-everything 1.00)")
    if "supported" in kinds:
        flagged, n = kinds["supported"]
        parts.append(f"supported flagged {flagged / n:.2f} of {n} (flag-everything 1.00)")
    truth = {t["id"]: t["labels"][0]["label"] for t in _jsonl(folder / "truth.jsonl") if t["id"] in ids}
    confirmed = sum(
        any(p["verdict"] == "supported" for p in mine.get(a, [])) for a, label in truth.items() if label == "supported"
    )
    present = sum(label == "supported" for label in truth.values())
    share = present / len(truth) if truth else 0.0
    precision = "—" if f["supported_precision"] is None else f"{f['supported_precision']:.2f}"
    parts.append(
        f"'supported' precision {precision} of {f['supported_n']} (confirm-everything {share:.2f}), confirms"
        f" {confirmed} of {present} present clauses (flag-everything 0)"
    )
    hits = evidence_hits(folder, project, mine)
    floor = random_passage_hits(folder, project, ids)
    parts.append(f"evidence first: {hits or '—'} (a random passage {floor:.2f}, flag-everything none)")
    return "; ".join(parts)


def kind_line(folder: Path, project: Path, found: dict[str, list[dict]], ids: set[str]) -> str:
    """The figures of one kind of clause, short: present clauses, absent ones, wrong claims."""
    mine = {a: p for a, p in found.items() if a in ids}
    truth = {t["id"]: t["labels"][0]["label"] for t in _jsonl(folder / "truth.jsonl") if t["id"] in ids}
    parts = []
    for label, name in (("supported", "present"), ("unsupported", "absent"), ("contradicted", "wrong")):
        answers = [a for a, got in truth.items() if got == label]
        if not answers:
            continue
        flagged = sum(any(p["verdict"] == "incorrect" for p in mine.get(a, [])) for a in answers)
        text = f"{name} {len(answers)}: flagged {flagged / len(answers):.2f}"
        if label == "supported":
            confirmed = sum(any(p["verdict"] == "supported" for p in mine.get(a, [])) for a in answers)
            hits = evidence_hits(folder, project, {a: mine.get(a, []) for a in answers}).split(" of ")[0]
            floor = random_passage_hits(folder, project, set(answers))
            text += f", confirmed {confirmed}, evidence first {hits.removeprefix('entailed ') or '—'}"
            text += f" (random {floor:.2f})"
        parts.append(text)
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--contracts", type=int, default=20, help="the first N contracts (default 20)")
    parser.add_argument("--folder", type=Path, help="a folder training/cuad_claims.py built (else it is built)")
    parser.add_argument("--git-dir", type=Path, default=MIRROR, help="the bare git dir holding CUAD v1")
    args = parser.parse_args()
    if args.folder is None:
        started = time.perf_counter()
        args.folder = Path(tempfile.mkdtemp(prefix="cuad-build-")) / "cuad-claims"
        contracts = cuad_claims.read_cuad(args.git_dir)
        print(cuad_claims.write_folder(contracts, args.folder, args.contracts))
        print(f"built in {time.perf_counter() - started:.0f} s", flush=True)
    folder = first_contracts(args.folder, args.contracts)
    meta = _jsonl(folder / "meta.jsonl")
    started = time.perf_counter()
    project, ids = import_project(folder, None)
    print(f"{len(ids)} claims about {args.contracts} contracts imported in {time.perf_counter() - started:.0f} s")
    started = time.perf_counter()
    found = verify(project, ids, None, False, neural=True)
    seconds = time.perf_counter() - started
    print(f"verified in {seconds:.0f} s ({seconds / len(ids):.2f} s a claim)")
    print("all kinds: " + figures(folder, project, found, set(ids)))
    for half, wordings in (("wordings 0-2", cuad_claims.TRAIN_WORDINGS), ("wordings 3-5", cuad_claims.TEST_WORDINGS)):
        print(f"{half}: " + figures(folder, project, found, {m["id"] for m in meta if m["wording"] in wordings}))
    truth = {t["id"]: t["labels"][0] for t in _jsonl(folder / "truth.jsonl")}
    for label in cuad_claims.NLI:  # the verdict of each claim's own point ("Yes." is a point apart)
        verdicts = Counter(
            p["verdict"]
            for a, points in found.items()
            for p in points
            if truth[a]["label"] == label and p["start"] < truth[a]["end"] and truth[a]["start"] < p["end"]
        )
        print(f"verdicts on {label} claims: " + ", ".join(f"{v} {n}" for v, n in verdicts.most_common()))
    print("by kind of clause:")
    for kind in cuad_claims.KINDS:
        chosen = {m["id"] for m in meta if m["kind"] == kind.key}
        if chosen:
            print(f"  {kind.key}: " + kind_line(folder, project, found, chosen))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
