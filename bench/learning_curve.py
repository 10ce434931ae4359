"""The claim checker learning from a firm's reviews: a learning curve on ContractNLI's NDAs, in its own
wording and in a lawyer's (issue 64, item 5).

    .venv/bin/python bench/learning_curve.py [--folder contractnli-dev] [--documents 40]
        [--points 25,50,100,200,400] [--repeats 3] [--wordings own,test]

A firm is simulated: the labels of some of its documents (drawn at random, whole documents, until N points)
are its reviews; the checker is fitted on them as `assay checker fit` fits it (models/checker/learning.py),
the never-worse test decides whether it is adopted (models/checker/adoption.py), and both it and the
shipped checker are measured on the firm's other documents: contradicted F1 (flags on contradicted vs
supported statements), never-made recall (unsupported statements flagged), false alarms (supported
statements flagged), as ../shared/checks/score_real_errors.py counts them. "speaks" is what the firm
gets: the fitted checker where adopted, else the shipped one. Wordings as bench/wordings.py deals them
(`test`: wordings 3-5 of packaging/training/data/nda_wordings.json, never trained or tuned on).

The shipped engine runs once over the folder (what it computes of each point is cached under
/tmp/assay-learning-curve); fits are seconds. The shipped models learnt from both ContractNLI folders:
on them its figures in ContractNLI's own wording are not held out, so the firm's gain there is understated.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "packaging"))

from real_errors import import_project  # noqa: E402
from wordings import reworded  # noqa: E402

from training.paths import DATA  # noqa: E402

CACHE = Path("/tmp/assay-learning-curve")


def observed(folder: Path, documents: int | None, split: str) -> tuple[list, list[bool], list[str], float]:
    """What the shipped engine computed of each statement of the folder (its first `documents` NDAs) in a
    wording, the tags, the annotators' labels, and the seconds the engine took (cached)."""
    from app.judging.learning import observe
    from app.judging.verification import Verifier
    from app.project import Project
    from models.checker.learning import Observation
    from storage.db import url_for_path

    cache = CACHE / f"{folder.name}-{documents}-{split}.json"
    if cache.exists():
        data = json.loads(cache.read_text())
        points = [
            Observation(**{**o, "meaning": tuple(o["meaning"]), "vector": tuple(o["vector"]) if o["vector"] else None})
            for o in data["points"]
        ]
        return points, data["labels"], data["kinds"], data["seconds"]
    copy = reworded(folder, documents, split)
    truth = {t["id"]: t["labels"] for t in map(json.loads, (copy / "truth.jsonl").read_text().splitlines())}
    rows = [json.loads(r) for r in (copy / "qa.jsonl").read_text().splitlines() if r.strip()]
    tagged = {}
    for r in rows:
        (span,) = truth[r["id"]]
        tagged[r["id"]] = [(span["start"], span["end"], span["label"] != "supported", r["document"], 0)]
    project_file, _ = import_project(copy, None)
    project = Project.open(url_for_path(project_file))
    started = time.perf_counter()
    verifier = Verifier(project.sessions, learned=False)
    points, labels, answers = observe(verifier, tagged)
    seconds = time.perf_counter() - started
    kinds = [truth[a][0]["label"] for a in answers]
    project.close()
    CACHE.mkdir(exist_ok=True)
    cache.write_text(
        json.dumps({"points": [asdict(o) for o in points], "labels": labels, "kinds": kinds, "seconds": seconds})
    )
    return points, labels, kinds, seconds


def figures(verdicts: list[str], kinds: list[str]) -> dict[str, float]:
    flagged = np.array([v == "incorrect" for v in verdicts])
    k = np.array(kinds)
    fc, nc = int((flagged & (k == "contradicted")).sum()), int((k == "contradicted").sum())
    fs, ns = int((flagged & (k == "supported")).sum()), int((k == "supported").sum())
    fu, nu = int((flagged & (k == "unsupported")).sum()), int((k == "unsupported").sum())
    precision = fc / (fc + fs) if fc + fs else 0.0
    recall = fc / nc if nc else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"contradicted_f1": f1, "never_made_recall": fu / nu if nu else 0.0, "false_alarms": fs / ns if ns else 0.0}


