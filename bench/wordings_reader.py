"""A cross-encoder as the reader of claims no exemplar knows, measured held out by document, wording and
kind of statement, beside the shipped cross-encoder on the same pairs.

    .venv/bin/python bench/wordings_reader.py READER.int8.onnx [--documents N] [--read 4]

On contractnli-dev's NDAs (packaging/training/train_reworded.py learns from contractnli-train only), each
statement in the wordings that may be learnt (0-2: the thresholds are chosen there) and in those kept for
measuring (3-5: the figures), the shipped ranker finds the passages with its exemplars out of play (as
for any claim they do not know), the reader reads the first `--read`, and its most likely "stated" passage
is shown. Verdicts: "contradicted" where its highest contradicted probability passes a threshold, "never
made" where no passage reaches a "stated" threshold, "supported" where its highest supported probability
passes one; each threshold chosen on wordings 0-2 (at most 10 % of entailed statements flagged, "supported"
right 96 % of the time). Figures are split into the kinds the reader learnt and those it never saw.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package

from models.checker.encoder import Encoders  # noqa: E402
from models.checker.ranking import Memory, PassageIndex  # noqa: E402
from training.claim_data import evidence_passages, load_claims  # noqa: E402
from training.paths import DATA, WORDINGS  # noqa: E402
from training.train_reworded import HELD_OUT_KINDS  # noqa: E402


def no_exemplars(memory: Memory) -> Memory:
    """The memory with no claim in it: every claim is one it does not know."""
    return Memory(
        memory.claims[:0], memory.documents[:0], memory.passages, memory.passage_documents, memory.evidence[:0],
        memory.verdicts[:0],
    )  # fmt: skip


def read(encoders: Encoders, reader: object, documents: int | None, top: int) -> list[dict]:
    """Each (statement, wording) of the first NDAs: what the shipped cross-encoder and the reader say of the
    passages the ranker finds first."""
    folder = DATA / "contractnli-dev"
    docs = evidence_passages(folder)
    spec = json.loads(WORDINGS.read_text())
    memory = no_exemplars(encoders.memory)
    readers = (("shipped", encoders.cross), ("reader", reader))
    rows = []
    for name in sorted(docs)[:documents]:
        index = PassageIndex(docs[name].ids, docs[name].texts, encoders)
        for c in (c for c in load_claims(folder, docs) if c.document == name):
            statement = c.answer_id.split("-", 2)[2]
            for wording, text in enumerate(spec["statements"][statement]):
                ids = index.rank([text], encoders.ranker, memory)[0].ids[:top]
                pairs = [(text, docs[name].texts[index.row_of[i]]) for i in ids]
                for who, session in readers:
                    encoders.cross = session
                    p = encoders.judge(pairs)
                    rows.append(
                        {
                            "who": who,
                            "wording": wording,
                            "kind": statement,
                            "nli": c.nli,
                            "hit": bool(ids) and ids[int(np.argmin(p[:, 2]))] in c.evidence,
                            "has_evidence": bool(c.evidence),
                            "supported": float(p[:, 0].max()),
                            "contradicted": float(p[:, 1].max()),
                            "stated": float(1 - p[:, 2].min()),
                        }
                    )
    return rows


def thresholds(rows: list[dict]) -> dict[str, float]:
    """Chosen on the learnable wordings: at most 10 % of entailed statements flagged (5 % each way), and
    "supported" right at least 96 % of the time."""
    entailed = [r for r in rows if r["nli"] == "Entailment"]
    t_stated = float(np.quantile([r["stated"] for r in entailed], 0.05))
    t_contradicted = float(np.quantile([r["contradicted"] for r in entailed], 0.95))
    t_supported = 1.0
    for t in sorted({r["supported"] for r in rows}, reverse=True):
        said = [r for r in rows if r["supported"] >= t]
        if np.mean([r["nli"] == "Entailment" for r in said]) < 0.96:
            break
        t_supported = t
    return {"stated": t_stated, "contradicted": t_contradicted, "supported": t_supported}


def figures(rows: list[dict], t: dict[str, float]) -> str:
    by = {k: [r for r in rows if r["nli"] == k] for k in ("Entailment", "Contradiction", "NotMentioned")}

    def flagged(r: dict) -> bool:
        return r["contradicted"] >= t["contradicted"] or r["stated"] < t["stated"]

    said = [r for r in rows if r["supported"] >= t["supported"] and not flagged(r)]
    right = sum(r["nli"] == "Entailment" for r in said)
    hits = {k: [r["hit"] for r in by[k] if r["has_evidence"]] for k in ("Entailment", "Contradiction")}
    contradicted = sum(r["contradicted"] >= t["contradicted"] for r in by["Contradiction"])
    false_contradicted = sum(r["contradicted"] >= t["contradicted"] for r in by["Entailment"])
    p = contradicted / max(contradicted + false_contradicted, 1)
    recall = contradicted / max(len(by["Contradiction"]), 1)
    return (
        f"contradicted F1 {2 * p * recall / max(p + recall, 1e-9):.2f} ({contradicted} of {len(by['Contradiction'])}); "
        f"never-made flagged {sum(flagged(r) for r in by['NotMentioned'])} of {len(by['NotMentioned'])}; "
        f"correct flagged {sum(flagged(r) for r in by['Entailment'])} of {len(by['Entailment'])}; "
        f"supported {len(said)} (right {right / max(len(said), 1):.2f}, {right} of {len(by['Entailment'])} confirmed); "
        f"evidence first entailed {np.mean(hits['Entailment']):.2f} contradicted {np.mean(hits['Contradiction']):.2f}"
    )


def main() -> int:
    import onnxruntime as ort

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reader", type=Path)
    parser.add_argument("--documents", type=int)
    parser.add_argument("--read", type=int, default=4, help="passages the reader reads, the ranker's first")
    args = parser.parse_args()
    encoders = Encoders.load()
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    reader = ort.InferenceSession(str(args.reader), options, providers=["CPUExecutionProvider"])
    shipped = encoders.cross
    rows = read(encoders, reader, args.documents, args.read)
    encoders.cross = shipped
    assert len({r["who"] for r in rows}) == 2
    for who in ("shipped", "reader"):
        mine = [r for r in rows if r["who"] == who]
        t = thresholds([r for r in mine if r["wording"] <= 2])
        print(f"{who}: thresholds chosen on wordings 0-2 {json.dumps({k: round(v, 3) for k, v in t.items()})}")
        for kinds, name in ((False, "kinds it learnt"), (True, f"kinds it never saw ({', '.join(HELD_OUT_KINDS)})")):
            test = [r for r in mine if r["wording"] >= 3 and (r["kind"] in HELD_OUT_KINDS) == kinds]
            print(f"  wordings 3-5, {name}, {len(test)} statements: {figures(test, t)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
