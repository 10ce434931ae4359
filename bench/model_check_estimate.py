"""Does "Check this model" foresee how long the judging takes? Its estimate against a measured run.

    .venv/bin/python bench/model_check_estimate.py [--per-contract N] [--size N]

Makes the bundled sample (with its ContractNLI labels) in a fresh project and fresh judge-state folder,
checks the embedded model as the picker's button does (12 labelled answers by default), then judges
a subset of the sample from a cold start and compares the measured time with the check's estimate for
that subset. The subset is the first N answers (default 5) of each of the sample's 12 contracts:
short NDAs whose whole text fits the context and long agreements whose passages are chosen per
answer, both ways of costing an answer. The whole sample (153 answers) takes over an hour here;
`--per-contract 0` judges it all. The last line: `estimate E s, measured M s, off by P %`.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-contract", type=int, default=5, help="answers of each contract (0: all)")
    parser.add_argument("--size", type=int, default=12, help="labelled answers the check judges")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        os.environ["ASSAY_CONFIG_DIR"] = str(Path(folder) / "config")
        os.environ["ASSAY_JUDGE_STATE_DIR"] = str(Path(folder) / "state")

        from app.judging.model_check import check_model, estimate_seconds
        from app.judging.runs import JudgeSettings, Progress, make_backend, run_judge
        from app.judging.sample_tour import import_sample, labelled_ids
        from app.project import Project

        project = Project.open(f"sqlite:///{Path(folder) / 'sample.assay'}")
        import_sample(project)
        check = check_model(project, JudgeSettings(), size=args.size)
        print("\n".join(check.lines()))
        print(f"check: {check.seconds:.1f} s; {check.rates}")

        labelled = labelled_ids()
        by_contract: dict[str, list[str]] = {}
        for answer in project.answers():
            by_contract.setdefault(answer.document, []).append(answer.id)
        subset = [
            a
            for ids in by_contract.values()
            for a in (
                ids
                if args.per_contract == 0
                else [i for i in ids if i not in labelled][: args.per_contract] or ids[: args.per_contract]
            )
        ]
        settings = JudgeSettings()
        backend = make_backend(settings, None)  # cold, as the estimate assumes
        try:
            assert check.rates is not None
            estimate = estimate_seconds(project, backend, check.rates, subset)
            started = time.perf_counter()
            seconds: dict[str, float] = {}

            def timed(progress: Progress) -> None:
                seconds[progress.answer_id] = time.perf_counter() - started - sum(seconds.values())

            summary = run_judge(project.sessions, settings.judge(backend), "full", answer_ids=subset, on_progress=timed)
            measured = time.perf_counter() - started
            for answer_id, took in seconds.items():  # what the estimate says of each, beside what it took
                alone = estimate_seconds(project, backend, check.rates, [answer_id])
                print(f"  {answer_id:22} {took:6.1f} s (alone, cold: {alone:6.1f} s)")
        finally:
            backend.close()
            project.close()
    print(
        f"subset: {len(subset)} answers on {len(by_contract)} contracts; "
        f"judged {summary.judged}, failed {summary.failed}"
    )
    print(f"load average while it ran: {os.getloadavg()[1]:.1f} (5 min), on {os.cpu_count()} cores")
    print(
        f"estimate {estimate:.0f} s, measured {measured:.0f} s, off by {100 * (estimate - measured) / measured:+.0f} %"
    )


if __name__ == "__main__":
    main()
