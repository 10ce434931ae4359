"""The whole shipped engine measured on the held-out sets of the checker's newer parts, written as the card
the standing counts (issue 65 §5: "the standing the window shows counts the new parts' held-out figures,
each answer once"):

    nice -n 10 .venv/bin/python bench/engine_card.py [--working-tree] [--out FILE]

What is measured is the last commit (`git archive HEAD`, run from a copy), not the working tree, where other
people's unfinished edits may lie; `--working-tree` measures the files as they are here. Each set is imported
into a fresh project and checked by `assay verify --json`, as a user would, and counted
as ../shared/checks/score_real_errors.py counts it (an answer with an error is caught when one of its points
is flagged `incorrect`; a correct answer with a flag is a false alarm). The entries are written to
resources/claim_checker/engine_held_out.json, which is then pinned in manifest.json; models.checker's
`shipped_held_out` adds them to the data cards' entries, but only while `measured_with` is the SHA-256 of the
manifest measured (less the card's own line: manifest.artefacts_sha256), so a card whose artefacts differ
from those that ship counts nothing until it is measured again. The sets:

- the statement reader's: contractnli-dev's first 12 NDAs, each of ContractNLI's 17 statements in a lawyer's
  wording (packaging/training/data/nda_wordings.json, wordings 3-5, never learnt), as
  `bench/wordings.py --documents 12` measures them. They are other answers about NDAs whose statements the
  data card's contractnli-dev entry counts in ContractNLI's own wording, with the same labels, and the
  encoders learnt those NDAs in that wording: held out by wording, not by document;
- the value rules': CUAD v1's dates and terms (training.cuad_terms, all six wordings) of contracts
  cuad-296 onwards, which nobody read while the rules were written (the misses and false alarms that taught
  them were read on cuad-067..178 and cuad-180..295);
- the clause-kind reader's: CUAD v1's kinds of clause (training.cuad_claims) in wordings 3-5 of the 110
  contracts its card holds out (kinds.json: card.data.held_out_contracts).
The CUAD sets are cut from build/cuad-terms and build/cuad-claims, which those two scripts write (byte for
byte again from the CUAD mirror; built here when missing). No two sets share an answer (checked here).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "packaging"))  # the training package

import wordings  # noqa: E402

from models.checker.manifest import ENGINE_CARD, RESOURCES, artefacts_sha256, pin  # noqa: E402
from training.paths import DATA  # noqa: E402

ASSAY = str(Path(sys.executable).parent / "assay")
SCORER = ROOT.parent / "shared" / "checks" / "score_real_errors.py"
MIRROR = ROOT.parent / ".mirror" / "maastrichtlawtech+law3027-advanced-legal-analytics" / "repo"
BUILD = ROOT / "build"
NDAS = 12  # bench/wordings.py --documents 12, as the statement reader was measured
TERMS_CONTRACTS = range(296, 1000)  # cuad-296 onwards: never read while the value rules were written
KIND_WORDINGS = (3, 4, 5)  # the kind reader's measured wordings (training.cuad_claims.TEST_WORDINGS)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cuad_folder(name: str) -> Path:
    """build/<name> as training.cuad_terms or training.cuad_claims writes it, built from the mirror if missing."""
    folder = BUILD / name
    if not (folder / "qa.jsonl").exists():
        module = {"cuad-terms": "training.cuad_terms", "cuad-claims": "training.cuad_claims"}[name]
        command = [sys.executable, "-m", module, "--git-dir", str(MIRROR), "--out", str(folder)]
        environment = {**os.environ, "PYTHONPATH": f"{ROOT / 'packaging'}:{ROOT}"}
        subprocess.run(command, check=True, cwd=ROOT, env=environment)
    return folder


def cut(source: Path, keep: Callable[[dict[str, Any]], bool], name: str) -> Path:
    """A folder of the source's answers whose meta row `keep` accepts, with copies of their documents (the
    importer refuses a document that is a link out of its folder)."""
    meta = {m["id"]: m for m in _jsonl(source / "meta.jsonl")}
    ids = {i for i, m in meta.items() if keep(m)}
    out = Path(tempfile.mkdtemp(prefix="engine-card-")) / name
    (out / "documents").mkdir(parents=True)
    for file in ("qa.jsonl", "truth.jsonl", "meta.jsonl"):
        rows = [r for r in _jsonl(source / file) if r["id"] in ids]
        (out / file).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    for document in sorted({meta[i]["document"] for i in ids}):
        shutil.copyfile(source / "documents" / document, out / "documents" / document)
    return out


def committed() -> tuple[Path, str]:
    """A copy of the last commit's files, and its hash."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True)
    tree = Path(tempfile.mkdtemp(prefix="engine-card-tree-"))
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree, commit.stdout.strip()


def sets(tree: Path) -> list[tuple[str, Path]]:
    """(the entry's set name, the folder) for each held-out set; the kind reader's held-out contracts as the
    measured tree's kinds.json names them."""
    # the measured tree's wordings, not the ones here (others may be editing them)
    wordings.WORDINGS = tree / "packaging" / "training" / "data" / "nda_wordings.json"  # type: ignore[attr-defined]
    ndas = wordings.reworded(DATA / "contractnli-dev", NDAS, "test")
    terms = cut(cuad_folder("cuad-terms"), lambda m: int(m["document"][5:8]) in TERMS_CONTRACTS, "cuad-terms-unread")
    kinds_card = tree / "resources" / "claim_checker" / "kinds.json"
    held = set(json.loads(kinds_card.read_text())["card"]["data"]["held_out_contracts"])
    kinds = cut(
        cuad_folder("cuad-claims"),
        lambda m: m["document"] in held and m["wording"] in KIND_WORDINGS,
        "cuad-kinds-heldout",
    )
    return [
        (
            f"contractnli-dev's first {NDAS} NDAs, statements in a lawyer's wording (nda_wordings 3-5; the same"
            " NDAs and labels as contractnli-dev's entry, which counts the answers in ContractNLI's own wording;"
            " held out by wording, not by document)",
            ndas,
        ),
        ("CUAD dates and terms, contracts cuad-296 onwards (never read while the value rules were written)", terms),
        ("CUAD kinds of clause, wordings 3-5 of the 110 contracts the clause-kind reader holds out", kinds),
    ]


