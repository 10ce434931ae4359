"""Judging at scale: the OpenAI-compatible backend with N answers in flight, against a real local
`llama_cpp.server` serving the embedded model, measured side by side with one answer at a time.

    .venv/bin/python bench/judge_concurrency.py [--answers 4] [--parallel 1,4]

Each setting judges the same answers (two-stage tags, no missing-point step) as a new run in its own
copy of the project, so no run reuses another's work. Prints wall time per setting and the speed-up
over one request at a time. The server's KV cache is warmed by one untimed pass first.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from app.ingest.datasets import import_dataset
from app.judging.runs import JudgeSettings, make_backend, run_judge
from app.project import SAMPLE_DATASET, Project
from models.backends.llama_local import embedded_model_path
from storage.db import url_for_path
from tests.judge_helpers import llama_cpp_server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=4)
    parser.add_argument("--parallel", default="1,4")
    parser.add_argument("--document", default="DoiT-ICN-NonDisclosure-Agreement.txt")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp())
    seed = folder / "seed.assay"
    project = Project.open(url_for_path(seed))
    import_dataset(project.sessions, SAMPLE_DATASET)
    answers = [a.id for a in project.answers() if a.document == args.document][: args.answers]
    project.close()
    print(f"{len(answers)} answers about {args.document}, two-stage tags, llama_cpp.server on 127.0.0.1")

    with llama_cpp_server(str(embedded_model_path())) as base_url:
        base = JudgeSettings(
            backend="openai", model="smollm2", base_url=base_url, allow_network=True, find_missing=False
        )
        timings: dict[int, float] = {}
        settings_to_time = [int(n) for n in args.parallel.split(",")]
        for i, parallel in enumerate([1, *settings_to_time]):  # the first pass only warms the server
            copy = folder / f"pass{i}.assay"
            shutil.copy(seed, copy)
            project = Project.open(url_for_path(copy))
            settings = replace(base, parallel=parallel)
            started = time.perf_counter()
            summary = run_judge(
                project.sessions, settings.judge(make_backend(settings)), "bench", answer_ids=answers, parallel=parallel
            )
            seconds = time.perf_counter() - started
            project.close()
            if i == 0:
                print(f"warm-up: {seconds:.1f} s")
                continue
            timings[parallel] = seconds
            print(
                f"parallel {parallel}: {seconds:6.1f} s  ({summary.judged} judged, {summary.failed} failed)  "
                f"speed-up {timings[1] / seconds if 1 in timings else 1.0:.2f}x"
            )
    shutil.rmtree(folder)


if __name__ == "__main__":
    main()
