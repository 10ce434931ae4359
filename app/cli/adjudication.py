"""`assay adjudicate`, `adjudicators` and `qualification`: settling the reviewers' disagreements and
measuring each reviewer against gold (app/review/adjudication.py and qualification.py)."""

from __future__ import annotations

import argparse
import getpass
import json

from app.errors import AssayError, InvalidInput
from app.project import Project
from app.review import adjudication, qualification, roles
from models.vocabulary import Tag

LEAVE_OUT = "leave-out"


def _opinions(point: adjudication.CasePoint, names: bool) -> str:
    return " · ".join(
        f"{o.reviewer if names else o.alias}: {o.tag.value if o.tag else 'no such point'}"
        + (f" ({o.comment})" if o.comment else "")
        for o in point.opinions
    )


def _adjudicate(project: Project, args: argparse.Namespace) -> int:
    if args.unclear:
        found = adjudication.unclear_guidelines(project)
        if args.json:
            print(json.dumps({"guideline_unclear": found}))
        else:
            for d in found:
                print(f"{d['answer_id']} · {d['point'][:80]} · {d['reviewers']} → {d['decided']}")
            print(f"{len(found)} decision(s) said the guideline was unclear")
        return 0
    if args.list:
        if args.answer_id or args.point or args.tag:
            raise AssayError("--list lists the answers waiting: give it no answer, --point or --tag")
        cases = adjudication.waiting(project)
        if args.json:
            print(json.dumps({"waiting": [c.as_dict(names=args.names) for c in cases]}))
            return 0
        for c in cases:
            print(f"{c.answer_id}  disagreement {c.disagreement:.2f}  {len(c.undecided)} to decide · {c.question[:70]}")
            for p in c.disputed:
                decided = f"  → {p.decision.tag.value if p.decision.tag else 'left out'}" if p.decision else ""
                print(f"  point {p.number}: {p.text[:70]}\n      {_opinions(p, args.names)}{decided}")
        print(f"{len(cases)} answer(s) waiting for adjudication")
        return 0
    if not args.answer_id:
        raise AssayError("give an answer id with --point N --tag TAG, or --list to see the answers waiting")
    if args.point is None or args.tag is None:
        raise AssayError("adjudicating a point needs --point N and --tag TAG (see `assay adjudicate --list`)")
    tag = None if args.tag == LEAVE_OUT else Tag(args.tag)
    adjudicator = roles.default_reviewer(project, args.adjudicator)  # on a server: the login
    case = adjudication.decide(project, args.answer_id, args.point, tag, args.reason, adjudicator)
    if args.json:
        print(json.dumps(case.as_dict(names=True)))
    else:
        state = "consensus written" if case.settled else f"{len(case.undecided)} disputed point(s) still to decide"
        print(f"{case.answer_id} point {args.point}: {args.tag} ({adjudicator}); {state}")
    return 0


def _names(text: str, flag: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise InvalidInput(flag, "no name given: write names separated by commas, e.g. ana,ben")
    return names


def _adjudicators(project: Project, args: argparse.Namespace) -> int:
    if args.set is not None and args.clear:
        raise AssayError("--set names the adjudicators and --clear lets anyone adjudicate: give one of them")
    if args.set is not None:
        names = adjudication.set_adjudicators(project, _names(args.set, "--set"), getpass.getuser())
    elif args.clear:
        names = adjudication.set_adjudicators(project, [], getpass.getuser())
    else:
        names = adjudication.adjudicators(project)
    if args.json:
        print(json.dumps({"adjudicators": names}))
    else:
        print(", ".join(names) if names else "anyone may adjudicate (no adjudicators named)")
    return 0


def _qualification(project: Project, args: argparse.Namespace) -> int:
    changes = {}
    if args.gold_share is not None and args.no_gold:
        raise AssayError("--gold-share mixes gold in and --no-gold stops it: give one of them")
    if args.gold_share is not None:
        changes["gold_share"] = args.gold_share
    if args.no_gold:
        changes["gold_share"] = None
    if args.training is not None:
        changes["training"] = args.training == "on"
    if args.gold_raters is not None:
        changes["gold"] = _names(args.gold_raters, "--gold-raters")
    if args.seed is not None:
        changes["seed"] = args.seed
    if changes:
        settings = qualification.configure(project, getpass.getuser(), **changes)
    else:
        settings = qualification.qualification_settings(project)
    reviewers = qualification.agreement_with_gold(project)
    if args.json:
        print(json.dumps({"settings": settings.as_dict(), "reviewers": reviewers}))
        return 0
    share = "off" if settings.gold_share is None else f"{settings.gold_share:.0%}"
    print(
        f"gold share {share} · training {'on' if settings.training else 'off'} · gold raters "
        f"{', '.join(settings.gold_raters) or 'none (adjudicated answers only)'}"
    )
    for r in reviewers:
        kappa = "—" if r["kappa"] is None else f"{r['kappa']:.2f}"
        interval = f" [{r['kappa_ci'][0]:.2f}, {r['kappa_ci'][1]:.2f}]" if r["kappa_ci"] else ""
        recall = ", ".join(f"{tag} {v['recall']:.0%} (n {v['n']})" for tag, v in r["recall"].items())
        print(f"{r['reviewer']}: κ {kappa}{interval} n {r['n']} on {r['answers']} gold answer(s) · recall {recall}")
    if not reviewers:
        print("no reviewer has reviewed a gold answer yet")
    return 0


COMMANDS = {"adjudicate": _adjudicate, "adjudicators": _adjudicators, "qualification": _qualification}