def measure(name: str, folder: Path, tree: Path, measured_with: str, code: str) -> dict[str, Any]:
    """One entry: the folder checked by the tree's `assay verify --json` in a fresh project, counted by the
    shared scorer."""
    work = Path(tempfile.mkdtemp(prefix="engine-card-project-"))
    project = str(work / "p.assay")
    environment = {**os.environ, "PYTHONPATH": str(tree)}  # ahead of the editable install's finder
    command = [ASSAY, "--project", project]
    subprocess.run([*command, "import", str(folder)], cwd=tree, env=environment, check=True, capture_output=True)
    started = time.perf_counter()
    verified = subprocess.run([*command, "verify", "--json"], cwd=tree, env=environment, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    # a figure of the words-only fallback (an encoder file missing or altered) is not the engine's
    if verified.returncode or "words only" in verified.stderr:
        raise SystemExit(f"{name}: assay verify did not run the shipped engine:\n{verified.stderr[-2000:]}")
    (work / "v.json").write_text(verified.stdout)
    scored = subprocess.run(
        [sys.executable, str(SCORER), str(folder), str(work / "v.json")], check=True, capture_output=True, text=True
    )
    figures = json.loads(scored.stdout)
    by_label = figures["flagged_by_label"]
    false_alarms, correct = by_label.get("supported", [0, 0])
    caught = sum(flagged for label, (flagged, _) in by_label.items() if label != "supported")
    with_errors = figures["answers_with_error"]
    assert (
        with_errors + correct == figures["answers"]
        and round(caught / with_errors, 3) == (figures["answer_flagged"]["recall"])
    ), figures
    shutil.rmtree(work)
    return {
        "set": name,
        "kind": "contract",
        "shipped": True,
        "answers": figures["answers"],
        "documents": len({r["document"] for r in _jsonl(folder / "qa.jsonl")}),
        "with_errors": with_errors,
        "caught": caught,
        "correct": correct,
        "false_alarm_count": false_alarms,
        "recall": figures["answer_flagged"]["recall"],
        "false_alarms": figures["answer_flagged"]["false_alarm_on_clean"],
        "flagged_by_label": by_label,
        "supported_precision": figures["supported_precision"],
        "supported_n": figures["supported_n"],
        "measured_with": measured_with,
        "code": code,
        "date": datetime.date.today().isoformat(),
        "seconds": round(seconds),
    }


def answers_once(folders: list[Path]) -> None:
    """No answer in two sets; the lawyer's wordings are other answers than ContractNLI's own (the same ids)."""
    own = {r["id"]: r["answer"] for r in _jsonl(DATA / "contractnli-dev" / "qa.jsonl")}
    seen: dict[str, str] = {}
    for folder in folders:
        for row in _jsonl(folder / "qa.jsonl"):
            assert row["id"] not in seen, f"{row['id']} is in {seen[row['id']]} and {folder}"
            seen[row["id"]] = str(folder)
            assert own.get(row["id"]) != row["answer"], f"{row['id']}: this answer is in contractnli-dev's entry"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESOURCES / ENGINE_CARD, help="the card (default: the shipped one)")
    parser.add_argument("--working-tree", action="store_true", help="measure the files here, not the last commit")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.working_tree:
        tree, code = ROOT, "the working tree"
    else:
        tree, commit = committed()
        code = f"commit {commit}"
    manifest = tree / "resources" / "claim_checker" / "manifest.json"
    measured_with = artefacts_sha256(manifest)
    chosen = sets(tree)
    answers_once([folder for _, folder in chosen])
    entries = []
    for name, folder in chosen:
        entries.append(measure(name, folder, tree, measured_with, code))
        print(json.dumps(entries[-1], ensure_ascii=False), flush=True)
    if artefacts_sha256(manifest) != measured_with:  # retrained during the run: the figures are of neither
        raise SystemExit("the manifest changed while the engine was measured: nothing written; run it again")
    for _, folder in chosen:
        shutil.rmtree(folder.parent)  # each set's own temporary folder
    if tree != ROOT:
        shutil.rmtree(tree)
    card = {
        "about": "The whole shipped engine (`assay verify`) on the held-out sets of the checker's newer parts,"
        " counted as ../shared/checks/score_real_errors.py counts; written by bench/engine_card.py. An entry counts"
        " in the standing only while `measured_with` is manifest.artefacts_sha256() (models/checker/encoder.py).",
        "held_out": entries,
    }
    args.out.write_text(json.dumps(card, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.out.resolve() == (RESOURCES / ENGINE_CARD).resolve():
        pin(args.out)
    counted = ("answers", "with_errors", "caught", "correct", "false_alarm_count")
    total = {k: sum(e[k] for e in entries) for k in counted}
    print(f"{args.out}: {total}; {time.perf_counter() - started:.0f} s in all", flush=True)
    if artefacts_sha256() != measured_with:
        print(f"the artefacts here differ from those {code} pins: the standing counts this card only with those")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
