"""A cross-encoder that reads a claim about an NDA in any wording: the two-core recipe of
train_cross_encoder.py on ContractNLI's training NDAs, each statement in its own wording and in the
wordings that may be learnt (data/nda_wordings.json, 0-2), with some kinds of statement left out entirely,
so that what it does on the other NDAs, in wordings 3-5 and on the kinds it never saw, is a held-out figure.

    export PYTHONPATH=packaging
    .venv/bin/python -m training.train_reworded prepare build/reworded [--held-out-kinds nda-2,nda-10,...]
    python3 -m training.train_reworded train build/reworded build/reworded/out  # torch: the `train` extra

It learns from contractnli-train only (50 NDAs), so contractnli-dev is held out by document too; the
measurement is bench/wordings_reader.py.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from .paths import DATA, WORDINGS, overlapping
from .train_cross_encoder import PROBE, RECIPES, SEED, Pairs, as_float16, fit, onnx_scores, score

# kinds of statement never learnt: one of each shape (scope of the definition, a disclosure duty, an
# exclusion, a covenant), so the held-out figure says how far the reader goes beyond what it saw
HELD_OUT_KINDS = ("nda-2", "nda-10", "nda-13", "nda-18")
# 746 steps of 32 pairs: 68 minutes on two cores shared with other work (4,100 s at a load of 4-6)
RECIPE = replace(RECIPES["two-cores"], tokens=128, hard=3, others=1, epochs=2)


def prepare(out: Path, data: Path, held_out_kinds: tuple[str, ...]) -> None:
    """contractnli-train's (claim, passage) pairs, every claim in its own wording and in each learnable one."""
    from models.checker.encoder import TOKENIZER_SHA256, WEIGHTS_SHA256, base_file
    from models.checker.ranking import PassageIndex, content

    from .claim_data import evidence_passages, load_claims

    wordings = json.loads(WORDINGS.read_text())
    texts: dict[str, int] = {}
    claims: list[dict[str, Any]] = []
    columns: dict[str, list[Any]] = {
        k: [] for k in ("claim", "passage", "passage_id", "label", "fold", "kind", "bm25_rank")
    }

    def text_no(t: str) -> int:
        return texts.setdefault(t, len(texts))

    documents = evidence_passages(data / "contractnli-train")
    # NDAs that share text with a document Assay is measured on: dropped, with every claim about them
    dropped = overlapping(data / "contractnli-train" / "documents")
    for c in load_claims(data / "contractnli-train", documents):
        statement = c.answer_id.split("-", 2)[2]  # cnli-0086-nda-5 -> nda-5
        if statement in held_out_kinds or c.document in dropped:
            continue
        doc = documents[c.document]
        index = PassageIndex(doc.ids, doc.texts)
        verdict = {"Entailment": 0, "Contradiction": 1}.get(c.nli)
        said = [c.text] + [wordings["statements"][statement][w] for w in wordings["train_wordings"]]
        for wording, text in enumerate(said):
            ranks = np.argsort(np.argsort(-index.bm25(content(text)), kind="stable"))
            claims.append({"folder": "contractnli-train", "answer_id": c.answer_id, "wording": wording - 1})
            claims[-1]["text_no"] = text_no(text)
            for i, (pid, passage) in enumerate(zip(doc.ids, doc.texts, strict=True)):
                label = verdict if verdict is not None and pid in c.evidence else 2
                for k, v in zip(
                    columns, (len(claims) - 1, text_no(passage), pid, label, 0, 0, int(ranks[i])), strict=True
                ):
                    columns[k].append(v)
    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "pairs.json.gz", "wt") as f:
        json.dump({"texts": list(texts), "claims": claims, "pairs": columns, "held_out_kinds": held_out_kinds}, f)
    (out / "tokenizer.json").write_bytes(base_file("tokenizer.json", TOKENIZER_SHA256))
    (out / "model.f16.safetensors").write_bytes(as_float16(base_file("model.safetensors", WEIGHTS_SHA256)))
    print(
        f"{len(claims)} claims (kinds left out: {', '.join(held_out_kinds)}; NDAs dropped as overlapping the"
        f" measured documents: {len(dropped)}), {len(columns['label'])} pairs -> {out}"
    )


def train(folder: Path, out: Path, epochs: int) -> None:
    """One model on every prepared pair, exported to int8 ONNX and checked against the float model."""
    import torch

    from .minibert import export_int8

    torch.set_num_threads(2)
    out.mkdir(parents=True, exist_ok=True)
    recipe = replace(RECIPE, epochs=epochs)
    pairs = Pairs(folder, recipe)
    started = time.time()
    model = fit(pairs, np.arange(len(pairs.label)), folder, "cpu", SEED)
    seconds = time.time() - started
    path = out / "cross-reworded.int8.onnx"
    probe = np.random.default_rng(SEED).choice(len(pairs.label), min(PROBE // 4, len(pairs.label)), replace=False)
    exact = score(model, pairs, probe, "cpu", bf16=False)
    export_int8(model, path, per_channel=True)
    quantised = onnx_scores(path, pairs, probe)
    figures = {
        "recipe": {**recipe.__dict__},
        "seed": SEED,
        "train_seconds": round(seconds),
        "int8_agrees_with_float": float((exact.argmax(1) == quantised.argmax(1)).mean()),
        "int8_largest_difference": float(np.abs(exact - quantised).max()),
        "bytes": path.stat().st_size,
    }
    (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    print(json.dumps(figures), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    prepare_step, train_step = steps.add_parser("prepare"), steps.add_parser("train")
    prepare_step.add_argument("folder", type=Path, help="where the pairs and the base model's files go")
    prepare_step.add_argument("--data", type=Path, default=DATA)
    prepare_step.add_argument("--held-out-kinds", default=",".join(HELD_OUT_KINDS), help="never learnt ('' none)")
    train_step.add_argument("folder", type=Path, help="what prepare wrote")
    train_step.add_argument("out", type=Path)
    train_step.add_argument("--epochs", type=int, default=RECIPE.epochs)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.folder, args.data, tuple(k for k in args.held_out_kinds.split(",") if k))
    else:
        train(args.folder, args.out, args.epochs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
