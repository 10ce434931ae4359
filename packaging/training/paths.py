"""The one place that names where training reads and writes, and the documents it never learns from.
Imports nothing heavy: the GPU step of train_cross_encoder runs where only torch is installed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
DATA = ROOT.parent / "shared" / "datasets" / "real_errors"  # the labelled folders
# lists the training documents that overlap a document Assay is measured on (every training set is run by it)
OVERLAP_CHECK = ROOT.parent / "shared" / "checks" / "held_out_overlap.py"
HELD_OUT = Path(__file__).resolve().parent / "data" / "cross_held_out.npz"  # the cross-encoder's held-out scores
RESOURCES = ROOT / "resources" / "claim_checker"  # what ships
# The sample project's labelled NDAs (resources/sample): never trained on, so the standing a new user
# sees there is a held-out figure.
SAMPLE_DOCUMENTS = frozenset({"contractnli-dev-0015.txt", "contractnli-dev-0488.txt"})
# ContractNLI's 17 statements in six wordings each, written for Assay: 0-2 may be learnt, 3-5 only measured
WORDINGS = Path(__file__).resolve().parent / "data" / "nda_wordings.json"


def overlapping(folder: Path) -> set[str]:
    """The names of the documents in `folder` that ../shared/checks/held_out_overlap.py lists."""
    done = subprocess.run([sys.executable, str(OVERLAP_CHECK), str(folder)], capture_output=True, text=True)
    names = {Path(line.split(" ", 2)[2]).name for line in done.stdout.splitlines() if line.startswith("OVERLAP")}
    if done.returncode not in (0, 1) or bool(names) != (done.returncode == 1):
        raise SystemExit(f"held_out_overlap.py failed ({done.returncode}): {done.stderr.strip()}")
    return names


def overlapping_texts(texts: list[str]) -> set[str]:
    """The texts held_out_overlap.py lists (a short claim that shares one 8-word run with a measurement
    document is listed too): the caller drops them."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as f:
        f.write("".join(json.dumps({"text": t}) + "\n" for t in texts))
        f.flush()
        done = subprocess.run(
            [sys.executable, str(OVERLAP_CHECK), "--jsonl", f.name, "--field", "text"], capture_output=True, text=True
        )
    listed = {int(m) for m in re.findall(r"^OVERLAP \S+ \S+:(\d+)$", done.stdout, re.M)}
    if done.returncode not in (0, 1) or (done.returncode == 1 and not listed):
        raise SystemExit(f"held_out_overlap.py failed: {done.stderr or done.stdout}")
    return {texts[n - 1] for n in listed}
