"""The claim checker on denials of kinds of clause ("The parties are free to compete with each other") in a fourth
hand's words, on the 110 contracts the kind reader holds out: contradicted where CUAD's experts marked such a clause
in the contract, correct where they did not.

    .venv/bin/python bench/kind_denials.py [--out FOLDER] [--hand bench/data/kind_denials_fifth_hand.json]

Each contract gets a denial of each of the 14 kinds its claims in wordings 3-5 are about (CUAD's kinds of clause
measured by bench/engine_card.py, governing law aside: a value), the wording dealt out in turn among three. The
wordings were written for measurement on 30 Nov 2026 and nothing learnt from them; but `kinds.denies` was widened
after reading what this probe missed, so for the words that deny, it is not held out by wording: read its figures
as a development set's. Two more hands were written on 30 Nov 2026 by other models' sessions that read nothing of
Assay (--hand: six denials a kind each): the fifth's were read, and are a second development set; the sixth's
(bench/data/kind_denials_sixth_hand.json) were never read here, and measure what was mended after reading the
others. Counted as ../shared/checks/score_real_errors.py counts, beside flag-everything.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package

from engine_card import KIND_WORDINGS, cuad_folder  # noqa: E402
from real_errors import run_probe  # noqa: E402

# fmt: off
DENIALS = {
    "anti-assignment": [
        "Either party may assign the agreement freely, without anyone's consent.",
        "Nothing in the agreement restricts a party from transferring it.",
        "The contract lets each side hand its rights to a third party at will."],
    "termination-for-convenience": [
        "Neither party may end the agreement without cause.",
        "The agreement can only be terminated for breach.",
        "No party can walk away from the contract simply by giving notice."],
    "license-grant": [
        "The agreement does not grant any license.",
        "No licence of any rights is given under this contract.",
        "Neither party receives permission to use the other's intellectual property."],
    "cap-on-liability": [
        "Liability under the agreement is unlimited.",
        "The contract puts no ceiling on the damages a party can recover.",
        "Each party's exposure for breach is uncapped."],
    "insurance": [
        "Neither party is required to carry insurance.",
        "The agreement imposes no obligation to maintain insurance coverage.",
        "No party has to buy any insurance policy."],
    "exclusivity": [
        "The arrangement is non-exclusive in every respect.",
        "No party is granted exclusive rights.",
        "Each party remains free to deal with anyone else on the same terms."],
    "audit-rights": [
        "Neither party may audit the other's records.",
        "The agreement gives no right to inspect books or premises.",
        "No party can check the other's accounts."],
    "change-of-control": [
        "A merger or acquisition of a party has no consequence under the agreement.",
        "The contract does not address a change in ownership of either party.",
        "A party can be acquired without triggering any consent or termination right."],
    "ip-ownership-assignment": [
        "No intellectual property is assigned between the parties.",
        "Each party keeps whatever IP it creates; nothing is transferred to the other.",
        "Ownership of inventions stays with whoever made them."],
    "liquidated-damages": [
        "No fixed sum is payable on breach or termination.",
        "The contract does not provide for liquidated damages or a termination fee.",
        "Damages for breach are not pre-agreed."],
    "warranty-duration": [
        "The agreement gives no warranty lasting a set period.",
        "Warranties under the contract have no fixed duration.",
        "Nothing is warranted for any specific length of time."],
    "non-compete": [
        "The parties are free to compete with each other.",
        "Nothing restricts a party from offering competing products.",
        "Either side may go into a competing business at any time."],
    "no-solicit-of-employees": [
        "Either party may hire the other's employees.",
        "There is no restriction on poaching the other side's staff.",
        "The contract does not stop a party recruiting the other's personnel."],
    "most-favored-nation": [
        "No party is promised terms as good as those given to others.",
        "The agreement contains no most-favoured-customer protection.",
        "Better pricing offered to other customers need not be passed on."],
}
# fmt: on


def probe(out: Path, denials: dict[str, list[str]] = DENIALS) -> Path:
    """The probe's folder (qa, truth, meta and the contracts), built from build/cuad-claims: each answer denies its
    kind in one of `denials`' wordings of it, dealt out in turn."""
    source = cuad_folder("cuad-claims")
    card = json.loads((ROOT / "resources" / "claim_checker" / "kinds.json").read_text())["card"]
    held = set(card["data"]["held_out_contracts"])
    questions = {r["id"]: r["question"] for r in map(json.loads, (source / "qa.jsonl").read_text().splitlines())}
    (out / "documents").mkdir(parents=True, exist_ok=True)
    qa, truth, meta = [], [], []
    rows = [json.loads(line) for line in (source / "meta.jsonl").read_text().splitlines()]
    for turn, m in enumerate(rows):
        wanted = m["document"] in held and m["wording"] in KIND_WORDINGS and m["kind"] in denials
        if not wanted or m["nli_label"] not in ("Entailment", "NotMentioned"):
            continue
        if not (out / "documents" / m["document"]).exists():
            shutil.copyfile(source / "documents" / m["document"], out / "documents" / m["document"])
        wordings = denials[m["kind"]]
        claim, there = wordings[turn % len(wordings)], m["nli_label"] == "Entailment"
        answer, answer_id = f"No. {claim}", f"{m['id']}-denied"
        label = "contradicted" if there else "supported"
        qa.append({"id": answer_id, "document": m["document"], "question": questions[m["id"]], "answer": answer})
        truth.append({"id": answer_id, "labels": [{"start": 4, "end": len(answer), "text": claim, "label": label}]})
        meta.append({"id": answer_id, "document": m["document"], "kind": m["kind"], "label": label})
    for name, found in (("qa", qa), ("truth", truth), ("meta", meta)):
        (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in found))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="where the probe's folder is written (default: a temporary one)")
    parser.add_argument("--hand", type=Path, help="another hand's denials (JSON: a list of wordings for each kind)")
    args = parser.parse_args()
    denials = json.loads(args.hand.read_text())["denials"] if args.hand else DENIALS
    folder = probe(args.out or Path(tempfile.mkdtemp(prefix="kind-denials-")) / "kind-denials", denials)
    labels, flagged = run_probe(folder)
    caught, wrong = flagged["contradicted"], flagged["supported"]
    print(
        f"{sum(labels.values())} denials of {len(denials)} kinds of clause ({labels['contradicted']} of a clause the"
        " contract has):"
        f" contradicted flagged {caught[0]} of {caught[1]} ({caught[0] / caught[1]:.2f}), true denials flagged"
        f" {wrong[0]} of {wrong[1]} ({wrong[0] / wrong[1]:.2f}); flag-everything 1.00 at 1.00"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
