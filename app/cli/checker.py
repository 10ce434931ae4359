"""`assay checker fit | show | reset`: the claim checker fitted to a project's (or one matter's) reviews,
adopted only where it beats the shipped checker held out (app/judging/learning.py)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from app import matters
from app.cli.output import ProgressBar
from app.judging.learning import fit_checker, reset_checker, show_checker
from app.matters import Matter
from app.project import Project

Command = Callable[[Project, argparse.Namespace], int]


def add_checker_parser(commands: Any) -> None:
    """The command's arguments (app/cli/parser.py calls this)."""
    ck = commands.add_parser(
        "checker",
        help="the claim checker fitted to this project's reviews: fit (adopted only if better), show, reset",
        description="fit: refit the claim checker's decision head, calibration, thresholds and exemplars on the "
        "people's tags (reviews and imported human labels), measure it held out by document beside the shipped "
        "checker, and let it speak for the project (or --matter M) only if it is better (exact McNemar test). "
        "show: both standings. reset: the shipped checker speaks again. Each is an audit entry.",
    )
    ck.add_argument("action", choices=["fit", "show", "reset"], help="fit, show or reset")
    ck.add_argument("--matter", metavar="M", help="this matter's reviews alone, for this matter alone")
    ck.add_argument("--seed", type=int, default=0, help="fit: how the documents are dealt into folds (default 0)")
    ck.add_argument("--by", metavar="NAME", help="who acts, for the audit log (default: your login name)")
    ck.add_argument("--json", action="store_true", help="print the result as JSON (for scripts), not as text")


def _figures(name: str, f: dict[str, Any]) -> str:
    supported = f"{f['supported_right']}/{f['supported']}" if f["supported"] else "none"
    return (
        f"{name:8} flags {f['flagged_wrong']} of {f['wrong']} wrong points (recall {f['recall']:.2f}), "
        f"{f['flagged_right']} of {f['points'] - f['wrong']} right (false alarms {f['false_alarms']:.2f}); "
        f"F1 {f['f1']:.2f}; right {f['accuracy']:.2f}; 'supported' right {supported}"
    )


def _print_standing(held: dict[str, Any]) -> None:
    print(f"held out by document ({held['folds']} folds), on the same points:")
    print("  " + _figures("shipped", held["shipped"]))
    print("  " + _figures("fitted", held["refit"]))
    print(
        f"  {held['test']}: right where the shipped was wrong {held['wins']}, wrong where it was right "
        f"{held['losses']}, p = {held['p_mcnemar']:.4f}; flags vs tags (Fisher) p = {held['p_fisher']:.4f}"
    )


def _matter(project: Project, args: argparse.Namespace) -> Matter | None:
    return None if args.matter is None else matters.find(project, args.matter)


def _checker(project: Project, args: argparse.Namespace) -> int:
    matter = _matter(project, args)
    actor = matters.actor_of(project, args.by)
    if args.action == "fit":
        with ProgressBar("learning from reviews", "answers") as bar:
            result = fit_checker(project, matter, actor, on_progress=bar, seed=args.seed)
        if args.json:
            held = None if result.standing is None else result.standing.as_dict()
            print(
                json.dumps(
                    {
                        "scope": result.scope,
                        "points": result.points,
                        "answers": result.answers,
                        "adopted": result.adopted,
                        "sha256": result.sha256,
                        "seconds": round(result.seconds, 1),
                        "held_out": held,
                    }
                )
            )
            return 0
        print(
            f"fitted on {result.points} tagged points of {result.answers} answers of {result.scope} "
            f"in {result.seconds:.1f} s"
        )
        if result.standing is not None:
            _print_standing(result.standing.as_dict())
        if result.adopted:
            print(f"adopted: the fitted checker speaks for {result.scope} (SHA-256 {result.sha256})")
        else:
            reasons = "; ".join(result.standing.reasons) if result.standing else "too few tags"
            print(f"not adopted, the checker that spoke before still speaks: {reasons}")
        return 0
    if args.action == "reset":
        was = reset_checker(project, matter, actor)
        scope = "the project" if matter is None else f"matter {matter.label}"
        print(f"the shipped checker speaks for {scope}" + (f" (set aside: {was})" if was else " (it already did)"))
        return 0
    shown = show_checker(project, matter)
    if args.json:
        print(json.dumps(shown))
        return 0
    print(f"{shown['scope']}: the {shown['speaks']} checker speaks")
    fit = shown["last_fit"]
    if fit is None:
        print("never fitted (assay checker fit)")
        return 0
    adopted = "adopted" if fit.get("adopted") else "not adopted"
    print(f"last fit: {fit['points']} points of {fit['answers']} answers, {fit['documents']} documents; {adopted}")
    _print_standing(fit["held_out"])
    if fit["held_out"]["reasons"]:
        print("why not: " + "; ".join(fit["held_out"]["reasons"]))
    return 0


COMMANDS: dict[str, Command] = {"checker": _checker}
