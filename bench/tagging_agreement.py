"""One-pass tagging against per-point tagging on the same answers, at temperature 0 (log-probabilities,
no sampling): how often the tags agree (and Cohen's kappa), the time each takes, and each one's
stress-test recall (app.judging.stress.stress_test, both judges perturbing the same base points).

    nice .venv/bin/python bench/tagging_agreement.py [--dataset DIR] [--documents A,B] [--answers 10] [--stress 3]

Two-stage, without the missing-point step for the agreement (it is the same generation in both modes);
the stress test includes it, since a removed point can only be caught as `missing`.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path

from app.ingest.datasets import import_dataset
from app.judging.cases import judge_case as _case
from app.judging.runs import run_judge
from app.judging.stress import stress_test
from app.project import SAMPLE_DATASET, Project
from models.backends.llama_local import LlamaBackend
from models.judge import LemajJudge, Mode, Tagging
from storage.db import url_for_path

DEFAULT_DOCUMENTS = "DoiT-ICN-NonDisclosure-Agreement.txt,EFCAConfidentialityAgreement.txt,Keep.txt"


def main() -> None:
    from sklearn.metrics import cohen_kappa_score

    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, default=SAMPLE_DATASET, help="the shared set by default")
    parser.add_argument("--documents", default=DEFAULT_DOCUMENTS, help="comma-separated document names")
    parser.add_argument("--answers", type=int, default=10, help="answers per document")
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--stress", type=int, default=3, help="answers perturbed by the stress test (0: none)")
    args = parser.parse_args()

    project = Project.open(url_for_path(Path(tempfile.mkdtemp()) / "agreement.assay"))
    import_dataset(project.sessions, args.dataset)
    wanted = args.documents.split(",")
    answers = [a.id for d in wanted for a in [a for a in project.answers() if a.document == d][: args.answers]]
    backend = LlamaBackend(context_tokens=args.context, threads=2)
    judges = {t: LemajJudge(backend, Mode.TWO_STAGE, find_missing=False, tagging=t) for t in Tagging}
    tags: dict[Tagging, list[str]] = {t: [] for t in Tagging}
    seconds: Counter[Tagging] = Counter()
    tokens: Counter[Tagging] = Counter()
    for answer_id in answers:
        with project.sessions() as session:
            case, _ = _case(session, judges[Tagging.PER_POINT], answer_id)
        for tagging, judge in judges.items():  # both after the same cached document
            started = time.perf_counter()
            verdict = judge.evaluate(case)
            seconds[tagging] += time.perf_counter() - started
            tokens[tagging] += verdict.evaluated_tokens
            tags[tagging] += [p.tag.value for p in verdict.points if p.tag is not None]
        so_far = sum(a == b for a, b in zip(tags[Tagging.ONE_PASS], tags[Tagging.PER_POINT], strict=True))
        print(f"  {answer_id}: {so_far}/{len(tags[Tagging.ONE_PASS])} tags agree so far", flush=True)

    one, per = tags[Tagging.ONE_PASS], tags[Tagging.PER_POINT]
    same = sum(a == b for a, b in zip(one, per, strict=True))
    print(f"{len(answers)} answers over {len(wanted)} documents, {len(one)} data points")
    for tagging in Tagging:
        print(
            f"{tagging.value:10} {seconds[tagging] / len(answers):6.2f} s/answer  "
            f"tokens evaluated {tokens[tagging]:7d}  tags {dict(Counter(tags[tagging]))}"
        )
    print(f"agreement one-pass vs per-point: {same}/{len(one)} = {same / len(one):.3f}")
    print(f"Cohen's kappa one-pass vs per-point: {cohen_kappa_score(one, per):.3f}")

    if args.stress:
        # The base: the per-point run's correct points; both taggings judge the same perturbations.
        base = LemajJudge(backend, Mode.TWO_STAGE, find_missing=False, tagging=Tagging.PER_POINT)
        run_judge(project.sessions, base, "base", answer_ids=answers)
        for tagging in Tagging:
            judge = LemajJudge(backend, Mode.TWO_STAGE, find_missing=True, tagging=tagging)
            report = stress_test(project, judge, "base", limit=args.stress)
            per_type = {k: f"{v['detected']}/{v['cases']}" for k, v in (report.per_type or {}).items()}
            found = sum(v["detected"] for v in (report.per_type or {}).values())
            cases = sum(v["cases"] for v in (report.per_type or {}).values())
            print(
                f"stress test, {tagging.value}: recall {found}/{cases} {per_type}  "
                f"false alarms {report.false_alarms}/{report.untouched_points}",
                flush=True,
            )


if __name__ == "__main__":
    main()
