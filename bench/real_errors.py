"""Every rater measured on human-marked real errors (../shared/datasets/real_errors), the way the issues
and ../shared/checks/score_real_errors.py score them, beside the flag-everything floor and published
figures.

    .venv/bin/python bench/real_errors.py [--folders contractnli-dev,ragtruth-dev,...]
        [--raters rules,verifier,judge] [--judge-answers 8] [--limit N]

Each folder is imported into a fresh project, as a user would, and each rater run through Assay:
- `rules`: the verifier's rules alone, as shipped before the claim checker (the old figure);
- `verifier`: the verifier with the claim checker, held out: for each folder the checker is trained
  here, by packaging/training/train_claim_checker.py's code, without that folder's documents (RAGTruth: by
  halves of its sources, each half checked by a model trained on the other half and the contracts);
- `neural`: the verifier as shipped with its neural encoders (evidence by meaning, re-read by the
  cross-encoder; on contracts, the contract checker that reads what the exemplar memory and the
  cross-encoder say), with the evidence hit rate on ContractNLI beside the others'. All of them learnt
  from the ContractNLI folders: their held-out figures are the ones packaging/training/train_evidence_ranker.py
  and packaging/training/train_contract_checker.py print;
- `judge`: the embedded judge (`assay judge`, SmolLM2-135M on this CPU) on `--judge-answers` answers
  drawn with a fixed seed (it takes seconds an answer).
One line per rater and folder: `real errors <folder> <rater>: F1 0.NN ...`.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package
from training.paths import DATA  # noqa: E402

ASSAY = str(Path(sys.executable).parent / "assay")
# Answer-level F1 published on RAGTruth's test split (notes/detector_anchors.md) and ContractNLI's
# F1 on contradicted statements (Koreeda & Manning 2021).
PUBLISHED = {
    "ragtruth": "published QA/summary F1: GPT-4 prompted 0.456/0.476, SelfCheckGPT 0.437/0.401, "
    "fine-tuned Llama-2-13B 0.682/0.591, LettuceDetect-large 0.702/0.597",
    "contractnli": "published F1 on contradicted statements: BERT-large 0.357, DeBERTa-xlarge 0.405",
}


def score(folder: Path, points: dict[str, list[dict]], only: set[str] | None = None) -> dict:
    """The figures of ../shared/checks/score_real_errors.py, from (answer id -> points with start, end,
    verdict), over the answers in `only` (all by default); QA and summaries apart where both are."""
    rows = [json.loads(line) for line in (folder / "qa.jsonl").read_text().splitlines() if line.strip()]
    truth = {t["id"]: t["labels"] for t in map(json.loads, (folder / "truth.jsonl").read_text().splitlines())}
    labelled = any(s["label"] == "supported" for spans in truth.values() for s in spans)
    by_part: dict[str, Counter] = {}
    span_hit, span_total, support = Counter(), Counter(), Counter()
    kinds: dict[str, list[int]] = {}
    for r in rows:
        if r["id"] not in points or (only is not None and r["id"] not in only):
            continue
        errors = [(s["start"], s["end"], s["label"]) for s in truth[r["id"]] if s["label"] != "supported"]
        spans = [(s["start"], s["end"]) for s in truth[r["id"]]]
        ps = points[r["id"]]
        flagged = [(p["start"], p["end"]) for p in ps if p["verdict"] == "incorrect"]
        for p in ps:
            if p["verdict"] == "supported" and (
                not labelled or any(_overlaps((p["start"], p["end"]), s) for s in spans)
            ):
                wrong = any(_overlaps((p["start"], p["end"]), e[:2]) for e in errors)
                support["wrong" if wrong else "right"] += 1
        for s, e, lab in errors:
            span_total[lab] += 1
            span_hit[lab] += any(_overlaps((s, e), f) for f in flagged)
        part = "qa" if r["id"].startswith("rt-qa") else "summary" if r["id"].startswith("rt-") else "all"
        by_part.setdefault(part, Counter())[(bool(errors), bool(flagged))] += 1
        kind = errors[0][2] if errors else "supported"
        got = kinds.setdefault(kind, [0, 0])
        got[0] += bool(flagged)
        got[1] += 1
    out: dict = {"parts": {part: _answer_figures(c) for part, c in by_part.items()}}
    n_sup = support["right"] + support["wrong"]
    out["supported_precision"] = support["right"] / n_sup if n_sup else None
    out["supported_n"] = n_sup
    out["span_recall"] = {k: span_hit[k] / v for k, v in span_total.items()}
    out["by_label"] = kinds
    if "contradicted" in kinds:
        fc, nc = kinds["contradicted"]
        fs, ns = kinds.get("supported", [0, 0])
        out["contradicted_f1"] = _f1(fc, fs, nc - fc)
        fu, nu = kinds.get("unsupported", [0, 0])
        out["unsupported_recall"] = fu / nu if nu else None
        out["supported_flagged"] = fs / ns if ns else None
    return out


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _f1(tp: int, fp: int, fn: int) -> float:
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def _answer_figures(c: Counter) -> dict:
    tp, fp, fn, tn = c[(True, True)], c[(False, True)], c[(True, False)], c[(False, False)]
    return {
        "answers": tp + fp + fn + tn,
        "with_error": tp + fn,
        "precision": tp / (tp + fp) if tp + fp else 0.0,
        "recall": tp / (tp + fn) if tp + fn else 0.0,
        "f1": _f1(tp, fp, fn),
        "false_alarms": fp / (fp + tn) if fp + tn else None,
        "floor_f1": _f1(tp + fn, fp + tn, 0),
    }


def line(folder: str, rater: str, figures: dict, seconds: float) -> str:
    parts = []
    for part, f in figures["parts"].items():
        name = "" if part == "all" else f"{part} "
        alarms = "—" if f["false_alarms"] is None else f"{f['false_alarms']:.2f}"
        parts.append(
            f"{name}F1 {f['f1']:.2f} (P {f['precision']:.2f} R {f['recall']:.2f}, false alarms on clean "
            f"{alarms}, flag-everything {f['floor_f1']:.2f}; {f['answers']} answers, {f['with_error']} with errors)"
        )
    extra = []
    if "contradicted_f1" in figures:
        extra.append(f"contradicted-vs-supported F1 {figures['contradicted_f1']:.2f}")
        if figures["unsupported_recall"] is not None:
            extra.append(f"never-made recall {figures['unsupported_recall']:.2f}")
        extra.append(f"supported flagged {figures['supported_flagged']:.2f}")
    sp = figures["supported_precision"]
    extra.append(
        f"'supported' right {sp:.2f} of {figures['supported_n']}" if sp is not None else "'supported' never said"
    )
    extra.append("span recall " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(figures["span_recall"].items())))
    return f"real errors {folder} {rater}: " + "; ".join(parts) + "; " + "; ".join(extra) + f"; {seconds:.1f} s"


def import_project(folder: Path, limit: int | None) -> tuple[Path, list[str]]:
    """A fresh project with the folder (its first `limit` answers) imported through `assay import`."""
    work = Path(tempfile.mkdtemp(prefix="real-errors-"))
    source = folder
    rows = (folder / "qa.jsonl").read_text().splitlines()
    if limit:
        source = work / folder.name
        (source).mkdir()
        (source / "documents").symlink_to(folder / "documents")
        (source / "qa.jsonl").write_text("\n".join(rows[:limit]) + "\n")
    project = work / "p.assay"
    subprocess.run([ASSAY, "--project", str(project), "import", str(source)], check=True, capture_output=True)
    ids = [json.loads(r)["id"] for r in rows[: limit or None] if r.strip()]
    return project, ids


def run_probe(folder: Path) -> tuple[Counter, dict[str, list[int]]]:
    """A probe's folder (qa, truth, meta with a label for each answer) checked by the shipped engine in a fresh
    project: its labels counted, and what was flagged of each label (flagged, of)."""
    labels = Counter(json.loads(line)["label"] for line in (folder / "meta.jsonl").read_text().splitlines())
    project, ids = import_project(folder, None)
    return labels, score(folder, verify(project, ids, None, False, neural=True))["by_label"]


def held_out_checkers(data: dict, folder: str) -> list[tuple[object, set[str] | None]]:
    """(checker, answers it checks) with checkers trained without those answers' documents."""
    from models.checker import ClaimChecker
    from training import train_claim_checker as training

    def as_checker(trained: dict) -> ClaimChecker:
        return ClaimChecker(training.serialise(trained, []))

    ct, cd, rt = data["contractnli-train"], data["contractnli-dev"], data["ragtruth-dev"]
    if folder == "contractnli-dev":
        return [(as_checker(training.trained(training.concat([ct, rt], "t"))), None)]
    if folder == "contractnli-train":
        return [(as_checker(training.trained(training.concat([cd, rt], "t"))), None)]
    sources = sorted(set(rt.groups))
    half = np.array([sources.index(g) % 2 for g in rt.groups])
    qa = [json.loads(r) for r in (DATA / folder / "qa.jsonl").read_text().splitlines() if r.strip()]
    out = []
    for f in (0, 1):
        checker = as_checker(training.trained(training.concat([ct, cd, rt.subset(half != f)], "t")))
        out.append((checker, {r["id"] for r in qa if sources.index(r["document"]) % 2 == f}))
    return out


