"""BERT in plain torch, in all-MiniLM-L6-v2's shape (6 layers, 384 wide, 12 heads), loaded from the
upstream safetensors: for training the cross-encoder and exporting both encoders to ONNX only. Assay
itself never imports torch (models/checker/encoder.py runs the ONNX files)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self, h, heads, inter):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(h, h) for _ in range(4))
        self.ln1 = nn.LayerNorm(h, eps=1e-12)
        self.up, self.down = nn.Linear(h, inter), nn.Linear(inter, h)
        self.ln2 = nn.LayerNorm(h, eps=1e-12)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, bias):
        b, t, h = x.shape
        d = h // self.heads

        def split(y):
            return y.view(b, t, self.heads, d).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        att = torch.softmax(q @ k.transpose(-1, -2) / (d**0.5) + bias, dim=-1)
        ctx = (self.drop(att) @ v).transpose(1, 2).reshape(b, t, h)
        x = self.ln1(x + self.drop(self.o(ctx)))
        return self.ln2(x + self.drop(self.down(nn.functional.gelu(self.up(x)))))


class MiniBert(nn.Module):
    def __init__(self, vocab=30522, h=384, layers=6, heads=12, inter=1536, pos=512, labels=0):
        super().__init__()
        self.word, self.pos, self.segment = nn.Embedding(vocab, h), nn.Embedding(pos, h), nn.Embedding(2, h)
        self.ln = nn.LayerNorm(h, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(Layer(h, heads, inter) for _ in range(layers))
        self.head = nn.Linear(h, labels) if labels else None

    def encode(self, ids, mask, types):
        t = ids.shape[1]
        positions = torch.arange(t, device=ids.device).unsqueeze(0)
        x = self.drop(self.ln(self.word(ids) + self.pos(positions) + self.segment(types)))
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, bias)
        return x

    def forward(self, ids, mask, types):
        x = self.encode(ids, mask, types)
        m = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        if self.head is None:
            return pooled
        return self.head(self.drop(pooled))


_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "o": "attention.output.dense",
    "ln1": "attention.output.LayerNorm",
    "up": "intermediate.dense",
    "down": "output.dense",
    "ln2": "output.LayerNorm",
}


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        dtype = {"F32": np.float32, "F16": np.float16, "I64": np.int64}[info["dtype"]]
        out[name] = np.frombuffer(data[8 + n + a : 8 + n + b], dtype=dtype).reshape(info["shape"])
    return out


def load_base(model: MiniBert, weights: dict[str, np.ndarray]) -> None:
    state = {
        "word.weight": "embeddings.word_embeddings.weight",
        "pos.weight": "embeddings.position_embeddings.weight",
        "segment.weight": "embeddings.token_type_embeddings.weight",
        "ln.weight": "embeddings.LayerNorm.weight",
        "ln.bias": "embeddings.LayerNorm.bias",
    }
    for i in range(len(model.layers)):
        for mine, theirs in _NAMES.items():
            for p in ("weight", "bias"):
                state[f"layers.{i}.{mine}.{p}"] = f"encoder.layer.{i}.{theirs}.{p}"
    own = model.state_dict()
    for mine, theirs in state.items():
        own[mine] = torch.from_numpy(weights[theirs].astype(np.float32))  # float16 where it travelled so
    model.load_state_dict(own)


def export_int8(model: MiniBert, path: Path, per_channel: bool) -> None:
    """The model as ONNX (dynamic batch and length), quantised to int8 by onnxruntime (dynamic quantisation),
    its weights then stored unsigned so that no processor's kernel saturates (int8_kernels.py)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from .int8_kernels import stored_as

    model = model.float().cpu().eval()
    ids = torch.randint(1000, 2000, (2, 16))
    names = ["input_ids", "attention_mask", "token_type_ids"]
    fp32 = path.with_suffix(".fp32.onnx")
    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        str(fp32),
        input_names=names,
        output_names=["out"],
        dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "out": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(fp32), str(path), weight_type=QuantType.QInt8, per_channel=per_channel)
    fp32.unlink()
    quantised = onnx.load(str(path))
    stored_as(quantised, onnx.TensorProto.UINT8)
    onnx.save(quantised, str(path))
