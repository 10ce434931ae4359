"""The claim checker on kinds of clause no training set here has: not among CUAD's 41 nor ContractNLI's 17
(force majeure, indemnification, arbitration, severability, entire agreement, jury waiver, publicity,
counterparts), claims that a contract has such a clause, on the 110 contracts the kind reader holds out.

    .venv/bin/python bench/unseen_kinds.py [--out FOLDER]

Each contract gets one claim of each kind, its wording dealt out in turn among three (a lawyer's, a model's,
plain). A claim's label is crude: the clause is there where words that name it stand in the contract (the
pattern beside each kind), and not there otherwise; nobody read the contracts for it. The reference contracts weigh
whether the contract uses the claim's rare words, which such labels favour: read their figures beside CUAD's kinds
held out (human labels; resources/claim_checker/README.md). Written for issue 65's
"kinds of clause your training never saw" (never-made recall >= 0.50 at <= 0.15 false alarms), measured as
../shared/checks/score_real_errors.py counts, beside flag-everything. Nothing here was trained or tuned on:
the reference contracts' regression learnt from CUAD's kinds, its threshold chosen with each kind held out
(packaging/training/build_reference.py).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package

from engine_card import cuad_folder  # noqa: E402
from real_errors import run_probe  # noqa: E402

# fmt: off
KINDS = {
    "force-majeure": (r"force\s+majeure|acts?\s+of\s+god", [
        "The agreement contains a force majeure clause.",
        "Neither party is liable for delays caused by events beyond its reasonable control.",
        "A party's failure to perform is excused during natural disasters, wars or other events outside its control."]),
    "indemnification": (r"indemnif", [
        "One party must indemnify the other against third-party claims.",
        "The contract includes an indemnification provision.",
        "A party has to hold the other harmless for losses that its breach causes."]),
    "arbitration": (r"arbitrat", [
        "Disputes must be resolved by arbitration.",
        "The contract has an arbitration clause.",
        "Any dispute goes to binding arbitration rather than to court."]),
    "severability": (
        r"severab|(?:invalid(?:ity)?|unenforceable)\W+(?:\w+\W+){0,30}?(?:remaining|remainder|other)\s+provisions", [
        "If one provision is held invalid, the rest of the agreement still applies.",
        "The agreement has a severability clause.",
        "An unenforceable term does not affect the validity of the remaining terms."]),
    "entire-agreement": (r"entire\s+agreement|entire\s+understanding|supersedes?\s+(?:all|any)\s+prior", [
        "The agreement states that it is the entire agreement between the parties.",
        "This contract supersedes all prior agreements and understandings on its subject.",
        "There is an integration clause: no earlier discussions form part of the deal."]),
    "jury-waiver": (r"\bjur(?:y|ies)\b", [  # not "injury"
        "Each party waives its right to a jury trial.",
        "The contract contains a waiver of trial by jury.",
        "Disputes will not be heard by a jury because the parties gave up that right."]),
    "publicity": (r"press\s+release|publicity|public\s+announcement", [
        "Neither party may issue a press release about the agreement without the other's consent.",
        "The agreement restricts public announcements about the deal.",
        "There is a publicity clause limiting what the parties can say publicly."]),
    "counterparts": (r"counterparts", [
        "The agreement may be signed in counterparts.",
        "The contract can be executed in several counterparts, each an original.",
        "Separate signature copies together make up one agreement."]),
}
# fmt: on


def probe(out: Path) -> Path:
    """The probe's folder (qa, truth, meta and the contracts), built from build/cuad-claims."""
    source = cuad_folder("cuad-claims")
    card = json.loads((ROOT / "resources" / "claim_checker" / "kinds.json").read_text())["card"]
    documents = sorted(card["data"]["held_out_contracts"])
    (out / "documents").mkdir(parents=True, exist_ok=True)
    qa, truth, meta = [], [], []
    for turn, (document, (key, (pattern, claims))) in enumerate((d, k) for d in documents for k in KINDS.items()):
        text = (source / "documents" / document).read_text(encoding="utf-8", errors="replace")
        if not (out / "documents" / document).exists():
            shutil.copyfile(source / "documents" / document, out / "documents" / document)
        label = "supported" if re.search(pattern, text, re.I) else "unsupported"
        claim, answer_id = claims[turn % 3], f"{document.removesuffix('.txt')}-{key}"
        question = f"Does the contract have a {key.replace('-', ' ')} clause?"
        qa.append({"id": answer_id, "document": document, "question": question, "answer": claim, "source": "probe"})
        truth.append({"id": answer_id, "labels": [{"start": 0, "end": len(claim), "text": claim, "label": label}]})
        meta.append({"id": answer_id, "document": document, "kind": key, "label": label, "synthetic": True})
    for name, rows in (("qa", qa), ("truth", truth), ("meta", meta)):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="where the probe's folder is written (default: a temporary one)")
    args = parser.parse_args()
    folder = probe(args.out or Path(tempfile.mkdtemp(prefix="unseen-kinds-")) / "unseen-kinds")
    labels, flagged = run_probe(folder)
    never, there = flagged["unsupported"], flagged["supported"]
    print(
        f"{sum(labels.values())} claims of 8 kinds nobody trained on ({labels['unsupported']} never made):"
        f" never-made flagged {never[0]} of {never[1]} ({never[0] / never[1]:.2f}), false alarms {there[0]} of"
        f" {there[1]} ({there[0] / there[1]:.2f}); flag-everything 1.00 at 1.00"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