def verify(
    project_file: Path, ids: list[str], checker, rules_only: bool, definitions: bool = True, neural: bool = False
) -> dict[str, list[dict]]:
    from app.judging.verification import Verifier, verify_project
    from app.project import Project
    from storage.db import url_for_path

    project = Project.open(url_for_path(project_file))
    verifier = Verifier(project.sessions, checker, rules_only=rules_only, definitions=definitions, neural=neural)
    assert not neural or verifier.engine.encoders is not None, verifier.engine.note
    reports = verify_project(project.sessions, ids, save=False, verifier=verifier)
    return {r.answer_id: [p.as_dict() for p in r.points] for r in reports}


def evidence_hits(folder: Path, project_file: Path, found: dict[str, list[dict]]) -> str:
    """ContractNLI: the share of entailed and contradicted statements whose first passage shown overlaps
    an annotator's evidence span (meta.jsonl), as ../shared/checks/score_evidence.py counts it."""
    import sqlite3

    meta = {m["id"]: m for m in map(json.loads, (folder / "meta.jsonl").read_text().splitlines())}
    doc_of = {r["id"]: r["document"] for r in map(json.loads, (folder / "qa.jsonl").read_text().splitlines())}
    db = sqlite3.connect(project_file)
    ranges = {
        (doc, cid): (s, e)
        for doc, cid, s, e in db.execute(
            "select d.name, p.citation_id, p.char_start, p.char_end"
            " from passages p join documents d on d.id = p.document_id"
        )
    }
    db.close()
    hits: dict[str, list[bool]] = {"Entailment": [], "Contradiction": []}
    for answer_id, points in found.items():
        m = meta.get(answer_id)
        if not m or m["nli_label"] not in hits or not m["evidence"]:
            continue
        shown = [p["passage"] for p in points if p.get("passage")]
        span = ranges.get((doc_of[answer_id], shown[0])) if shown else None
        hits[m["nli_label"]].append(
            span is not None and any(span[0] < ev["end"] and ev["start"] < span[1] for ev in m["evidence"])
        )
    return ", ".join(
        f"{name} {np.mean(h):.2f} of {len(h)}"
        for name, h in (("entailed", hits["Entailment"]), ("contradicted", hits["Contradiction"]))
        if h
    )


