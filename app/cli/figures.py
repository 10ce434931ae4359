"""`assay scores`, `agreement`, `alignment`, `triage`, `estimate` and `calibration`: the figures a
review yields, from LeMAJ scores to those a lawyer can sign (a guaranteed miss rate, intervals)."""

from __future__ import annotations

import argparse
import getpass
import json

from app import raters
from app.cli.output import ci, pct, print_json_or_lines
from app.errors import AssayError, InvalidInput
from app.figures import analytics, calibration, estimates, triage
from app.figures.scores import shown
from app.project import Project
from storage.raters import rater_named


def _names(option: str, names: list[str], example: str = "ana") -> list[str]:
    """Rater names as typed, spaces trimmed; an empty one is refused, not looked up."""
    trimmed = [n.strip() for n in names]
    if not all(trimmed):
        raise InvalidInput(option, f"a rater's name is empty, e.g. write {option} {example}")
    return trimmed


def _scores(project: Project, args: argparse.Namespace) -> int:
    rows = analytics.scores(project, args.by, _names("--rater", args.rater) if args.rater else None)
    if args.json:
        print(json.dumps(rows))
        return 0
    key = "answer_id" if args.by == "answer" else args.by
    for r in rows:
        print(
            f"{str(r[key])[:40]:40} {r['rater'][:36]:36} C{r['correct']:3} I{r['incorrect']:3} "
            f"Irr{r['irrelevant']:3} M{r['missing']:3}  correctness {shown(r['correctness'])}  "
            f"precision {shown(r['precision'])}  recall {shown(r['recall'])}  F1 {shown(r['f1'])}"
        )
    return 0


def _agreement(project: Project, args: argparse.Namespace) -> int:
    raters = _names("--raters", args.raters.split(","), "ana,ben") if args.raters is not None else None
    print_json_or_lines(analytics.agreement(project, raters, args.level), args.json)
    return 0


def _alignment(project: Project, args: argparse.Namespace) -> int:
    judge, human = _names("--judge", [args.judge])[0], _names("--human", [args.human])[0]
    if judge == human:
        raise AssayError(f"--judge and --human both name {judge!r}: alignment compares two raters")
    with project.sessions() as session:  # as `agreement` does: an unknown name is a typo, not an empty table
        unknown = [name for name in (judge, human) if rater_named(session, name) is None]
    if unknown:
        raise AssayError(f"no rater named {', '.join(unknown)}")
    print_json_or_lines(analytics.alignment(project, judge, human), args.json)
    return 0


def _raters(project: Project, args: argparse.Namespace) -> int:
    """Every automatic rater's standing on human labels and the one that speaks for the project;
    `--default NAME` chooses it (audited), `--default auto` goes back to the automatic choice."""
    if args.default is not None:
        name = args.default.strip()
        if not name:
            raise InvalidInput("--default", "no rater named: write --default verifier, or --default auto")
        raters.set_default(project.sessions, None if name == "auto" else name, getpass.getuser())
    standings = raters.standings(project.sessions)
    default = raters.default_rater(project.sessions)
    with project.sessions() as session:
        chosen = raters.chosen(session)
    if args.json:
        print(
            json.dumps(
                {
                    "raters": [s.as_dict() for s in standings],
                    "default": default.name if default else None,
                    "chosen_by_lead": chosen is not None,
                }
            )
        )
        return 0
    for s in standings:
        mark = "*" if default is not None and s.name == default.name else " "
        print(f"{mark} {s.name[:48]:48} {s.rated:6} answers rated  {s.words}")
    how = "chosen by the lead" if chosen else "the best measured (assay raters --default NAME to choose)"
    print(f"default rater: {default.name if default else 'none yet'} ({how})")
    return 0


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
    print(f"rater: {result['rater'] or 'none'} ({result['rater_standing']})")
    print(f"judged {result['judged']}, cleared {len(result['cleared'])} ({pct(result['cleared_share'])})")
    print(
        f"miss rate among {result['reviewed_cleared']} randomly reviewed cleared answers: {result['missed']} missed; "
        f"95 % upper bound {pct(result['miss_rate_upper_95'])} over answers, "
        f"{pct(result['miss_rate_upper_95_by_document'])} with the document as unit"
    )
    hours = "—" if result["hours_saved"] is None else f"{result['hours_saved']:.1f}"
    print(f"review hours saved: {hours} ({result['hours_saved_basis']})")
    print(f"reviews used: {result['reviews_basis']}")
    if "recommended" in result:
        rec = result["recommended"]
        if rec.get("min_correctness") is not None:
            print(
                f"recommended for {pct(args.target_miss_rate)}: correctness ≥ {rec['min_correctness']}, relevance ≥ "
                f"{rec['min_relevance']}: clears {pct(rec['cleared_share'])}, miss rate ≤ "
                f"{pct(rec['miss_rate_upper_95'])} (95 %)"
            )
        else:
            print(f"no rule recommended: {rec['reason']}")
    return 0


def _estimate(project: Project, args: argparse.Namespace) -> int:
    if args.compare:
        names = args.compare.split(",")
        if len(names) != 2 or not all(n.strip() for n in names):
            raise AssayError("--compare takes two generators: A,B")
        result = estimates.compare(project, *(n.strip() for n in names))
        result["estimates"] = estimates.estimate(project, "generator")
    else:
        result = estimates.estimate(project, args.by)
    if args.json:
        print(json.dumps(result))
        return 0
    for group in result.get("groups", result.get("estimates", {}).get("groups", [])):
        for metric, figures in group["metrics"].items():
            print(
                f"{group['group'][:30]:30} {metric:14} PPI {ci(figures['ppi'])}  "
                f"judge only {ci(figures['judge_only'])}  human only {ci(figures['human_only'])}  "
                f"({figures['reviewed']} reviewed)"
            )
    if args.compare:
        for metric, figures in result["metrics"].items():
            print(
                f"{result['difference']} {metric:14} PPI {ci(figures['ppi'])}  judge only {ci(figures['judge_only'])}"
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
            f"{tag:11} {figures['points']:5} reviewed points, agreement {pct(figures['agreement'])}, "
            f"ECE {pct(figures['ece_raw'])} raw, {pct(figures['ece_calibrated'])} calibrated"
        )
    return 0


COMMANDS = {
    "scores": _scores,
    "agreement": _agreement,
    "alignment": _alignment,
    "raters": _raters,
    "triage": _triage,
    "estimate": _estimate,
    "calibration": _calibration,
}
