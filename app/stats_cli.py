"""The `assay` commands for figures a lawyer can sign: triage with a guaranteed miss rate, a random
review sample, estimates with intervals and the judge's calibration."""

from __future__ import annotations

import argparse
import getpass
import json
from typing import Any

from app import calibration, estimates, sampling, triage
from app.errors import AssayError
from app.project import Project


def add_parsers(commands: Any) -> None:
    tr = commands.add_parser("triage", help="which answers the judge clears, with a 95 %% bound on the miss rate")
    tr.add_argument("--min-correctness", type=float, default=1.0)
    tr.add_argument("--min-relevance", type=float, default=0.8)
    tr.add_argument("--min-confidence", type=float, help="floor on every judge tag's calibrated confidence")
    tr.add_argument("--target-miss-rate", type=float, help="recommend the loosest rule whose bound reaches it")
    tr.add_argument("--minutes-per-answer", type=float, help="review time per answer (default: recorded times)")
    tr.add_argument("--json", action="store_true")

    sa = commands.add_parser("sample", help="draw answers uniformly at random for review (seeded, recorded)")
    sa.add_argument("--size", type=int, required=True)
    sa.add_argument("--seed", type=int, help="default: a fresh seed, printed and recorded")
    sa.add_argument("--json", action="store_true")

    es = commands.add_parser("estimate", help="mean scores per group with 95 %% intervals (prediction-powered)")
    es.add_argument("--by", choices=estimates.GROUPS, default="generator")
    es.add_argument("--compare", metavar="A,B", help="paired difference of two generators on shared questions")
    es.add_argument("--json", action="store_true")

    ca = commands.add_parser("calibration", help="how far the judge's confidence matches reviewers (ECE)")
    ca.add_argument("--json", action="store_true")


def _triage(project: Project, args: argparse.Namespace) -> int:
    result = triage.triage(
        project,
        args.min_correctness,
        args.min_relevance,
        min_confidence=args.min_confidence,
        target_miss_rate=args.target_miss_rate,
        minutes_per_answer=args.minutes_per_answer,
    )
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"judged {result['judged']}, cleared {len(result['cleared'])} ({_pct(result['cleared_share'])})")
    print(
        f"miss rate among {result['reviewed_cleared']} randomly reviewed cleared answers: {result['missed']} missed; "
        f"95 % upper bound {_pct(result['miss_rate_upper_95'])} over answers, "
        f"{_pct(result['miss_rate_upper_95_by_document'])} with the document as unit"
    )
    hours = "—" if result["hours_saved"] is None else f"{result['hours_saved']:.1f}"
    print(f"review hours saved: {hours} ({result['hours_saved_basis']})")
    print(f"reviews used: {result['reviews_basis']}")
    if "recommended" in result:
        rec = result["recommended"]
        if rec.get("min_correctness") is not None:
            print(
                f"recommended for {_pct(args.target_miss_rate)}: correctness ≥ {rec['min_correctness']}, relevance ≥ "
                f"{rec['min_relevance']}: clears {_pct(rec['cleared_share'])}, miss rate ≤ "
                f"{_pct(rec['miss_rate_upper_95'])} (95 %)"
            )
        else:
            print(f"no rule recommended: {rec['reason']}")
    return 0


def _sample(project: Project, args: argparse.Namespace) -> int:
    draw = sampling.draw_sample(project, args.size, args.seed, actor=getpass.getuser())
    if args.json:
        print(json.dumps(vars(draw)))
    else:
        print(f"draw {draw.number}: {len(draw.answer_ids)} of {draw.population} answers, seed {draw.seed}")
        print("\n".join(draw.answer_ids))
    return 0


def _estimate(project: Project, args: argparse.Namespace) -> int:
    if args.compare:
        names = args.compare.split(",")
        if len(names) != 2:
            raise AssayError("--compare takes two generators: A,B")
        result = estimates.compare(project, *names)
        result["estimates"] = estimates.estimate(project, "generator")
    else:
        result = estimates.estimate(project, args.by)
    if args.json:
        print(json.dumps(result))
        return 0
    for group in result.get("groups", result.get("estimates", {}).get("groups", [])):
        for metric, figures in group["metrics"].items():
            print(
                f"{group['group'][:30]:30} {metric:14} PPI {_ci(figures['ppi'])}  "
                f"judge only {_ci(figures['judge_only'])}  human only {_ci(figures['human_only'])}  "
                f"({figures['reviewed']} reviewed)"
            )
    if args.compare:
        for metric, figures in result["metrics"].items():
            print(
                f"{result['difference']} {metric:14} PPI {_ci(figures['ppi'])}  judge only {_ci(figures['judge_only'])}"
            )
    return 0


def _calibration(project: Project, args: argparse.Namespace) -> int:
    report = calibration.reliability(project)
    if args.json:
        print(json.dumps(report))
        return 0
    if not report["tags"]:
        print("no reviewed data point carries a judge confidence yet: nothing to calibrate")
    for tag, figures in report["tags"].items():
        print(
            f"{tag:11} {figures['points']:5} reviewed points, agreement {_pct(figures['agreement'])}, "
            f"ECE {_pct(figures['ece_raw'])} raw, {_pct(figures['ece_calibrated'])} calibrated"
        )
    return 0


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _ci(figures: dict | None) -> str:
    if not figures:
        return "—"
    low, high = figures["ci"]
    return f"{figures['estimate']:.3f} [{low:.3f}, {high:.3f}]"


COMMANDS = {"triage": _triage, "sample": _sample, "estimate": _estimate, "calibration": _calibration}
