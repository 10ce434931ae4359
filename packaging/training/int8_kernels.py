"""The shipped int8 encoders: weights stored unsigned, so every processor computes the same integers,
and a float reference to check them against. Needs `onnx` (the `train` extra); Assay itself only runs
the files.

Why unsigned. onnxruntime quantises a text's activations to uint8 as it runs. With int8 weights
(u8 x s8), a processor with AVX2 but no VNNI (and AVX-512 without VNNI) multiplies with VPMADDUBSW,
which adds two products into 16 bits and saturates: the same file gave other numbers there than on a
VNNI processor (the cross-encoder's "supported" for the reverse-engineering clause 0.31 against 0.5+;
the sample's wrong answers caught 7 of 14 against 9). onnxruntime's own advice for that case is uint8
weights (u8 x u8), which every x86-64 kernel widens to 16 bits before multiplying and ARM64 multiplies
with UDOT/UMULL: no kernel saturates. A weight stored as int8 q with zero point z becomes q + 128 with
zero point z + 128, so every product (x - zx)(q - z) is unchanged: the unsigned file gives, to the
bit, what the signed one gave on the VNNI processor its thresholds were chosen on.

Why a signed twin too. onnxruntime's u8 x u8 kernels widen to 16 bits and multiply there: on a VNNI processor
they ran the encoders at half the speed of its u8 x s8 kernel (VPDPBUSD, four products added into 32 bits,
which saturates nowhere). So each encoder also ships signed, as `<model>.int8.vnni.onnx`, which Assay runs
only where VPDPBUSD is the kernel onnxruntime picks (models/checker/encoder.py, `signed_weights_exact`); the
numbers are the unsigned file's to the bit (tests/test_encoder_reference.py).

    PYTHONPATH=packaging python -m training.int8_kernels --vnni   # the twins of the shipped files, pinned

    PYTHONPATH=packaging python -m training.int8_kernels --unsigned resources/claim_checker/encoder/cross.int8.onnx
    PYTHONPATH=packaging python -m training.int8_kernels --reference   # tests/fixtures/encoder_reference.json
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .paths import ROOT

ENCODERS = ROOT / "resources" / "claim_checker" / "encoder"
REFERENCE = ROOT / "tests" / "fixtures" / "encoder_reference.json"


def _weights(model: onnx.ModelProto) -> set[str]:
    """The names of the weight tensors and their zero points: MatMulInteger's second and fourth inputs."""
    return {n.input[i] for n in model.graph.node if n.op_type == "MatMulInteger" for i in (1, 3)}


def stored_as(model: onnx.ModelProto, to: int) -> int:
    """Store every weight (and its zero point) as `to`, TensorProto.UINT8 or INT8, shifted by 128 either way so
    that every product (x - zx)(q - z) is unchanged, in place; how many tensors were shifted."""
    initializers = {t.name: t for t in model.graph.initializer}
    shift, dtype = (128, np.uint8) if to == TensorProto.UINT8 else (-128, np.int8)
    shifted = 0
    for name in sorted(_weights(model)):
        tensor = initializers[name]
        if tensor.data_type == to:
            continue
        assert tensor.data_type in (TensorProto.INT8, TensorProto.UINT8), f"{name}: int8 or uint8 weights expected"
        values = numpy_helper.to_array(tensor).astype(np.int16) + shift
        tensor.CopyFrom(numpy_helper.from_array(values.astype(dtype), name))
        shifted += 1
    return shifted


def vnni_twins() -> list[Path]:
    """The signed twin of each shipped encoder, written beside it and pinned."""
    from models.checker.encoder import checked_file
    from models.checker.manifest import pin

    written = []
    for name in ("dense", "cross"):
        model = onnx.load_from_string(checked_file(f"{name}.int8.onnx"))
        print(f"{name}: {stored_as(model, TensorProto.INT8)} weight tensors int8")
        path = ENCODERS / f"{name}.int8.vnni.onnx"
        onnx.save(model, str(path))
        written.append(path)
    pin(*written)
    return written


