"""Train the statement recogniser (models/checker/statements.py): which of ContractNLI's 17 NDA statements a
claim in any wording makes, or none. Two cores, under a minute; no torch.

    export PYTHONPATH=packaging
    .venv/bin/python -m training.train_statements [--cuad build/cuad-claims] [--check-only]

What it learns from (every text goes through ../shared/checks/held_out_overlap.py first):
- each statement in ContractNLI's wording, in nda_wordings.json's learnable wordings 0-2 and in
  nda_wordings_learnable.json's ten (the claims that make a statement, each read with its own prototype
  left out);
  (each text held_out_overlap.py lists is dropped; a prototype stays, as the statement's wording);
- claims that make none: nda_negations.json's `learn` (a statement said the other way round), CUAD's claims
  about 14 kinds of clause in their learnable wordings 0-2 (`training.cuad_claims`), and half the sentences
  of ragtruth-dev's answers (web passages and news).
The threshold is the lowest at which the claims of each learnable wording, scored by a regression fitted
without that wording and passed by `same_sense`, are read as the right statement 97 times in 100, no more
than 1 in 100 of the claims of none are read as any, and no more than 5 in 100 of the claims are read as
another statement when their own is left out of the candidates.

Held out, never learnt or tuned on: nda_wordings.json's wordings 3-5, nda_negations.json's `check`, the
other half of ragtruth-dev's sentences, CUAD's wordings 3-5; and each statement in turn left out of the
candidates (what the recogniser does with a statement it has never seen). `--check-only` measures the
shipped file on them; training writes the figures into statements.json's card.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .paths import DATA, RESOURCES, WORDINGS

SEED = 20261129
LEARNABLE = WORDINGS.parent / "nda_wordings_learnable.json"
NEGATIONS = WORDINGS.parent / "nda_negations.json"
OVERLAP = Path(__file__).resolve().parents[3] / "shared" / "checks" / "held_out_overlap.py"
PRECISION = 0.97  # held out by wording, a claim read as a statement is read as the right one
NONE_READ = 0.01  # claims of no statement are read as one at most this often
UNSEEN_READ = 0.05  # and claims of a statement left out of the candidates are read as another at most this often
C = 0.3  # the regression's inverse regularisation (held out by wording, 0.3 beat 1 and 3)


def canonical_statements(data: Path) -> dict[str, str]:
    """ContractNLI's wording of each statement, from the answers of contractnli-dev ("Yes. <statement>")."""
    out = {}
    for row in map(json.loads, (data / "contractnli-dev" / "qa.jsonl").read_text().splitlines()):
        out[row["id"].split("-", 2)[2]] = row["answer"].removeprefix("Yes. ")
    return out


def sentences(data: Path) -> list[str]:
    """ragtruth-dev's answer sentences of six words or more, in a fixed shuffled order."""
    out = []
    for row in map(json.loads, (data / "ragtruth-dev" / "qa.jsonl").read_text().splitlines()):
        out += [s for s in re.split(r"(?<=[.!?])\s+", row["answer"]) if len(s.split()) >= 6]
    random.Random(SEED).shuffle(out)
    return out


def cuad_claims(folder: Path, wordings: tuple[int, ...]) -> list[str]:
    meta = {m["id"]: m for m in map(json.loads, (folder / "meta.jsonl").read_text().splitlines())}
    rows = map(json.loads, (folder / "qa.jsonl").read_text().splitlines())
    texts = {r["answer"].removeprefix("Yes. ") for r in rows if meta[r["id"]]["wording"] in wordings}
    return sorted(texts)


def overlapping_texts(texts: list[str]) -> set[str]:
    """The texts held_out_overlap.py lists (a short claim that shares one 8-word run with a measurement
    document is listed too): the caller drops them."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
        f.write("".join(json.dumps({"text": t}) + "\n" for t in texts))
        f.flush()
        done = subprocess.run(
            [sys.executable, str(OVERLAP), "--jsonl", f.name, "--field", "text"], capture_output=True, text=True
        )
    listed = {int(m) for m in re.findall(r"^OVERLAP \S+ \S+:(\d+)$", done.stdout, re.M)}
    if done.returncode not in (0, 1) or (done.returncode == 1 and not listed):
        raise SystemExit(f"held_out_overlap.py failed: {done.stderr or done.stdout}")
    return {texts[n - 1] for n in listed}


def spec_without_model(keys: list[str], canonical: dict[str, str], encoders: Any) -> dict[str, Any]:
    """statements.json's statements and prototypes, with a regression that says nothing yet."""
    from models.checker.statements import FEATURES

    spec_w = json.loads(WORDINGS.read_text())
    learnable = json.loads(LEARNABLE.read_text())["statements"]
    texts = [
        [canonical[k]] + [spec_w["statements"][k][w] for w in spec_w["train_wordings"]] + learnable[k] for k in keys
    ]
    flat = [t for group in texts for t in group]
    return {
        "keys": keys,
        "statements": [canonical[k] for k in keys],
        "statement_vectors": _rounded(encoders.embed([canonical[k] for k in keys])),
        "prototype_texts": texts,
        "prototypes": _rounded(encoders.embed(flat)),
        "owner": [i for i, group in enumerate(texts) for _ in group],
        "weights": [0.0] * len(FEATURES),
        "bias": 0.0,
        "threshold": 1.0,
    }


