"""`assay import`, `import-labels`, `search`, `citations` and `segment`: what comes into a project
(documents, answers, other raters' labels) and how Assay reads it."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from dataclasses import asdict

from app.cli.output import PageBars, ProgressBar, print_summary
from app.errors import AssayError, InvalidInput, PasswordRequired
from app.ingest.citations import find_citations
from app.ingest.datasets import import_dataset
from app.ingest.labels import import_labels
from app.ingest.segments import segment_report
from app.plain_text import counted
from app.project import Project


def _import(project: Project, args: argparse.Namespace) -> int:
    if args.matter is not None:  # its new documents, and all about them, filed under the matter
        from app.matters import filing_into

        project = filing_into(project, args.matter, args.path)
    passwords: dict[str, str] = {}
    for entry in args.pdf_password:
        name, sep, password = entry.partition("=")
        if not sep or not name.strip():  # the entry may be the password itself: not repeated
            raise InvalidInput("--pdf-password", "write FILE=PASSWORD: the PDF's file name, =, then its password")
        passwords[name] = password
    while True:
        try:
            with PageBars() as pages:
                summary = import_dataset(project.sessions, args.path, passwords=passwords, on_progress=pages)
            break
        except PasswordRequired as exc:
            if not sys.stdin.isatty():
                raise InvalidInput(exc.place, f"{exc.problem} (--pdf-password {exc.name}=…)") from exc
            again = " (that one was wrong)" if exc.wrong else ""
            passwords[exc.name] = getpass.getpass(f"Password for {exc.name}{again}: ")
    print_summary(
        summary,
        args.json,
        lambda: (
            f"imported {args.path}: {counted(summary.documents_added, 'new document')}, "
            f"{counted(summary.answers_added, 'new answer')}, "
            f"{summary.answers_updated} updated, {summary.answers_unchanged} unchanged"
        ),
    )
    return 0


def _import_labels(project: Project, args: argparse.Namespace) -> int:
    with ProgressBar("importing labels", "lines") as bar:  # quiet unless stderr is a terminal
        summary = import_labels(project, args.path, default_rater=args.rater, on_progress=bar)
    print_summary(
        summary,
        args.json,
        lambda: (
            f"imported {summary.labels} labels from {summary.lines} lines "
            f"({summary.data_points_created} new data points; {summary.sampled} answers marked as randomly sampled)"
        ),
    )
    return 0


def _search(project: Project, args: argparse.Namespace) -> int:
    hits = project.search(args.document, args.query, args.limit)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "citation_id": h.passage.citation_id,
                        "section": h.passage.section,
                        "heading": h.passage.heading_path,
                        "score": h.score,
                        "text": h.passage.text,
                    }
                    for h in hits
                ]
            )
        )
    else:
        for hit in hits:
            where = hit.passage.section or hit.passage.heading_path
            print(f"{hit.passage.citation_id:>8}  {where[:30]:30}  {hit.passage.text[:100]}")
    return 0


def _citations(project: Project, args: argparse.Namespace) -> int:
    answer = project.answer(args.answer_id)
    if answer is None:
        raise AssayError(f"no answer with id {args.answer_id!r}")
    citations = find_citations(answer.text, project.passages(answer.document_id))
    if args.json:
        print(json.dumps([asdict(c) for c in citations]))
    else:
        for c in citations:
            written = " ".join(c.written.split())  # as a reader writes it: "Section 3", not 'Section\xa03'
            print(f"{written:28} -> {', '.join(c.passages[:5]) or 'not in the document'}")
    return 0


def _segment(project: Project, args: argparse.Namespace) -> int:
    report = segment_report(project, args.answer)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    for answer in report["answers"]:
        print(f"{answer['answer_id']}  coverage {answer['coverage']:.3f}")
        for p in answer["points"]:
            context = f"[{' '.join(p['context'].split())[-40:]}] " if p["context"] else ""
            print(f"  {p['start']:>5}-{p['end']:<5} {context}{' '.join(p['text'].split())[:100]}")
    print(f"coverage of letters and digits: {report['coverage']:.3f}")
    return 0


COMMANDS = {
    "import": _import,
    "import-labels": _import_labels,
    "search": _search,
    "citations": _citations,
    "segment": _segment,
}
