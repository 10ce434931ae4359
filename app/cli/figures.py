"""`assay scores`, `agreement`, `alignment`, `triage`, `estimate` and `calibration`: the figures a
review yields, from LeMAJ scores to those a lawyer can sign (a guaranteed miss rate, intervals)."""

from __future__ import annotations

import argparse
import getpass
import json
from typing import Any

from app import raters
from app.cli.output import ci, pct, print_json_or_lines
from app.errors import AssayError, InvalidInput
from app.figures import analytics, calibration, estimates, triage
from app.figures.rater_names import rater_name
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
    from app.export.report.tables import correctness_only

    key = "answer_id" if args.by == "answer" else args.by
    # Whole names, the columns as wide as the longest: a rater cut mid-word ("judge:Qwen2.5-7B-Instr") is
    # another rater to a reader. By rater, the rater is named once, as the window names it.
    keys = [] if args.by == "rater" else [str(r[key]) for r in rows]
    names = [rater_name(r["rater"]) for r in rows]
    key_width, name_width = max(map(len, keys), default=0), max(map(len, names), default=0)
    only = correctness_only(project)  # the claim checker tags correct or incorrect only: no relevance of it
    for n, (r, name) in enumerate(zip(rows, names, strict=True)):
        cannot = r["rater"] in only
        untaggable = "  —" if cannot else ""
        print(
            (f"{keys[n]:{key_width}}  " if keys else "")
            + f"{name:{name_width}}  C{r['correct']:3} I{r['incorrect']:3} "
            + (f"Irr{untaggable or r['irrelevant']:>3} M{untaggable or r['missing']:>3}  ")
            + f"correctness {shown(r['correctness'])}  "
            + " ".join(f"{what} {'—' if cannot else shown(r[field])} " for what, field in UNTAGGABLE_FIGURES).rstrip()
        )
    if any(r["rater"] in only for r in rows):
        print(
            "— a rater that tags points correct or incorrect only (the claim checker, labels imported as spans): "
            "no irrelevant or missing, so no precision, recall or F1"
        )
    return 0


UNTAGGABLE_FIGURES = (("precision", "precision"), ("recall", "recall"), ("F1", "f1"))


AGREEMENT_FIGURES = (  # (key, what a reader calls it), in the order printed
    ("n_items", "rated by two or more"),
    ("percent_agreement", "observed agreement"),
    ("cohen_kappa", "Cohen's kappa"),
    ("fleiss_kappa", "Fleiss' kappa"),
    ("krippendorff_alpha", "Krippendorff's alpha"),
    ("gwet_ac1", "Gwet's AC1"),
)


def agreement_lines(stats: dict[str, Any]) -> list[str]:
    """`assay agreement` as a table a person reads: a row per figure, a column per set of items (all,
    each source; or, per answer, the scores and the reviewers' own ratings); "—" where a figure is not
    defined or not computed for that column."""
    names = [rater_name(r) for r in stats["raters"]]
    who = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)
    unit = "data points" if stats["level"] == "data-point" else "answers"
    columns: list[tuple[str, dict[str, Any]]]
    if stats["level"] == "data-point":
        columns = [("all", stats), *((str(s), f) for s, f in (stats.get("by_source") or {}).items())]
    else:
        columns = [("correctness", stats), ("relevance (F1)", stats.get("relevance") or {})]
        columns += [(f"rated {figure}", f) for figure, f in (stats.get("manual") or {}).items()]

    def cell(key: str, figures: dict[str, Any]) -> str:
        value = figures.get(key)
        if value is None:
            return "—"
        if key == "n_items":
            return str(value)
        return f"{value:.1%}" if key == "percent_agreement" else f"{value:.3f}"

    label_width = max(len(label) for _key, label in AGREEMENT_FIGURES)
    widths = [max(len(title), 7) for title, _figures in columns]
    lines = [f"Agreement between {who}, on {unit}:", ""]
    lines.append(" " * label_width + "".join(f"  {t:>{w}}" for (t, _f), w in zip(columns, widths, strict=True)))
    for key, label in AGREEMENT_FIGURES:
        cells = "".join(f"  {cell(key, f):>{w}}" for (_t, f), w in zip(columns, widths, strict=True))
        lines.append(f"{label:{label_width}}{cells}")
    for jury, jurors in (stats.get("left_out") or {}).items():
        lines.append(
            f"{rater_name(jury)} is left out: its tags are made from its jurors' "
            f"({', '.join(rater_name(j) for j in jurors)}), so it would agree with them by construction."
        )
    return lines


def _agreement(project: Project, args: argparse.Namespace) -> int:
    raters = _names("--raters", args.raters.split(","), "ana,ben") if args.raters is not None else None
    stats = analytics.agreement(project, raters, args.level)
    if args.json:
        print(json.dumps(stats))
    else:
        print("\n".join(agreement_lines(stats)))
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
        if name != "auto":  # the name shown ("Claim checker") chooses as well as the stored id ("verifier")
            shown_as = {rater_name(s.name).casefold(): s.name for s in raters.standings(project.sessions)}
            name = shown_as.get(name.casefold(), name)
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
    print("\n".join(rater_lines(standings, default.name if default else None)))
    how = "chosen by the lead" if chosen else "the best measured (assay raters --default NAME to choose)"
    print(f"default rater: {rater_name(default.name) if default else 'none yet'} ({how})")
    return 0


def rater_lines(standings: list[raters.RaterStanding], default: str | None) -> list[str]:
    """One line a rater, named as the window names it and never cut: a name is as wide as the longest, and a
    run's stored id (what --default and the JSON take) follows a name that does not say it whole."""
    names = [rater_name(s.name) for s in standings]
    width = max((len(n) for n in names), default=0)
    lines = []
    for s, name in zip(standings, names, strict=True):
        mark = "*" if s.name == default else " "
        said = f"{mark} {name:{width}} {s.rated:6} answers rated  {s.words}"
        lines.append(said + (f"\n  {'':{width}} id {s.name}" if name not in (s.name, "Claim checker") else ""))
    return lines


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
    who = rater_name(result["rater"]) if result["rater"] else "none"  # "Claim checker", as the window says
    print(f"rater: {who} ({result['rater_standing']})")
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