def _rounded(a: Any) -> list[Any]:
    return np.round(np.asarray(a, dtype=np.float64), 5).tolist()


Claim = tuple[str, int | None, int, int | None]  # text, its statement (None: none), learnable wording, own prototype


class Examples:
    """Claims with their candidates' features: `right[j]` the place of the right statement among claim j's
    candidates (-1: it makes none, or the right one is not a candidate); `group[j]` its learnable wording."""

    def __init__(self, reader: Any, encoders: Any, claims: list[Claim]) -> None:
        self.claims = [c for c, _, _, _ in claims]
        vectors = encoders.embed(self.claims)
        self.x: list[np.ndarray] = []
        self.chosen: list[list[int]] = []
        self.right: list[int] = []
        self.statement: list[int | None] = [s for _, s, _, _ in claims]
        self.group = np.array([g for _, _, g, _ in claims])
        for (claim, statement, _, skip), vector in zip(claims, vectors, strict=True):
            chosen, x = reader.features(claim, vector, encoders.judge, skip)
            self.chosen.append(chosen)
            self.x.append(x)
            self.right.append(chosen.index(statement) if statement in chosen else -1)

    def rows(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        xs = [self.x[j] for j in np.flatnonzero(keep)]
        ys = [np.arange(len(self.x[j])) == self.right[j] for j in np.flatnonzero(keep)]
        return np.vstack(xs), np.concatenate(ys).astype(int)

    def best(self, weights: np.ndarray, bias: float, drop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Each claim's most likely candidate (the statement's index) and its probability; `drop`: with the
        claim's own statement left out of its candidates (a statement never seen)."""
        read, p = [], []
        for x, chosen, s in zip(self.x, self.chosen, self.statement, strict=True):
            q = 1.0 / (1.0 + np.exp(-(x @ weights + bias)))
            if drop is not None and s in chosen:
                q = q.copy()
                q[chosen.index(s)] = -1.0
            j = int(np.argmax(q))
            read.append(chosen[j])
            p.append(float(q[j]))
        return np.array(read), np.array(p)


def fit(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=C, max_iter=5000, class_weight="balanced", random_state=SEED).fit(x, y)
    return model.coef_[0], float(model.intercept_[0])


def figures(ex: Examples, weights: np.ndarray, bias: float, threshold: float, statements: list[str]) -> dict[str, Any]:
    from models.checker.statements import same_sense

    read, p = ex.best(weights, bias)
    makes = np.array([s is not None for s in ex.statement])
    truth = np.array([-1 if s is None else s for s in ex.statement])
    taken = (p >= threshold) & np.array([same_sense(c, statements[i]) for c, i in zip(ex.claims, read, strict=True)])
    out = {
        "claims_making_a_statement": int(makes.sum()),
        "read_as_one": int((taken & makes).sum()),
        "read_right": int((taken & makes & (read == truth)).sum()),
        "claims_of_none": int((~makes).sum()),
        "none_read_as_one": int((taken & ~makes).sum()),
    }
    other, unseen = ex.best(weights, bias, drop=1)
    sense = np.array([same_sense(c, statements[i]) for c, i in zip(ex.claims, other, strict=True)])
    out["unseen_statement_read_as_another"] = int(((unseen >= threshold) & sense & makes).sum())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuad", type=Path, default=Path("build/cuad-claims"))
    parser.add_argument("--check-only", action="store_true")
    args = parser.parse_args(argv)
    from models.checker.encoder import shipped_encoders
    from models.checker.manifest import pin
    from models.checker.statements import FEATURES, FILE, StatementReader, same_sense, shipped_statements

    encoders = shipped_encoders()
    if isinstance(encoders, str):
        raise SystemExit(encoders)
    canonical = canonical_statements(DATA)
    keys = sorted(canonical, key=lambda k: int(k.split("-")[1]))
    spec_w = json.loads(WORDINGS.read_text())["statements"]
    learnable = json.loads(LEARNABLE.read_text())["statements"]
    negations = json.loads(NEGATIONS.read_text())
    spoken = sentences(DATA)
    half = len(spoken) // 2

    def none_of(texts: list[str], group: int) -> list[Claim]:
        return [(t, None, group, None) for t in texts]

    held_out: list[Claim] = [(spec_w[k][w], i, -1, None) for i, k in enumerate(keys) for w in (3, 4, 5)]
    held_out += none_of(list(negations["check"].values()), -1) + none_of(spoken[half:], -1)
    held_out += none_of(cuad_claims(args.cuad, (3, 4, 5)), -1)
    if args.check_only:
        reader = shipped_statements(encoders.memory)
        if isinstance(reader, str):
            raise SystemExit(reader)
        ex = Examples(reader, encoders, held_out)
        print(json.dumps(figures(ex, reader.weights, reader.bias, reader.threshold, reader.statements), indent=1))
        return 0

    spec = spec_without_model(keys, canonical, encoders)
    reader = StatementReader(spec, encoders.memory)
    owner_texts = [t for group in spec["prototype_texts"] for t in group]
    learn: list[Claim] = []
    for i, k in enumerate(keys):
        wordings = [canonical[k]] + [spec_w[k][w] for w in (0, 1, 2)] + learnable[k]
        learn += [(t, i, g, owner_texts.index(t)) for g, t in enumerate(wordings)]
    nones = list(negations["learn"].values()) + cuad_claims(args.cuad, (0, 1, 2)) + spoken[:half]
    groups = 1 + len(spec_w[keys[0]][:3]) + len(learnable[keys[0]])  # ContractNLI's wording and the learnable
    learn += [(t, None, j % groups, None) for j, t in enumerate(nones)]  # dealt out among the wordings
    dropped = overlapping_texts([t for t, _, _, _ in learn])
    learn = [c for c in learn if c[0] not in dropped]
    print(f"{len(dropped)} training claims overlap measurement documents: dropped", file=sys.stderr)
    ex = Examples(reader, encoders, learn)

    # held out by learnable wording: each wording's claims scored by a regression that never saw it
    oof_read, oof_p = np.zeros(len(ex.x), dtype=int), np.zeros(len(ex.x))
    other_read, other_p = np.zeros(len(ex.x), dtype=int), np.zeros(len(ex.x))  # its own statement unseen
    for g in range(groups):
        w, b = fit(*ex.rows(ex.group != g))
        fold = ex.group == g
        read, p = ex.best(w, b)
        oof_read[fold], oof_p[fold] = read[fold], p[fold]
        read, p = ex.best(w, b, drop=1)
        other_read[fold], other_p[fold] = read[fold], p[fold]
    makes = np.array([s is not None for s in ex.statement])
    truth = np.array([-1 if s is None else s for s in ex.statement])
    sense = np.array([same_sense(c, reader.statements[i]) for c, i in zip(ex.claims, oof_read, strict=True)])
    other = np.array([same_sense(c, reader.statements[i]) for c, i in zip(ex.claims, other_read, strict=True)])
    threshold = 1.0
    for t in np.round(np.arange(0.05, 0.96, 0.01), 2):
        taken = (oof_p >= t) & sense
        right = (taken & makes & (oof_read == truth)).sum() / max((taken & makes).sum(), 1)
        unseen = ((other_p >= t) & other & makes).sum() / max(makes.sum(), 1)
        if right >= PRECISION and (taken & ~makes).mean() <= NONE_READ and unseen <= UNSEEN_READ:
            threshold = float(t)
            break
    weights, bias = fit(*ex.rows(np.ones(len(ex.x), dtype=bool)))
    spec.update(weights=_rounded(weights), bias=round(bias, 6), threshold=threshold)
    card = {
        "features": list(FEATURES),
        "seed": SEED,
        "learnt_from": {"claims_making_a_statement": int(makes.sum()), "claims_of_none": int((~makes).sum())},
        "held_out_by_learnable_wording": {
            "read_as_one": int(((oof_p >= threshold) & sense & makes).sum()),
            "read_right": int(((oof_p >= threshold) & sense & makes & (oof_read == truth)).sum()),
            "none_read_as_one": int(((oof_p >= threshold) & sense & ~makes).sum()),
        },
        "held_out": figures(Examples(reader, encoders, held_out), weights, bias, threshold, reader.statements),
    }
    spec["card"] = card
    out = RESOURCES / FILE
    out.write_text(json.dumps(spec, separators=(",", ":")) + "\n")
    pin(out)
    print(json.dumps(card, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
