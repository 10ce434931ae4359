"""How long `assay import-labels` takes on a large labels file, and how soon it refuses one whose last
line is bad (before anything is written).

The project: the sample's 153 answers, each copied under 17 ids (2,601 answers). The file: 100 raters
on every answer, one line each with a data point of the answer (about 200 bytes a line, like the
51 MB file of 259 k lines that took 19 minutes before). Its last lines on 2026-11-25, on this 2-core
machine shared with other work (load 7 to 8), so the CPU time is the figure to compare:

    labels: 260,100 lines (54.7 MB) imported in 115.9 s (2,244 lines/s; 40.1 s of CPU)
    a bad last line refused after 17.6 s, nothing written

Run: .venv/bin/python bench/labels_import.py [--answers-per-question 17] [--raters 100]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.errors import InvalidInput
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.project import SAMPLE_DATASET, Project
from models.segmentation import segment_answer
from storage.db import url_for_path

TAGS = ("correct", "incorrect", "irrelevant", "correct")
# Well formed, so only the check against the project, after every line, finds it: the worst case.
BAD_LINE = b'{"answer_id": "no such answer", "rater": "x", "data_points": [{"text": "x", "tag": "correct"}]}\n'


def _dataset(folder: Path, copies: int) -> Path:
    """The sample's answers, each under `copies` ids, with the sample's documents."""
    lines = (SAMPLE_DATASET / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    out = folder / "dataset"
    (out / "documents").mkdir(parents=True)
    for document in (SAMPLE_DATASET / "documents").iterdir():
        (out / "documents" / document.name).write_bytes(document.read_bytes())
    with (out / "qa.jsonl").open("w", encoding="utf-8") as handle:
        for n in range(copies):
            for line in lines:
                record = json.loads(line)
                record["id"] = f"{record['id']}-{n}"
                handle.write(json.dumps(record) + "\n")
    return out


def _labels(project: Project, path: Path, raters: int) -> int:
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for answer in project.answers():
            detail = project.answer(answer.id)
            assert detail is not None
            segments = segment_answer(detail.text) or []
            if not segments:
                continue
            for r in range(raters):
                segment = segments[r % len(segments)]
                point = {"text": segment.text[:120], "tag": TAGS[(r + count) % len(TAGS)]}
                line = {"answer_id": answer.id, "rater": f"rater-{r:03d}", "kind": "human", "data_points": [point]}
                handle.write(json.dumps(line) + "\n")
                count += 1
    return count


_shown = [-1]


def _progress(done: int, total: int) -> None:
    """The progress the command line draws as a bar: here, a line a tenth of the way."""
    if done * 10 // total != _shown[0]:
        _shown[0] = done * 10 // total
        print(f"  {done:,}/{total:,} lines", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers-per-question", type=int, default=17)
    parser.add_argument("--raters", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project = Project.open(url_for_path(root / "bench.assay"))
        import_dataset(project.sessions, _dataset(root, args.answers_per_question))
        labels = root / "labels.jsonl"
        lines = _labels(project, labels, args.raters)
        size = labels.stat().st_size / 1e6

        bad = root / "bad.jsonl"
        bad.write_bytes(labels.read_bytes() + BAD_LINE)
        counts = project.counts()
        started = time.perf_counter()
        try:
            import_labels(project, bad)
        except InvalidInput as exc:
            refused = time.perf_counter() - started
            print(f"refused: {exc}", file=sys.stderr)
        assert project.counts() == counts, "the refused file changed the project"

        started, cpu = time.perf_counter(), time.process_time()
        summary = import_labels(project, labels, on_progress=_progress)
        took, cpu = time.perf_counter() - started, time.process_time() - cpu
        project.close()
    assert summary.lines == lines
    print(
        f"labels: {lines:,} lines ({size:.1f} MB) imported in {took:.1f} s ({lines / took:,.0f} lines/s; "
        f"{cpu:.1f} s of CPU)"
    )
    print(f"a bad last line refused after {refused:.1f} s, nothing written")


if __name__ == "__main__":
    main()
