"""`assay compare A B`: generator B (the candidate) against A (the baseline) on the questions both
answered: wins, ties and losses with the win rate's 95 % interval, the paired difference of each LeMAJ
score, and the questions where B is worse, most severe first (`--export FILE.csv|.xlsx` writes them).
`--blind on|off` sets the project's blind comparison (generators unnamed, order drawn and recorded)."""

from __future__ import annotations

import argparse
import getpass
import json
from typing import Any

from app.cli.output import pct, writing
from app.errors import InvalidInput
from app.figures.comparison import comparison, export_regressions, generator_pairs
from app.project import Project
from app.review.pairwise import set_blind

SHOWN = 20  # regressions printed; --json and --export carry them all


def _compare(project: Project, args: argparse.Namespace) -> int:
    if args.blind is not None:
        seed = set_blind(project, args.blind == "on", getpass.getuser())
        print(f"blind comparison {args.blind}" + (f" (order seed {seed})" if args.blind == "on" else ""))
        if args.a is None:
            return 0
    if args.a is None or args.b is None:
        pairs = ", ".join(f"{x} {y}" for x, y in generator_pairs(project)) or "none: no question has two answers"
        # "compare:", not "assay compare:": the message is printed after "assay: " already
        raise InvalidInput("compare", f"name the baseline and the candidate generator, A B (pairs here: {pairs})")
    if args.export is not None:  # the file checked first: a wrong path is said before the figures are computed
        with writing(args.export, project=project):
            result = comparison(project, args.a, args.b)
            export_regressions(result, args.export)
    else:
        result = comparison(project, args.a, args.b)
    if args.json:
        print(json.dumps(result))
        return 0
    _print(result)
    if args.export is not None:
        print(f"wrote {len(result['regressions'])} regressions to {args.export}")
    return 0


def _print(r: dict[str, Any]) -> None:
    a, b = r["a"], r["b"]
    print(f"{b} (B) against {a} (A) on {r['questions']} shared questions")
    decided = r["decided_by"]
    print(
        f"B better {r['wins']} · tie {r['ties']} · A better {r['losses']}   "
        f"({decided['preferences']} by reviewers' preferences, {decided['scores']} by tags; "
        f"{r['questions'] - r['compared']} without tags or preference)"
    )
    rate = r["win_rate"]
    if rate["estimate"] is None:
        print("win rate: — (no question decided either way)")
    else:
        low, high = rate["interval"]
        print(
            f"win rate of B {pct(rate['estimate'])} [{pct(low)}, {pct(high)}] "
            f"(95 % Wilson, {rate['decided']} decided questions, ties left out)"
        )
    for metric, s in r["scores"].items():
        if s["difference"] is None:
            print(f"{metric:14} B − A   — (no question with both answers judged)")
            continue
        low, high = s["interval"]
        print(f"{metric:14} B − A {s['difference']:+.3f} [{low:+.3f}, {high:+.3f}]  ({s['from']}, {s['questions']} q.)")
    regressions = r["regressions"]
    if not regressions:
        print("no regressions: on no question is B worse than A by the tags")
        return
    print(f"{len(regressions)} regressions (B worse than A), most severe first:")
    for n, g in enumerate(regressions[:SHOWN], start=1):
        change = "" if g["correctness_change"] is None else f", correctness {g['correctness_change']:+.2f}"
        f1 = "" if g["f1_change"] is None else f", F1 {g['f1_change']:+.2f}"
        print(
            f"{n:3}. {g['answer_a']} → {g['answer_b']}: {g['wrong_in_b']} wrong in B, "
            f"{g['left_out_in_b']} left out{change}{f1}  [{g['basis']}]"
        )
    if len(regressions) > SHOWN:
        print(f"     … {len(regressions) - SHOWN} more (--json or --export for all)")


COMMANDS = {"compare": _compare}
