"""CUAD v1's contracts as passages labelled with the kinds of clause CUAD's experts marked in them, read as
Assay reads a contract (training/claim_data.evidence_passages: the passages shown as evidence), each with
its vector from the shipped bi-encoder; for train_clause_kinds.py. The contracts are those that
training/cuad_claims.py kept (none overlapping the measured documents, no second copy), checked once more
with ../shared/checks/held_out_overlap.py before anything is read.

    PYTHONPATH=packaging .venv/bin/python -m training.clause_kind_data --git-dir DIR --claims build/cuad-claims
        --out build/clause-kinds/passages.npz
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import time
from pathlib import Path

import numpy as np

from .cuad_claims import COMMIT, CSV_PATH, Finder, _git
from .paths import overlapping

# CUAD's categories that name a value, not a kind of clause: read by the values reader, not here
VALUES = frozenset(
    {
        "Document Name",
        "Parties",
        "Agreement Date",
        "Effective Date",
        "Expiration Date",
        "Renewal Term",
        "Notice Period To Terminate Renewal",
        "Governing Law",
    }
)


def clause_categories(header: list[str]) -> list[str]:
    """master_clauses.csv's 33 kinds of clause, in its order."""
    return [c for c in header if f"{c}-Answer" in header and c not in VALUES and c != "Filename"]


def read_rows(git_dir: Path) -> tuple[list[str], list[dict[str, str]]]:
    table = csv.DictReader(io.StringIO(_git(git_dir, "show", f"{COMMIT}:{CSV_PATH}").decode("utf-8")))
    rows = list(table)
    return clause_categories(list(table.fieldnames or [])), rows


def main() -> int:
    from .claim_data import evidence_passages

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, required=True)
    parser.add_argument("--claims", type=Path, required=True, help="the folder training/cuad_claims.py wrote")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if overlapping(args.claims / "documents"):
        raise SystemExit("refusing: a document overlaps the measured ones")
    categories, rows = read_rows(args.git_dir)
    rows_of = {
        d["document"]: rows[d["cuad_row"]]
        for d in map(json.loads, (args.claims / "documents.jsonl").read_text().splitlines())
    }
    passages = evidence_passages(args.claims)
    names, ids, texts, labels = [], [], [], []
    found = missing = 0
    for name, doc in sorted(passages.items()):
        text = (args.claims / "documents" / name).read_text(encoding="utf-8")
        finder, row = Finder(text), rows_of[name]
        marked = np.zeros((len(doc.ids), len(categories)), dtype=np.uint8)
        for k, category in enumerate(categories):
            for clause in ast.literal_eval(row[category]):
                spans = finder.locate(clause)
                found, missing = found + bool(spans), missing + (not spans)
                for a, b in spans or []:
                    for i, (s, e) in enumerate(doc.spans):
                        if s < b and a < e:
                            marked[i, k] = 1
        names += [name] * len(doc.ids)
        ids += doc.ids
        texts += doc.texts
        labels.append(marked)
    print(f"{len(passages)} contracts, {len(texts)} passages; expert clauses found {found}, not found {missing}")
    from models.checker.encoder import Encoders

    encoders, started = Encoders.reading(), time.monotonic()
    vectors = np.concatenate([encoders.embed(texts[i : i + 512]) for i in range(0, len(texts), 512)])
    print(f"embedded in {time.monotonic() - started:.0f} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        args.out,
        documents=np.array(names),
        ids=np.array(ids),
        vectors=vectors.astype(np.float32),
        labels=np.concatenate(labels),
        categories=np.array(categories),
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