def curve(points: list, labels: list[bool], kinds: list[str], sizes: list[int], repeats: int) -> list[dict]:
    from models.checker.adoption import standing
    from models.checker.learning import CheckerHead

    documents = sorted({o.document for o in points})
    rows = []
    for size in sizes:
        for seed in range(repeats):
            order = np.random.default_rng(seed).permutation(len(documents))
            train: list[int] = []
            used = set()
            for j in order:
                if len(train) >= size:
                    break
                mine = [i for i, o in enumerate(points) if o.document == documents[j]]
                train += mine[: size - len(train)]
                used.add(documents[j])
            test = [i for i, o in enumerate(points) if o.document not in used]
            if len(test) < 50:
                continue
            started = time.perf_counter()
            tp, tl = [points[i] for i in train], [labels[i] for i in train]
            result = standing(tp, tl)
            fitted = None
            if sum(tl) and not all(tl):
                fitted = CheckerHead().fit(tp, tl).predict([points[i] for i in test])
            seconds = time.perf_counter() - started
            shipped = [points[i].shipped for i in test]
            test_kinds = [kinds[i] for i in test]
            rows.append(
                {
                    "points": len(train),
                    "documents": len(used),
                    "seed": seed,
                    "adopted": result.adopted,
                    "p": result.p_mcnemar,
                    "shipped": figures(shipped, test_kinds),
                    "fitted": figures(fitted, test_kinds) if fitted else None,
                    "speaks": figures(fitted if result.adopted and fitted else shipped, test_kinds),
                    "test_points": len(test),
                    "fit_seconds": seconds,
                }
            )
    return rows


def _means(rows: list[dict], which: str) -> str:
    got = [r[which] for r in rows if r[which]]
    if not got:
        return "—"
    keys = ("contradicted_f1", "never_made_recall", "false_alarms")
    return " / ".join(f"{np.mean([g[k] for g in got]):.2f}" for k in keys)


def table(name: str, rows: list[dict]) -> None:
    print(f"\n{name}")
    print("| points | docs | adopted | shipped (cF1 / never-made recall / FA) | fitted | speaks | fit s |")
    print("|---|---|---|---|---|---|---|")
    for size in sorted({r["points"] for r in rows}):
        mine = [r for r in rows if r["points"] == size]
        adopted = f"{sum(r['adopted'] for r in mine)} of {len(mine)}"
        docs, secs = np.mean([r["documents"] for r in mine]), np.mean([r["fit_seconds"] for r in mine])
        shipped, fitted, speaks = (_means(mine, w) for w in ("shipped", "fitted", "speaks"))
        print(f"| {size} | {docs:.0f} | {adopted} | {shipped} | {fitted} | {speaks} | {secs:.1f} |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="contractnli-dev")
    parser.add_argument("--documents", type=int, default=40, help="the first N NDAs (by file name)")
    parser.add_argument("--points", default="25,50,100,200,400")
    parser.add_argument("--repeats", type=int, default=3, help="firms drawn (seeds) for each size")
    parser.add_argument("--wordings", default="own,test")
    args = parser.parse_args()
    sizes = [int(s) for s in args.points.split(",")]
    started = time.perf_counter()
    for split in args.wordings.split(","):
        points, labels, kinds, seconds = observed(DATA / args.folder, args.documents, split)
        name = "ContractNLI's own wording" if split == "own" else f"{split} wordings (a lawyer's)"
        print(
            f"{args.folder}, first {args.documents} NDAs, {name}: {len(points)} statements; the shipped engine "
            f"{seconds:.0f} s ({seconds / max(len(points), 1):.2f} s a statement)",
            flush=True,
        )
        table(name, curve(points, labels, kinds, sizes, args.repeats))
    print(f"\n{time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
