"""`assay show`, `sample`, `assign`, `bundle` and `audit`: the reviewers' side of a project. An
answer as each rater tagged it, the random sample to review, review shared among a team without a
server, and the audit log that records it all."""

from __future__ import annotations

import argparse
import getpass
import json
from collections import Counter
from dataclasses import asdict

from app import anchors
from app.cli.output import print_summary, writing
from app.cli.signoff import signoff_dicts, signoff_lines
from app.errors import AssayError, InvalidInput
from app.figures.rater_names import rater_name
from app.judging.verification import VERIFIER, claim_checker
from app.plain_text import plain_text
from app.project import Project
from app.review import sampling
from app.review.team import assign, export_bundle, import_bundle
from models.checker.report import finding_at, reasons_text, verdict_text
from storage.audit import VERIFY_SEES, AuditProblem, audit_entries, verify_audit
from storage.integrity import integrity_problems


def _show(project: Project, args: argparse.Namespace) -> int:
    answer = project.answer(args.answer_id)
    if answer is None:
        raise AssayError(f"no answer with id {args.answer_id!r}")
    by_rater = project.data_points(args.answer_id)
    checked = claim_checker(project.sessions)(answer.id)  # as stored by `assay verify`, else checked now
    if args.json:
        raters = {r: [asdict(p) for p in ps] for r, ps in by_rater.items()}
        print(json.dumps({"answer_id": answer.id, "raters": raters, "verifier": checked.as_dict()}))
        return 0
    print(f"{answer.id}: {answer.question}")
    for rater, points in by_rater.items():
        if rater == VERIFIER:
            continue  # shown below, with its reasons
        print(f"\n{rater_name(rater)}")
        for p in points:
            tag = p.tag.value if p.tag else "untagged"
            confidence = f" {p.confidence:.2f}" if p.confidence is not None else ""
            cites = f" [{', '.join(p.citations)}]" if p.citations else ""
            print(f"  {tag:10}{confidence:5} {_words(p.text)[:100]}{cites}")
            flagged = finding_at(checked, p.span_start, p.span_end)
            if flagged is not None and flagged.reasons:
                print(f"      ⚑ {CHECKER} {flagged.verdict}: {reasons_text(flagged)[:300]}")
    stored = VERIFIER in by_rater
    print(f"\n{rater_name(VERIFIER)}" + ("" if stored else " (checked now, not stored: `assay verify` keeps it)"))
    for point in checked.points:
        print(f"  {point.verdict:12} {_words(point.text)[:100]}")
        print(f"      {verdict_text(point)}")
        if point.reasons:
            print(f"      {reasons_text(point)[:300]}")
    return 0


CHECKER = "claim checker"  # the rater stored as `verifier`, as a reader knows it


def _words(text: str) -> str:
    """An answer's Markdown as a terminal shows it: the words `**not**` marks, on one line."""
    return " ".join(plain_text(text).split())


def _sample(project: Project, args: argparse.Namespace) -> int:
    draw = sampling.draw_sample(project, args.size, args.seed, actor=getpass.getuser())
    print_summary(
        vars(draw),
        args.json,
        lambda: (
            f"draw {draw.number}: {len(draw.answer_ids)} of {draw.population} answers, seed {draw.seed}\n"
            + "\n".join(draw.answer_ids)
        ),
    )
    return 0


def _assign(project: Project, args: argparse.Namespace) -> int:
    if not args.reviewers.replace(",", "").strip():
        raise InvalidInput("--reviewers", "no name given: write names separated by commas, e.g. ana,ben")
    plan = assign(project, args.reviewers.split(","), args.per_answer)
    load = Counter(r for names in plan.values() for r in names)
    print_summary(
        {"assignments": plan, "per_reviewer": load},
        args.json,
        lambda: ", ".join(f"{r}: {n} answers" for r, n in sorted(load.items())),
    )
    return 0


def _bundle(project: Project, args: argparse.Namespace) -> int:
    if args.action == "export":
        if not args.reviewer:
            raise AssayError("bundle export needs --reviewer NAME")
        with writing(args.path, project=project):
            count = export_bundle(project, args.reviewer, args.path)
        print(f"wrote {count} answers of {args.reviewer} to {args.path}")
        return 0
    if args.reviewer:
        raise AssayError("bundle import takes no --reviewer: the bundle names its reviewer")
    if args.path.is_dir():
        raise InvalidInput(str(args.path), "it is a folder, not a bundle file")
    if not args.path.exists():
        raise InvalidInput(str(args.path), "no such file")
    summary = import_bundle(project, args.path)
    state = "already imported: nothing changed" if summary.already_imported else "merged"
    print(f"{summary.reviewer}: {summary.answers} answers, {state}")
    return 0


def _audit(project: Project, args: argparse.Namespace) -> int:
    with project.sessions() as session:
        if args.action == "export":
            if args.out is None:
                raise AssayError("audit export needs an output file")
            with writing(args.out, project=project), args.out.open("w", encoding="utf-8") as handle:
                for entry in audit_entries(session):
                    handle.write(json.dumps(entry.as_dict(), ensure_ascii=False) + "\n")
            print(f"wrote {args.out}")
            return 0
        if args.out is not None:
            raise AssayError("audit verify takes no file: the file is for audit export")
        damage = integrity_problems(session.connection())  # a file whose pages do not read back vouches for nothing
        count, problems = verify_audit(session)
        problems += [AuditProblem(entry_id=None, problem=p) for p in anchors.anchor_problems(session)]  # outside it
        seen = anchors.log_state(session)
    checks = project.signoffs()  # each sign-off against what is stored now
    broken = any(not c.matches for c in checks) or bool(damage)
    if not problems and not broken:
        anchors.note_verified(seen)  # entries written elsewhere are witnessed here from now on
    if args.json:
        ok = not problems and not broken
        found = [asdict(p) for p in problems]
        report = {"entries": count, "ok": ok, "problems": found, "signoffs": signoff_dicts(checks), "sees": VERIFY_SEES}
        print(json.dumps({**report, "damage": damage}))
    else:
        if damage:
            print(f"the project file is damaged: SQLite's integrity check found {len(damage)} problem(s)")
            print("\n".join(f"  {d}" for d in damage))
        print(f"{count} audit entries: " + ("the chain is intact" if not problems else f"{len(problems)} problems"))
        if first := next((p for p in problems if p.entry_id is not None), None):
            print(f"  first bad entry: {first.entry_id}")
        for problem in problems:
            print(f"  {f'entry {problem.entry_id}' if problem.entry_id is not None else 'the log'}: {problem.problem}")
        print("\n".join(signoff_lines(checks)))
        print(VERIFY_SEES)
    return 0 if not problems and not broken else 1


COMMANDS = {"show": _show, "sample": _sample, "assign": _assign, "bundle": _bundle, "audit": _audit}