def dequantised(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model in float: each DynamicQuantizeLinear → MatMulInteger → Cast → Mul chain becomes one
    MatMul on the weights (q − z)·s. What int8 approximates, with the very weights that ship."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    drop: set[int] = set()
    added: list[tuple[onnx.NodeProto, onnx.NodeProto]] = []  # (node to put it before, new MatMul)
    for node in [n for n in graph.node if n.op_type == "MatMulInteger"]:
        quantise = producer[node.input[0]]
        assert quantise.op_type == "DynamicQuantizeLinear"
        (cast,) = consumers[node.output[0]]
        (rescale,) = consumers[cast.output[0]]
        scales = producer[rescale.input[1]]
        weight_scale = next(i for i in scales.input if i in initializers)
        q = numpy_helper.to_array(initializers[node.input[1]]).astype(np.float32)
        z = numpy_helper.to_array(initializers[node.input[3]]).astype(np.float32)
        s = numpy_helper.to_array(initializers[weight_scale]).astype(np.float32)
        name = f"{node.input[1]}_float"
        graph.initializer.append(numpy_helper.from_array(((q - z) * s).astype(np.float32), name))
        added.append((node, helper.make_node("MatMul", [quantise.input[0], name], [rescale.output[0]])))
        drop |= {id(node), id(cast), id(rescale), id(scales)}
    kept = []
    for n in graph.node:
        kept += [new for before, new in added if before is n]
        if id(n) not in drop:
            kept.append(n)
    del graph.node[:]
    graph.node.extend(kept)
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    orphans = [n for n in graph.node if n.op_type == "DynamicQuantizeLinear" and not set(n.output) & used]
    for n in orphans:
        graph.node.remove(n)
    used = {i for n in graph.node for i in n.input}
    unused = [t for t in graph.initializer if t.name not in used]
    for t in unused:
        graph.initializer.remove(t)
    onnx.checker.check_model(model)
    return model


# ---------------------------------------------------------------- the reference the test reads

CLAIMS = (
    "The Receiving Party shall not reverse engineer any objects which embody the Confidential Information.",
    "Confidential Information must be returned or destroyed when the agreement ends.",
    "The agreement is governed by the laws of the State of New York.",
    "Its employees may be given the Confidential Information.",
)
_MODALS = re.compile(r"\b(shall|will|may|must)\b(?! not)")


def _passages(limit: int) -> list[str]:
    """Operative clauses of the sample's documents, fixed by file order."""
    texts: list[str] = []
    for path in sorted((ROOT / "resources" / "sample" / "documents").glob("*.txt")):
        paragraphs = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n")]
        texts += [p for p in paragraphs if 80 <= len(p) <= 1200 and _MODALS.search(p)][:3]
    return texts[:limit]


def _pairs(passages: list[str]) -> list[tuple[str, str]]:
    """Each clause with its own first sentence (supported), that sentence negated (contradicted) and a
    claim about something else (not stated): the reference spans the three verdicts."""
    pairs = []
    for i, passage in enumerate(passages):
        said = re.split(r"(?<=[.;])\s", passage)[0][:300]
        pairs += [(said, passage), (_MODALS.sub(r"\1 not", said, count=1), passage)]
        pairs.append((CLAIMS[i % len(CLAIMS)], passage))
    return pairs


def reference(threads: int = 1) -> dict[str, Any]:
    """The shipped encoders' outputs on fixed texts and pairs, in int8 (this machine) and in float."""
    import onnxruntime as ort

    from models.checker.encoder import Encoders, checked_file

    def session(model: bytes) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])

    encoders = Encoders.load(threads=1)
    passages = _passages(24)
    pairs = _pairs(passages)
    float_dense = session(dequantised(onnx.load_from_string(checked_file("dense.int8.onnx"))).SerializeToString())
    float_cross = session(dequantised(onnx.load_from_string(checked_file("cross.int8.onnx"))).SerializeToString())
    int8 = {"embed": encoders.embed(passages), "judge": encoders.judge(pairs)}
    encoders.dense, encoders.cross = float_dense, float_cross
    floats = {"embed": encoders.embed(passages), "judge": encoders.judge(pairs)}
    return {
        "why": "tests/test_encoder_reference.py holds the shipped int8 encoders to these (training/int8_kernels.py)",
        "texts": passages,
        "pairs": [list(p) for p in pairs],
        "int8": {k: np.round(v, 6).tolist() for k, v in int8.items()},
        "float": {k: np.round(v, 6).tolist() for k, v in floats.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--unsigned", nargs="*", type=Path, help="rewrite these int8 ONNX files with uint8 weights")
    parser.add_argument("--vnni", action="store_true", help="write and pin the shipped encoders' signed twins")
    parser.add_argument("--reference", action="store_true", help=f"write {REFERENCE.relative_to(ROOT)}")
    args = parser.parse_args()
    for path in args.unsigned or []:
        model = onnx.load(str(path))
        print(f"{path}: {stored_as(model, TensorProto.UINT8)} weight tensors now uint8")
        onnx.save(model, str(path))
    if args.vnni:
        for path in vnni_twins():
            print(f"wrote {path}")
    if args.reference:
        REFERENCE.write_text(json.dumps(reference(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {REFERENCE}")


if __name__ == "__main__":
    main()
