"""all-mpnet-base-v2 beside the shipped all-MiniLM-L6-v2 as the checker's bi-encoder (issue 65, item 2), side by
side in one run: finding the deciding clause, recognising a kind of claim, and what each costs on two cores.

    nice -n 10 .venv/bin/python bench/encoders.py [--documents N] [--tokens 64] [--encoders A,B] [--repeat 3]
        [--cost-only] [--json build/mpnet/encoders.json]

MiniLM is the shipped dense.int8.onnx (checked against the manifest) with its base tokenizer; mpnet is what
`PYTHONPATH=packaging /work/trainvenv/bin/python -m training.export_mpnet --source DIR` writes to build/mpnet/
(torch in a venv of its own, never this one): in float, in int8 as dense.int8.onnx was quantised, and in the
mixed int8 that keeps its vectors near float's. Each reads a text's first `--tokens` word pieces (64, as
models/checker/encoder.py reads passages), one text a run, two texts at once on one core each, as Encoders does.

1. The deciding clause first: for each of contractnli-dev's NDAs (passages cut as Assay cuts them,
   training.claim_data.evidence_passages), every statement the NDA entails or contradicts with evidence spans,
   worded as ContractNLI words it and in the learnable wordings 0-2 of nda_wordings.json: the NDA's passages
   ranked by cosine to the claim; the share whose first passage overlaps an annotator's span, and whose first
   four hold one (what the cross-encoder reads). Cosine alone, no ranker or exemplars: those were fitted on
   MiniLM's vectors.
2. A kind of claim: each of nda_wordings_learnable.json's wordings read as the statement of its nearest
   prototype (ContractNLI's wording and wordings 0-2, as statements.json's are); wordings 0-2 read as the nearest
   of ContractNLI's 17 sentences alone; and CUAD's 14 worded kinds, each of wordings 0-2 left out in turn from
   the prototypes (clause_kind_names' names and sentences of all 33 kinds, the other learnable wordings), read
   as kinds.json's recogniser reads them (recognition_text, nearest prototype). Wordings 3-5 are never read:
   they are kept for measuring the product, not for choosing its parts.
3. Cost, each encoder in a fresh process (nothing else loaded there but the passages): load time, ms a passage
   over the first 400 passages and ms for one claim alone, in wall time and in CPU time (all threads: what
   other work on the cores cannot inflate much; two quiet cores take about half of it in wall time), resident
   memory before loading, after, and at peak; `--repeat` runs of each, the encoders in turn, the quickest kept.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package: passages, wordings, kinds' names

from training.paths import DATA, WORDINGS  # noqa: E402

MPNET = ROOT / "build" / "mpnet"
MPNET_TOKENIZER_SHA256 = "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
LEARNABLE = WORDINGS.parent / "nda_wordings_learnable.json"
ENCODERS = {
    "MiniLM int8 (ships)": "dense.int8.onnx",
    "mpnet float": "mpnet.fp32.onnx",
    "mpnet int8 (MiniLM's recipe)": "mpnet.int8.onnx",
    "mpnet int8 mixed": "mpnet.mixed.onnx",
}
DECIDED = {"Entailment": "entailed", "Contradiction": "contradicted"}
COST_PASSAGES = 400


@dataclass
class Reader:
    """One encoder as Assay runs one: a text a run, `threads` texts at once, each on one core."""

    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer, no padding, truncated to the tokens read
    threads: int = 2

    def embed(self, texts: list[str]) -> np.ndarray:
        names = [i.name for i in self.session.get_inputs()]

        def one(e: Any) -> np.ndarray:
            feed = {"input_ids": e.ids, "attention_mask": e.attention_mask, "token_type_ids": e.type_ids}
            inputs = {n: np.asarray([feed[n]], dtype=np.int64) for n in names}
            return np.asarray(self.session.run(None, inputs)[0][0], dtype=np.float32)

        encodings = self.tokenizer.encode_batch(texts)
        with ThreadPoolExecutor(self.threads) as pool:
            rows = np.asarray(list(pool.map(one, encodings)), dtype=np.float32)
        return np.asarray(rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9), dtype=np.float32)


def load(name: str, tokens: int) -> Reader:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from models.checker.encoder import TOKENIZER_SHA256, base_file, checked_file

    file = ENCODERS[name]
    if file == "dense.int8.onnx":
        model: bytes | str = checked_file(file)
        tokenizer = Tokenizer.from_str(base_file("tokenizer.json", TOKENIZER_SHA256).decode())
    else:
        model = str(MPNET / file)
        data = (MPNET / "tokenizer.json").read_bytes()
        if hashlib.sha256(data).hexdigest() != MPNET_TOKENIZER_SHA256:
            raise SystemExit(f"{MPNET / 'tokenizer.json'} is not all-mpnet-base-v2's: export it again")
        tokenizer = Tokenizer.from_str(data.decode())
    tokenizer.no_padding()  # mpnet's tokenizer.json pads to 128 unless told otherwise
    tokenizer.enable_truncation(tokens)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return Reader(ort.InferenceSession(model, options, providers=["CPUExecutionProvider"]), tokenizer)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def own_wordings(folder: Path) -> dict[str, str]:
    """ContractNLI's wording of each statement, from the folder's answers ("Yes. <statement>")."""
    return {r["id"].split("-", 2)[2]: r["answer"].removeprefix("Yes. ") for r in _jsonl(folder / "qa.jsonl")}


def passages(documents: int | None) -> dict[str, Any]:
    from training.claim_data import evidence_passages

    found = evidence_passages(DATA / "contractnli-dev")
    return {name: found[name] for name in sorted(found)[:documents]}


def deciding_clause(embed: Callable[[list[str]], np.ndarray], docs: dict[str, Any]) -> dict[str, Any]:
    """Evidence first (and in the first four) by cosine, by wording and verdict; and ms a passage embedded."""
    folder = DATA / "contractnli-dev"
    spec = json.loads(WORDINGS.read_text())
    own = own_wordings(folder)
    wordings = {k: [own[k]] + [spec["statements"][k][w] for w in spec["train_wordings"]] for k in own}
    keys = sorted(wordings)
    claim_vectors = embed([t for k in keys for t in wordings[k]]).reshape(len(keys), 4, -1)
    document_of = {r["id"]: r["document"] for r in _jsonl(folder / "qa.jsonl")}
    texts = [t for d in docs.values() for t in d.texts]
    started = time.perf_counter()
    vectors = embed(texts)
    ms = 1000 * (time.perf_counter() - started) / len(texts)
    sizes = [len(d.texts) for d in docs.values()]
    first = dict(zip(docs, np.cumsum([0, *sizes[:-1]]).tolist(), strict=True))
    hits: dict[str, dict[str, list[tuple[bool, bool]]]] = {g: {v: [] for v in DECIDED.values()} for g in ("own", "0-2")}
    for m in _jsonl(folder / "meta.jsonl"):
        name = document_of[m["id"]]
        if m["nli_label"] not in DECIDED or not m["evidence"] or name not in docs:
            continue
        d = docs[name]
        evidence = {
            i for i, (a, b) in enumerate(d.spans) if any(a < ev["end"] and ev["start"] < b for ev in m["evidence"])
        }
        if not evidence:
            continue
        mine = vectors[first[name] : first[name] + len(d.texts)]
        for w, claim in enumerate(claim_vectors[keys.index(m["id"].split("-", 2)[2])]):
            order = np.argsort(-(mine @ claim), kind="stable")
            hits["own" if w == 0 else "0-2"][DECIDED[m["nli_label"]]].append(
                (int(order[0]) in evidence, bool(evidence & {int(i) for i in order[:4]}))
            )
    return {
        "documents": len(docs),
        "passages": len(texts),
        "ms_a_passage": round(ms, 2),
        **{
            f"{g} {v}": {
                "n": len(h),
                "first": round(float(np.mean([a for a, _ in h])), 3),
                "first_four": round(float(np.mean([b for _, b in h])), 3),
            }
            for g, by in hits.items()
            for v, h in by.items()
        },
    }


def _nearest(prototypes: np.ndarray, owner: list[int], queries: np.ndarray) -> list[int]:
    return [owner[int(np.argmax(prototypes @ q))] for q in queries]


def kinds_of_claim(embed: Callable[[list[str]], np.ndarray]) -> dict[str, Any]:
    """Statements and CUAD kinds recognised by the nearest prototype: right / read."""
    from models.checker.kinds import recognition_text
    from training.clause_kind_names import DESCRIPTIONS
    from training.cuad_kinds import GOVERNING_LAW, KINDS

    spec = json.loads(WORDINGS.read_text())
    learnable = json.loads(LEARNABLE.read_text())["statements"]
    own = own_wordings(DATA / "contractnli-dev")
    keys = sorted(own)
    protos = [(own[k], i) for i, k in enumerate(keys)] + [
        (spec["statements"][k][w], i) for i, k in enumerate(keys) for w in spec["train_wordings"]
    ]
    p = embed([t for t, _ in protos])
    owner = [i for _, i in protos]
    queries = [(t, i) for i, k in enumerate(keys) for t in learnable[k]]
    q = embed([t for t, _ in queries])
    truth = [i for _, i in queries]
    statement = sum(a == i for a, i in zip(_nearest(p, owner, q), truth, strict=True))
    originals, zero_two = p[: len(keys)], p[len(keys) :]
    found = sum(a == i for a, i in zip(_nearest(originals, owner, zero_two), owner[len(keys) :], strict=True))
    found_learnable = sum(a == i for a, i in zip(_nearest(originals, owner, q), truth, strict=True))

    worded = [k for k in KINDS if k is not GOVERNING_LAW]
    categories = list(DESCRIPTIONS)
    right = []
    for left_out in (0, 1, 2):
        texts = [(t, c) for c, cat in enumerate(categories) for t in DESCRIPTIONS[cat]]
        texts += [(k.wordings[w], categories.index(k.category)) for k in worded for w in (0, 1, 2) if w != left_out]
        kp = embed([recognition_text(t) for t, _ in texts])
        kq = embed([recognition_text(k.wordings[left_out]) for k in worded])
        got = _nearest(kp, [c for _, c in texts], kq)
        right += [g == categories.index(k.category) for g, k in zip(got, worded, strict=True)]
    return {
        "statement, learnable wordings (nearest of ContractNLI + 0-2)": f"{statement} of {len(queries)}",
        "original found, wordings 0-2 (nearest of 17)": f"{found} of {len(zero_two)}",
        "original found, learnable wordings (nearest of 17)": f"{found_learnable} of {len(q)}",
        "CUAD kind, wordings 0-2 left out in turn (33 kinds)": f"{sum(right)} of {len(right)}",
    }


def _rss_mb(field: str = "VmRSS") -> float:
    """Resident memory now (VmRSS), or at its highest in this process (VmHWM: unlike getrusage's maximum, not
    carried over from the parent that forked it), in MiB. Linux only, as the figure asked for."""
    with open("/proc/self/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith(field + ":")) / 1024


def cost(name: str, tokens: int) -> dict[str, float]:
    """One encoder alone in this process: load, ms a passage (two at once), ms a claim alone, memory."""
    texts = [t for d in passages(None).values() for t in d.texts][:COST_PASSAGES]
    claims = list(own_wordings(DATA / "contractnli-dev").values())
    before = _rss_mb()
    started = time.perf_counter()
    reader = load(name, tokens)
    loaded = time.perf_counter() - started
    after_load = _rss_mb()
    reader.embed(texts[:8])  # first runs allocate
    started, cpu = time.perf_counter(), time.process_time()
    reader.embed(texts)
    per_passage = 1000 * (time.perf_counter() - started) / len(texts)
    cpu_passage = 1000 * (time.process_time() - cpu) / len(texts)
    alone, alone_cpu = [], []
    for claim in claims:
        started, cpu = time.perf_counter(), time.process_time()
        reader.embed([claim])
        alone.append(1000 * (time.perf_counter() - started))
        alone_cpu.append(1000 * (time.process_time() - cpu))
    return {
        "load_s": round(loaded, 2),
        "ms_a_passage": round(per_passage, 2),
        "cpu_ms_a_passage": round(cpu_passage, 2),
        "ms_a_claim_alone": round(float(np.median(alone)), 2),
        "cpu_ms_a_claim_alone": round(float(np.median(alone_cpu)), 2),
        "rss_before_mb": round(before),
        "rss_loaded_mb": round(after_load),
        "rss_after_mb": round(_rss_mb()),
        "rss_peak_mb": round(_rss_mb("VmHWM")),
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, help="the first N NDAs of contractnli-dev (default all)")
    parser.add_argument("--tokens", type=int, default=64, help="word pieces read of a text (the app: 64)")
    parser.add_argument("--encoders", default=",".join(ENCODERS), help="which, by name, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="cost runs of each encoder, taken in turn")
    parser.add_argument("--cost-only", action="store_true", help="the cost alone")
    parser.add_argument("--json", type=Path, default=MPNET / "encoders.json")
    parser.add_argument("--cost", choices=list(ENCODERS), help=argparse.SUPPRESS)  # one encoder in a fresh process
    args = parser.parse_args()
    if args.cost:
        print(json.dumps(cost(args.cost, args.tokens)))
        return 0
    names = [n for n in args.encoders.split(",") if n]
    report: dict[str, Any] = {"tokens": args.tokens, "load_before": os.getloadavg()[0]}
    docs = passages(args.documents)
    for name in names if not args.cost_only else []:
        reader = load(name, args.tokens)
        report[name] = {
            "deciding clause": deciding_clause(reader.embed, docs),
            "kind of claim": kinds_of_claim(reader.embed),
        }
        del reader
        print(name, json.dumps(report[name]), flush=True)
    # Other work shares the two cores: each encoder's cost is measured `repeat` times, the encoders in turn, and
    # the quickest run of each kept (the one least slowed by the others), with the load average it ran under.
    runs: dict[str, list[dict[str, float]]] = {n: [] for n in names}
    for _ in range(args.repeat):
        for name in names:
            command = [sys.executable, __file__, "--cost", name, "--tokens", str(args.tokens)]
            runs[name].append(json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout))
    for name in names:
        quickest = min(runs[name], key=lambda r: r["ms_a_passage"])
        spread = [r["ms_a_passage"] for r in runs[name]]
        entry = {**quickest, "ms_a_passage_runs": spread, "file_mb": round(_file(name).stat().st_size / 2**20, 1)}
        report.setdefault(name, {})["cost"] = entry
        print(name, "cost", json.dumps(entry), flush=True)
    report["load_after"] = os.getloadavg()[0]
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


def _file(name: str) -> Path:
    from models.checker.encoder import FOLDER

    return FOLDER / ENCODERS[name] if ENCODERS[name] == "dense.int8.onnx" else MPNET / ENCODERS[name]


if __name__ == "__main__":
    raise SystemExit(main())
