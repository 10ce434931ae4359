"""How much surer than the ranker the cross-encoder must be before a claim no exemplar knows is shown another
passage first (models/checker/ranking.py UNKNOWN_CLAIM_MARGIN), on the two sets the margin was chosen on:

    .venv/bin/python bench/unknown_claim_margin.py [--ndas 24] [--contracts 70]

- ContractNLI's statements in the three hands' wordings (packaging/training/data/nda_wordings_hand_*.json,
  never learnt), dealt out over contractnli-dev's first NDAS NDAs as bench/wordings.py deals its wordings;
- CUAD's claims about kinds of clause, wordings 0-2 (build/cuad-claims), of CONTRACTS of the kind reader's
  training contracts (none it holds out), drawn with a fixed seed.
Each set is verified as shipped, recording for every claim the exemplars do not know the ranker's first four
passages and the cross-encoder's probabilities for them. For each margin: how often the passage shown first
overlaps the annotators' (CUAD's experts') evidence, beside the ranker's own first and the cross-encoder's
own order. Wordings 3-5 and the kind reader's held-out contracts are measured elsewhere (bench/wordings.py,
bench/engine_card.py), never here.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package

import wordings  # noqa: E402
from real_errors import import_project, verify  # noqa: E402

from training.paths import DATA  # noqa: E402

HANDS = sorted((ROOT / "packaging" / "training" / "data").glob("nda_wordings_hand_*.json"))
MARGINS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
SEED = 1


def hands_folder(ndas: int) -> Path:
    """contractnli-dev's first NDAs with each statement in one of the hands' wordings, dealt out in turn."""
    statements: dict[str, list[str]] = {}
    for hand in HANDS:
        for key, said in json.loads(hand.read_text())["statements"].items():
            statements.setdefault(key, []).extend(said)
    n = min(len(said) for said in statements.values())
    spec = Path(tempfile.mkdtemp(prefix="hands-")) / "spec.json"
    spec.write_text(json.dumps({"statements": statements, "test_wordings": list(range(n))}))
    wordings.WORDINGS = spec  # type: ignore[attr-defined]
    return wordings.reworded(DATA / "contractnli-dev", ndas, "test")


def cuad_folder(contracts: int) -> Path:
    """CUAD's claims in wordings 0-2 of some of the kind reader's training contracts."""
    source = ROOT / "build" / "cuad-claims"
    card = json.loads((ROOT / "resources" / "claim_checker" / "kinds.json").read_text())["card"]
    held = set(card["data"]["held_out_contracts"])
    meta = [json.loads(r) for r in (source / "meta.jsonl").read_text().splitlines() if r.strip()]
    documents = sorted({m["document"] for m in meta if m["document"] not in held})
    random.Random(SEED).shuffle(documents)
    kept = set(documents[:contracts])
    ids = {m["id"] for m in meta if m["document"] in kept and m["wording"] in (0, 1, 2)}
    out = Path(tempfile.mkdtemp(prefix="cuad-dev-")) / "cuad-dev"
    out.mkdir()
    (out / "documents").symlink_to(source / "documents")
    for name in ("qa.jsonl", "truth.jsonl", "meta.jsonl"):
        rows = [r for r in (source / name).read_text().splitlines() if r.strip() and json.loads(r)["id"] in ids]
        (out / name).write_text("".join(r + "\n" for r in rows))
    return out


def recorded(folder: Path) -> tuple[Path, dict[str, tuple[list[str], np.ndarray]]]:
    """The folder verified as shipped, and for each answer's claim no exemplar knows, its first four passages
    in the ranker's order and the cross-encoder's probabilities for them."""
    from app.judging import verification
    from models.checker import ranking

    answer: list[str] = [""]
    seen: dict[str, tuple[list[str], np.ndarray]] = {}
    reread, verify_answer = ranking.PassageIndex.reread, verification.Verifier.verify_answer

    def recording(self: Any, claim: str, ids: list[str], probabilities: np.ndarray, *, known: bool = True) -> Any:
        if not known and len(claim) > 12:  # not the answer's "Yes."
            seen[answer[0]] = (list(ids[: len(probabilities)]), np.asarray(probabilities))
        return reread(self, claim, ids, probabilities, known=known)

    def answering(self: Any, session: Any, answer_id: str, text: str | None = None) -> Any:
        answer[0] = answer_id
        return verify_answer(self, session, answer_id, text)

    ranking.PassageIndex.reread = recording  # type: ignore[method-assign]
    verification.Verifier.verify_answer = answering  # type: ignore[method-assign]
    try:
        project, ids = import_project(folder, None)
        verify(project, ids, None, False, neural=True)
    finally:
        ranking.PassageIndex.reread = reread  # type: ignore[method-assign]
        verification.Verifier.verify_answer = verify_answer  # type: ignore[method-assign]
    return project, seen


def figures(folder: Path) -> str:
    """The deciding clause first, entailed / contradicted, for the ranker, each margin and the cross-encoder."""
    import sqlite3

    project, seen = recorded(folder)
    meta = {m["id"]: m for m in map(json.loads, (folder / "meta.jsonl").read_text().splitlines())}
    document_of = {r["id"]: r["document"] for r in map(json.loads, (folder / "qa.jsonl").read_text().splitlines())}
    with sqlite3.connect(project) as db:
        ranges = {
            (d, c): (s, e)
            for d, c, s, e in db.execute(
                "select d.name, p.citation_id, p.char_start, p.char_end from passages p"
                " join documents d on d.id = p.document_id"
            )
        }
    choices = {"ranker": float("inf"), **{f"margin {m}": m for m in MARGINS}, "cross-encoder": -float("inf")}
    hits: dict[str, dict[str, list[bool]]] = {
        label: {k: [] for k in choices} for label in ("Entailment", "Contradiction")
    }
    for answer_id, (ids, p) in seen.items():
        m = meta.get(answer_id)
        if not m or m["nli_label"] not in hits or not m["evidence"]:
            continue
        deciding = 1 - p[:, 2]
        best = int(np.argmin(p[:, 2]))
        for name, margin in choices.items():
            shown = best if deciding[best] - deciding[0] > margin else 0
            span = ranges.get((document_of[answer_id], ids[shown]))
            hit = span is not None and any(span[0] < ev["end"] and ev["start"] < span[1] for ev in m["evidence"])
            hits[m["nli_label"]][name].append(hit)
    return "\n".join(
        f"  {name}: " + " / ".join(f"{np.mean(h[name]):.3f} of {len(h[name])}" for h in hits.values() if h[name])
        for name in choices
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ndas", type=int, default=24)
    parser.add_argument("--contracts", type=int, default=70)
    args = parser.parse_args()
    print(f"the three hands, contractnli-dev's first {args.ndas} NDAs (entailed / contradicted):", flush=True)
    print(figures(hands_folder(args.ndas)), flush=True)
    print(f"CUAD kinds, wordings 0-2, {args.contracts} training contracts (entailed / contradicted):", flush=True)
    print(figures(cuad_folder(args.contracts)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
