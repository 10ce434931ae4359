"""The claim checker on ContractNLI's statements in its own wording and as a lawyer or an LLM answer says
them, side by side on the same NDAs and labels (issue 55's first table, measured here).

    .venv/bin/python bench/wordings.py [--folder contractnli-dev] [--documents N] [--wordings test]

Each answer "Yes. <statement>" of the folder is written again with one of the statement's wordings in
packaging/training/data/nda_wordings.json (`test`: wordings 3-5, never trained or tuned on; `train`: 0-2),
dealt out in turn so that each wording is used as often; labels and evidence spans stay the annotators'.
Both folders are imported into fresh projects and verified as shipped (`assay verify`'s neural verifier),
then scored as ../shared/checks/score_real_errors.py and score_evidence.py count. The shipped models
learnt from both ContractNLI folders (less the sample's two NDAs): the absolute figures are not held out by
document; what this measures is what the wording alone changes.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package

from real_errors import evidence_hits, import_project, score, verify  # noqa: E402

from training.paths import DATA, WORDINGS  # noqa: E402


def reworded(folder: Path, documents: int | None, split: str) -> Path:
    """A copy of a ContractNLI folder (its first `documents` NDAs) with every statement in another wording,
    or in its own (`split` "own")."""
    spec = json.loads(WORDINGS.read_text())
    rows = [json.loads(r) for r in (folder / "qa.jsonl").read_text().splitlines() if r.strip()]
    kept = sorted({r["document"] for r in rows})[:documents]
    truth = {t["id"]: t for t in map(json.loads, (folder / "truth.jsonl").read_text().splitlines())}
    out = Path(tempfile.mkdtemp(prefix=f"wordings-{split}-")) / folder.name
    out.mkdir()
    (out / "documents").symlink_to(folder / "documents")
    (out / "meta.jsonl").symlink_to(folder / "meta.jsonl")
    qa, labels = [], []
    for turn, row in enumerate(r for r in rows if r["document"] in kept):
        statement = row["id"].split("-", 2)[2]  # cnli-0003-nda-5 -> nda-5
        (label,) = {s["label"] for s in truth[row["id"]]["labels"]}
        if split == "own":
            sentence = row["answer"].removeprefix("Yes. ")
        else:
            choices = spec[f"{split}_wordings"]
            sentence = spec["statements"][statement][choices[turn % len(choices)]]
        answer = f"Yes. {sentence}"
        qa.append({**row, "answer": answer})
        labels.append({"id": row["id"], "labels": [{"start": 5, "end": len(answer), "text": sentence, "label": label}]})
    (out / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    (out / "truth.jsonl").write_text("".join(json.dumps(t) + "\n" for t in labels))
    return out


def figures(folder: Path) -> tuple[dict, str, float]:
    """The shipped verifier's figures and evidence hit rate on a folder, and the seconds it took."""
    project, ids = import_project(folder, None)
    started = time.perf_counter()
    found = verify(project, ids, None, False, neural=True)
    seconds = time.perf_counter() - started
    return score(folder, found), evidence_hits(folder, project, found), seconds


def row(name: str, f: dict, evidence: str, seconds: float, answers: int) -> str:
    kinds = f["by_label"]
    counts = ", ".join(f"{k} flagged {kinds[k][0]} of {kinds[k][1]}" for k in sorted(kinds))
    precision = f["supported_precision"]
    confirmed = f"correct confirmed {f['supported_n']} (precision {precision:.2f})" if precision is not None else ""
    return (
        f"{name}: {counts}; {confirmed}; contradicted F1 {f['contradicted_f1']:.2f}; evidence first: {evidence};"
        f" {seconds / answers:.2f} s an answer"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", default="contractnli-dev")
    parser.add_argument("--documents", type=int, help="the first N NDAs (by file name)")
    parser.add_argument("--wordings", choices=("test", "train"), default="test")
    args = parser.parse_args()
    for split in ("own", args.wordings):
        folder = reworded(DATA / args.folder, args.documents, split)
        answers = len((folder / "qa.jsonl").read_text().splitlines())
        f, evidence, seconds = figures(folder)
        name = "ContractNLI's own wording" if split == "own" else f"{split} wordings (a lawyer's)"
        print(row(f"{args.folder} {name}, {answers} statements", f, evidence, seconds, answers), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
