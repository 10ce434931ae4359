"""Build resources/claim_checker/reference.npz (models/checker/reference.py): every sentence of REFERENCE CUAD
contracts as int8 bi-encoder vectors, and the closeness under which a claim that a contract has a clause is read
as never made. Two cores, about two minutes, no torch:

    PYTHONPATH=packaging:. .venv/bin/python -m training.build_reference --claims build/cuad-claims

The contracts are CUAD's, never one the kind reader holds out (kinds.json: card.data.held_out_contracts), nor
one held_out_overlap.py lists. The threshold is chosen on other CUAD contracts (neither held out nor reference):
their claims that a clause of one of CUAD's kinds is there (wordings 0-2, less denials), the highest closeness
at which no more than FALSE_ALARMS of the claims whose clause is there are flagged.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .paths import RESOURCES, overlapping

REFERENCE = 40  # contracts whose sentences are the reference
CHOOSING = 60  # other contracts whose claims choose the threshold
FALSE_ALARMS = 0.10  # of claims whose clause is there, flagged at most this often where the threshold is chosen
CHOOSING_WORDINGS = (0, 1, 2)  # training.cuad_claims' learnable wordings (3-5 are measured)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def contract_sentences(path: Path) -> list[str]:
    from models.checker.reference import sentences

    paragraphs = [" ".join(p.split()) for p in path.read_text(encoding="utf-8", errors="replace").split("\n\n")]
    return sentences([p for p in paragraphs if p])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=Path, default=Path("build/cuad-claims"))
    args = parser.parse_args(argv)
    from models.checker.encoder import shipped_encoders
    from models.checker.kinds import negated
    from models.checker.manifest import pin
    from models.checker.reference import FILE, Reference

    started = time.time()
    encoders = shipped_encoders()
    if isinstance(encoders, str):
        raise SystemExit(encoders)
    held = set(json.loads((RESOURCES / "kinds.json").read_text())["card"]["data"]["held_out_contracts"])
    documents = sorted({m["document"] for m in _jsonl(args.claims / "meta.jsonl")} - held)
    with tempfile.TemporaryDirectory() as tmp:  # the overlap check reads a folder of documents
        (Path(tmp) / "documents").mkdir()
        for name in documents:
            shutil.copyfile(args.claims / "documents" / name, Path(tmp) / "documents" / name)
        listed = overlapping(Path(tmp))
    documents = [d for d in documents if d not in listed]
    step = len(documents) // (REFERENCE + CHOOSING)
    spread = documents[::step][: REFERENCE + CHOOSING]
    reference, choosing = spread[::2][:REFERENCE], [d for d in spread if d not in spread[::2][:REFERENCE]][:CHOOSING]

    rows, contract = [], []
    for k, name in enumerate(reference):
        mine = contract_sentences(args.claims / "documents" / name)
        rows.append(encoders.embed(mine))
        contract += [k] * len(mine)
    unit = np.vstack(rows)
    scales = np.abs(unit).max(axis=1) / 127.0
    vectors = np.round(unit / scales[:, None]).astype(np.int8)
    draft = Reference(vectors, scales.astype(np.float32), np.asarray(contract), 0.0, {})

    # the claims that choose the threshold: a clause of a CUAD kind is there (supported) or not (unsupported)
    chosen = set(choosing)
    claims = [
        m | {"text": q["answer"].removeprefix("Yes. ")}
        for m, q in zip(_jsonl(args.claims / "meta.jsonl"), _jsonl(args.claims / "qa.jsonl"), strict=True)
        if m["document"] in chosen and m["wording"] in CHOOSING_WORDINGS and m["label"] != "contradicted"
    ]
    claims = [c for c in claims if not negated(c["text"])]
    closeness, there = [], []
    for name in choosing:
        about = [c for c in claims if c["document"] == name]
        if not about:
            continue
        sentence_vectors = encoders.embed(contract_sentences(args.claims / "documents" / name))
        for c, v in zip(about, encoders.embed([c["text"] for c in about]), strict=True):
            closeness.append(draft.closeness(v, float((sentence_vectors @ v).max()), len(sentence_vectors)))
            there.append(c["label"] == "supported")
    z, present = np.asarray(closeness), np.asarray(there)
    threshold = -3.0
    for t in np.round(np.arange(-3.0, 1.001, 0.01), 2):
        if (z[present] < t).mean() <= FALSE_ALARMS:
            threshold = float(t)
    flagged = z < threshold
    card = {
        "reference_contracts": reference,
        "sentences": len(contract),
        "threshold_chosen_on": {
            "contracts": len(choosing),
            "claims_clause_there": int(present.sum()),
            "claims_clause_not_there": int((~present).sum()),
            "false_alarms": round(float(flagged[present].mean()), 3),
            "never_made_recall": round(float(flagged[~present].mean()), 3),
            "flag_everything": {"false_alarms": 1.0, "never_made_recall": 1.0},
        },
        "minutes": round((time.time() - started) / 60, 1),
    }
    out = RESOURCES / FILE
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        vectors=vectors,
        scales=scales.astype(np.float32),
        contract=np.asarray(contract, dtype=np.int32),
        threshold=np.float64(threshold),
        card=np.str_(json.dumps(card)),
    )
    out.write_bytes(buffer.getvalue())
    pin(out)
    print(json.dumps({"threshold": threshold, **card}, indent=1), file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
