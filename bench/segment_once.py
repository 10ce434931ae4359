"""How often, and at what cost, answers are segmented (issue 66 §3, segment once): importing the sample
(153 answers), importing 10,000 answers (the sample's answers under 66 ids each, 10,098) and a span label
on each of them (the import that segments), and verifying the sample with the claim checker (words only,
the findings saved), twice: a second `verify` of the same answers, as after a change of the checker. Each
figure with its CPU time (the machine is shared) and the calls to `segment_answer` it made.

Run against two checkouts side by side (before: `git archive <commit> | tar -x -C /tmp/before`):

    taskset -c 0,1 .venv/bin/python bench/segment_once.py
    (cd /tmp/before && PYTHONPATH=. /work/main/.venv/bin/python /work/main/bench/segment_once.py)
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path.cwd()))  # the checkout being measured (this one, or one made before)


def _dataset(sample: Path, folder: Path, copies: int) -> Path:
    """The sample's answers, each under `copies` ids, with the sample's documents."""
    lines = (sample / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    out = folder / f"dataset-{copies}"
    (out / "documents").mkdir(parents=True)
    for document in (sample / "documents").iterdir():
        (out / "documents" / document.name).write_bytes(document.read_bytes())
    with (out / "qa.jsonl").open("w", encoding="utf-8") as handle:
        for n in range(copies):
            for line in lines:
                record = json.loads(line)
                record["id"] = f"{record['id']}-{n}"
                handle.write(json.dumps(record) + "\n")
    return out


class _Counted:
    """`segment_answer` wherever a module imported it, counting its calls."""

    def __init__(self) -> None:
        import models.segmentation as segmentation

        self.calls = 0
        original = segmentation.segment_answer

        def counted(answer: str) -> Any:
            self.calls += 1
            return original(answer)

        for module in list(sys.modules.values()):
            if getattr(module, "segment_answer", None) is original:
                module.segment_answer = counted  # type: ignore[attr-defined]

    def measure(self, what: Callable[[], object]) -> tuple[float, float, int]:
        calls, started, cpu = self.calls, time.perf_counter(), time.process_time()
        what()
        return time.perf_counter() - started, time.process_time() - cpu, self.calls - calls


def main() -> None:
    import app.judging.verification as verification
    from app.ingest.datasets import import_dataset
    from app.ingest.labels import import_labels
    from app.project import SAMPLE_DATASET, Project
    from storage.db import url_for_path

    counted = _Counted()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project = Project.open(url_for_path(root / "sample.assay"))
        took = counted.measure(lambda: import_dataset(project.sessions, SAMPLE_DATASET))
        answers = len(project.answers())
        rows.append((f"import the sample ({answers} answers)", *took))
        verifier = verification.Verifier(project.sessions, neural=False)
        took = counted.measure(lambda: verification.verify_project(project.sessions, verifier=verifier))
        rows.append(("verify the sample, saved (words only)", *took))
        took = counted.measure(lambda: verification.verify_project(project.sessions, verifier=verifier))
        rows.append(("verify the sample again", *took))
        project.close()

        big = Project.open(url_for_path(root / "big.assay"))
        dataset = _dataset(SAMPLE_DATASET, root, 66)
        took = counted.measure(lambda: import_dataset(big.sessions, dataset))
        ids = [a.id for a in big.answers()]
        rows.append((f"import {len(ids):,} answers", *took))
        spans = root / "spans.jsonl"  # a span label on each: the import segments the answers
        with spans.open("w", encoding="utf-8") as handle:
            for answer_id in ids:
                line = {
                    "answer_id": answer_id,
                    "rater": "spans",
                    "spans": [{"start": 0, "end": 3, "label": "unsupported"}],
                }
                handle.write(json.dumps(line) + "\n")
        took = counted.measure(lambda: import_labels(big, spans))
        rows.append((f"import span labels on the {len(ids):,}", *took))
        big.close()
    print(f"  {'':40} {'wall':>9}  {'CPU':>9}  {'segment_answer calls':>20}")
    for what, took, cpu, calls in rows:
        print(f"  {what:40} {took:7.2f} s  {cpu:7.2f} s  {calls:20,}")


if __name__ == "__main__":
    main()