def judge(project_file: Path, ids: list[str], n: int) -> tuple[dict[str, list[dict]], list[str]]:
    """The embedded judge on n answers drawn with a fixed seed, through `assay judge`; its points."""
    chosen = sorted(random.Random(7).sample(ids, min(n, len(ids))))
    subprocess.run(
        [ASSAY, "--project", str(project_file), "judge", "--answers", ",".join(chosen)], check=True, capture_output=True
    )
    out = project_file.with_suffix(".jsonl")
    subprocess.run([ASSAY, "--project", str(project_file), "export", "--format", "jsonl", str(out)], check=True)
    points: dict[str, list[dict]] = {a: [] for a in chosen}
    for record in map(json.loads, out.read_text().splitlines()):
        if record["rater"].startswith("judge:") and record["answer_id"] in points:
            for p in record["data_points"]:
                if p.get("span"):
                    verdict = "incorrect" if p["tag"] == "incorrect" else "other"
                    points[record["answer_id"]].append({"start": p["span"][0], "end": p["span"][1], "verdict": verdict})
    return points, chosen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", default="contractnli-dev,ragtruth-dev,contractnli-train")
    parser.add_argument("--raters", default="rules,verifier,neural,judge")
    parser.add_argument("--judge-answers", type=int, default=8)
    parser.add_argument("--limit", type=int, help="the first N answers of each folder")
    parser.add_argument(
        "--without-definitions", action="store_true", help="the checker reads claims without defined terms"
    )
    args = parser.parse_args()
    raters = args.raters.split(",")
    data = None
    if "verifier" in raters:
        from training import train_claim_checker as training

        started = time.perf_counter()
        data = training.load_all(DATA, definitions=not args.without_definitions)
        print(f"features of all labelled points: {time.perf_counter() - started:.1f} s", flush=True)
    for name in args.folders.split(","):
        folder = DATA / name
        started = time.perf_counter()
        project, ids = import_project(folder, args.limit)
        print(f"{name}: {len(ids)} answers imported in {time.perf_counter() - started:.1f} s", flush=True)
        print(PUBLISHED["contractnli" if name.startswith("contractnli") else "ragtruth"])
        if "rules" in raters:
            started = time.perf_counter()
            found = verify(project, ids, None, rules_only=True)
            print(line(name, "verifier-rules-only", score(folder, found), time.perf_counter() - started), flush=True)
            if name.startswith("contractnli"):
                print(f"  evidence hit rate (first passage shown): {evidence_hits(folder, project, found)}")
        checked: dict[str, list[dict]] = {}
        if "verifier" in raters:
            started = time.perf_counter()
            checkers = held_out_checkers(data, name)
            trained_in = time.perf_counter() - started
            started = time.perf_counter()
            for checker, mine in checkers:
                mine_only = [a for a in ids if mine is None or a in mine]
                checked.update(verify(project, mine_only, checker, False, not args.without_definitions))
            seconds = time.perf_counter() - started
            label = "verifier+checker(held-out" + (", no definitions)" if args.without_definitions else ")")
            print(
                line(name, label, score(folder, checked), seconds) + f" (checkers trained in {trained_in:.0f} s)",
                flush=True,
            )
            if name.startswith("contractnli"):
                print(f"  evidence hit rate (first passage shown): {evidence_hits(folder, project, checked)}")
        if "neural" in raters:  # the shipped neural verifier: evidence by meaning, the contract checker
            started = time.perf_counter()
            found = verify(project, ids, None, False, neural=True)
            seconds = time.perf_counter() - started
            note = {
                "contractnli-dev": "its memory and contract checker learnt from this folder: not a held-out figure",
                "contractnli-train": "its memory and contract checker learnt from this folder: not a held-out figure",
            }.get(name, "other texts: the lexical checker, passages by meaning")
            print(line(name, f"verifier+neural({note})", score(folder, found), seconds), flush=True)
            if name.startswith("contractnli"):
                print(f"  evidence hit rate (first passage shown): {evidence_hits(folder, project, found)}")
        if "judge" in raters:
            started = time.perf_counter()
            found, chosen = judge(project, ids, args.judge_answers)
            print(
                line(
                    name, f"judge-embedded({len(chosen)} answers)", score(folder, found), time.perf_counter() - started
                ),
                flush=True,
            )
            if checked:  # the same answers, for comparison
                same = score(folder, checked, set(chosen))
                print(line(name, f"verifier+checker(same {len(chosen)} answers)", same, 0.0), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
