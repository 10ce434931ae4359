"""The passage shown first on contracts no exemplar knows: LegalBench-RAG's rows whose clause the benchmark
marks (`gold_spans`: CUAD and PrivacyQA, ../shared/datasets/legalbench_rag_qa), never trained on. The
ranker learnt from ContractNLI's NDAs; here the claims are an LLM's long answers about affiliate and
licence agreements and a privacy policy, which the exemplar memory does not know.

    .venv/bin/python bench/evidence_legalbench.py

The folder is imported into a fresh project, as a user would, and verified twice in one run: evidence by
words (what shows when the encoders are missing) and by meaning (the shipped encoders and ranker; on
contracts only: the privacy policy reads as "other" and is found by words in both). Printed for each
source: the share of points whose first passage overlaps a marked clause, and the share of answers
where at least one point's does. Many points of these answers are about something else than the marked
clause ("the excerpt does not say the year"), so both shares are coarse: read them side by side.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "datasets" / "legalbench_rag_qa"
ASSAY = str(Path(sys.executable).parent / "assay")


def main() -> int:
    from app.judging.verification import Verifier, verify_project
    from app.project import Project
    from storage import documents
    from storage.db import url_for_path

    rows = [json.loads(line) for line in (DATA / "qa.jsonl").read_text().splitlines() if line.strip()]
    marked = {r["id"]: r for r in rows if r.get("gold_spans")}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        project_file = work / "p.assay"
        subprocess.run([ASSAY, "--project", str(project_file), "import", str(DATA)], check=True, capture_output=True)
        project = Project.open(url_for_path(project_file))
        with project.sessions() as session:
            spans = {
                (name, p.citation_id): (p.char_start, p.char_end)
                for name in {r["document"] for r in marked.values()}
                for p in documents.passages_of(session, documents.document_id_by_name(session, name) or -1)
            }
        for name, neural in (("by words", False), ("by meaning (shipped encoders)", True)):
            verifier = Verifier(project.sessions, neural=neural)
            assert not neural or verifier.engine.encoders is not None, verifier.engine.note
            started = time.perf_counter()
            reports = verify_project(project.sessions, sorted(marked), save=False, verifier=verifier)
            seconds = time.perf_counter() - started
            points: dict[str, list[bool]] = {}
            answers: dict[str, list[bool]] = {}
            for report in reports:
                row = marked[report.answer_id]
                hit = []
                for p in report.points:
                    span = spans.get((row["document"], p.passage)) if p.passage else None
                    gold = row["gold_spans"]
                    hit.append(span is not None and any(span[0] < g["end"] and g["start"] < span[1] for g in gold))
                points.setdefault(row["source"], []).extend(hit)
                answers.setdefault(row["source"], []).append(any(hit))
            shares = "; ".join(
                f"{source}: points {np.mean(points[source]):.2f} of {len(points[source])}, "
                f"answers {np.mean(answers[source]):.2f} of {len(answers[source])}"
                for source in sorted(points)
            )
            print(f"evidence on LegalBench-RAG {name}: {shares} ({seconds:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
