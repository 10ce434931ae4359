"""Build resources/claim_checker/reference.npz (models/checker/reference.py): every sentence of REFERENCE CUAD
contracts as int8 bi-encoder vectors, how many of them use each word, and the regression that tells from them a
claim that a contract has a clause it has not (never made). Two cores, about five minutes, no torch:

    PYTHONPATH=packaging:. .venv/bin/python -m training.build_reference --claims build/cuad-claims

The contracts are CUAD's, never one the kind reader holds out (kinds.json: card.data.held_out_contracts), nor one
held_out_overlap.py lists. The regression learns from two sets of claims, read as the engine reads them (less
denials, values and quotations): the other CUAD contracts' claims that a clause of one of CUAD's kinds is there
(supported) or not (unsupported), in wordings 0-2; and ContractNLI's statements about its training NDAs, in the
learnable wordings 0-2, whose words are a lawyer's more than the contract's ("the recipient" for "the Receiving
Party"). Its threshold is chosen with each kind held out in turn (the kind then unknown, as the kinds it is for
are): the lowest probability at which no more than FALSE_ALARMS of the held-out claims whose clause is there are
flagged.
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

from .paths import DATA, RESOURCES, WORDINGS, overlapping

REFERENCE = 40  # contracts whose sentences are the reference
FALSE_ALARMS = 0.10  # of claims whose clause is there, flagged at most this often (each kind held out in turn)
LEARNING_WORDINGS = (0, 1, 2)  # training.cuad_claims' learnable wordings (3-5 are measured)
SEED = 20261129


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def paragraphs(path: Path) -> list[str]:
    """A CUAD contract's paragraphs, as the engine's passages roughly are."""
    cut = [" ".join(p.split()) for p in path.read_text(encoding="utf-8", errors="replace").split("\n\n")]
    return [p for p in cut if p]


def nda_claims(folder: Path) -> list[dict[str, Any]]:
    """ContractNLI's statements about its training NDAs in the learnable wordings, dealt in turn: the clause is there
    where the NDA entails the statement, never made where it does not mention it (a contradicted statement is a
    denial's case, left out as CUAD's are). The NDAs held_out_overlap.py lists are dropped."""
    spec = json.loads(WORDINGS.read_text(encoding="utf-8"))
    listed = overlapping(folder)
    labelled = [m for m in _jsonl(folder / "meta.jsonl") if m["nli_label"] in ("Entailment", "NotMentioned")]
    documents = {r["id"]: r["document"] for r in _jsonl(folder / "qa.jsonl")}
    return [
        {
            "document": folder / "documents" / documents[m["id"]],
            "kind": m["hypothesis_key"],
            "never": m["nli_label"] == "NotMentioned",
            "text": spec["statements"][m["hypothesis_key"]][LEARNING_WORDINGS[turn % len(LEARNING_WORDINGS)]],
        }
        for turn, m in enumerate(labelled)
        if documents[m["id"]] not in listed
    ]


def threshold_held_out_by_kind(x: np.ndarray, never: np.ndarray, kinds: np.ndarray) -> tuple[float, np.ndarray]:
    """The threshold chosen on each kind's claims as read by a regression that never saw the kind, and those
    probabilities."""
    from sklearn.linear_model import LogisticRegression

    held = np.zeros(len(x))
    for kind in np.unique(kinds):
        mine = kinds == kind
        held[mine] = LogisticRegression(max_iter=1000).fit(x[~mine], never[~mine]).predict_proba(x[mine])[:, 1]
    there = held[~never]
    threshold = min(t for t in np.unique(held) if (there >= t).mean() <= FALSE_ALARMS)
    return float(threshold), held


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=Path, default=Path("build/cuad-claims"))
    parser.add_argument("--ndas", type=Path, default=DATA / "contractnli-train")
    args = parser.parse_args(argv)
    from sklearn.linear_model import LogisticRegression

    from models.checker.encoder import shipped_encoders
    from models.checker.features import enough_to_check
    from models.checker.kinds import denies
    from models.checker.manifest import pin
    from models.checker.reference import FEATURES, FILE, Reference, Sentences
    from models.checker.statements import GIVES_WORDS

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
    reference = documents[:: len(documents) // 100][::2][:REFERENCE]  # spread evenly over CUAD's numbering
    learning = [d for d in documents if d not in set(reference)]

    rows, contract = [], []
    used_by: dict[str, int] = {}  # word -> how many reference contracts use it
    for k, name in enumerate(reference):
        mine = paragraphs(args.claims / "documents" / name)
        read = Sentences.of([str(i) for i in range(len(mine))], mine, encoders.embed)
        rows.append(read.vectors)
        contract += [k] * len(read.passages)
        for word in read.words:
            used_by[word] = used_by.get(word, 0) + 1
    unit = np.vstack(rows)
    scales = np.abs(unit).max(axis=1) / 127.0
    vectors = np.round(unit / scales[:, None]).astype(np.int8)
    draft = Reference(vectors, scales.astype(np.float32), np.asarray(contract), used_by, np.zeros(4), 0.5, {})

    # the claims it learns from, as the engine reads them: a clause of a CUAD kind or an NDA statement there or not
    claims = [
        {"document": args.claims / "documents" / m["document"], "kind": m["kind"], "never": m["label"] == "unsupported"}
        | {"text": q["answer"].removeprefix("Yes. ")}
        for m, q in zip(_jsonl(args.claims / "meta.jsonl"), _jsonl(args.claims / "qa.jsonl"), strict=True)
        if m["document"] in set(learning) and m["wording"] in LEARNING_WORDINGS and m["label"] != "contradicted"
    ] + nda_claims(args.ndas)
    claims = [
        c for c in claims if not denies(c["text"]) and not GIVES_WORDS.search(c["text"]) and enough_to_check(c["text"])
    ]
    x, never, kinds = [], [], []
    for path in sorted({c["document"] for c in claims}):
        about = [c for c in claims if c["document"] == path]
        mine = paragraphs(path)
        read = Sentences.of([str(i) for i in range(len(mine))], mine, encoders.embed)
        if not read.passages:
            continue
        for c, v in zip(about, encoders.embed([c["text"] for c in about]), strict=True):
            x.append(draft.features(c["text"], v, read)[0])
            never.append(c["never"])
            kinds.append(c["kind"])
    features, labels = np.asarray(x), np.asarray(never)
    threshold, held_out = threshold_held_out_by_kind(features, labels, np.asarray(kinds))
    model = LogisticRegression(max_iter=1000, random_state=SEED).fit(features, labels)
    weights = np.append(model.coef_[0], model.intercept_[0])
    flagged = held_out >= threshold
    card = {
        "features": list(FEATURES),
        "reference_contracts": reference,
        "sentences": len(contract),
        "words": len(used_by),
        "learnt_from": {
            "contracts": len(learning),
            "kinds": len(set(kinds)),
            "claims_clause_there": int((~labels).sum()),
            "claims_clause_not_there": int(labels.sum()),
        },
        "each_kind_held_out": {  # the regression that never saw the kind, at the threshold chosen so
            "false_alarms": round(float(flagged[~labels].mean()), 3),
            "never_made_recall": round(float(flagged[labels].mean()), 3),
            "flag_everything": {"false_alarms": 1.0, "never_made_recall": 1.0},
        },
        "weights": dict(zip([*FEATURES, "bias"], np.round(weights, 4).tolist(), strict=True)),
        "seed": SEED,
        "minutes": round((time.time() - started) / 60, 1),
    }
    out = RESOURCES / FILE
    buffer = io.BytesIO()
    np.savez_compressed(
        buffer,
        vectors=vectors,
        scales=scales.astype(np.float32),
        contract=np.asarray(contract, dtype=np.int32),
        used_by=np.str_(json.dumps(used_by, sort_keys=True)),
        weights=weights,
        threshold=np.float64(threshold),
        card=np.str_(json.dumps(card)),
    )
    out.write_bytes(buffer.getvalue())
    pin(out)
    print(json.dumps({"threshold": threshold, **card}, indent=1), file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
