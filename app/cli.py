"""The `assay` command. Expected failures print one sentence and exit 2; nothing is half-written."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from app.citations import find_citations
from app.datasets import import_dataset
from app.errors import AssayError, StorageError
from app.project import SAMPLE_DATASET, Project, project_url

EXIT_INVALID = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assay", description="Review LLM answers about legal documents.")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--project", type=Path, help="project file (SQLite); default in the user data folder")
    where.add_argument("--db", help="database URL, e.g. postgresql+psycopg://user@host/assay")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("init", help="create the project (or bring an old one up to date)")

    imp = commands.add_parser("import", help="import a dataset: a folder with documents/ and qa.jsonl, or .csv/.xlsx")
    imp.add_argument("path", type=Path)
    imp.add_argument("--json", action="store_true", help="print the summary as JSON")

    info = commands.add_parser("info", help="what the project holds")
    info.add_argument("--json", action="store_true")

    search = commands.add_parser("search", help="BM25-ranked passages of one document")
    search.add_argument("document", help="document name, or a unique part of it")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--json", action="store_true")

    cite = commands.add_parser("citations", help="the citations an answer writes, resolved to passages")
    cite.add_argument("answer_id")
    cite.add_argument("--json", action="store_true")

    gui = commands.add_parser("gui", help="open the review window")
    gui.add_argument("--sample", action="store_true", help="import the bundled sample project first")
    gui.add_argument("--screenshot", type=Path, help="save a PNG of the window once loaded, then exit")
    return parser


Command = Callable[[Project, argparse.Namespace], int]


def main(argv: Sequence[str] | None = None, window_commands: dict[str, Command] | None = None) -> int:
    """Run one command. `ui.main` passes the commands that open a window, so app/ stays Qt-free."""
    args = build_parser().parse_args(argv)
    commands = {**COMMANDS, **(window_commands or {})}
    if args.command not in commands:
        print(f"assay: '{args.command}' needs the desktop application (run it as `assay`)", file=sys.stderr)
        return EXIT_INVALID
    try:
        project = Project.open(project_url(args.project, args.db))
        return commands[args.command](project, args)
    except (AssayError, StorageError) as exc:
        print(f"assay: {exc}", file=sys.stderr)
        return EXIT_INVALID


def _init(project: Project, _args: argparse.Namespace) -> int:
    print(f"project ready: {project.url}")
    return 0


def _import(project: Project, args: argparse.Namespace) -> int:
    summary = import_dataset(project.sessions, args.path)
    if args.json:
        print(json.dumps(asdict(summary)))
    else:
        print(
            f"imported {args.path}: {summary.documents_added} new documents, {summary.answers_added} new answers, "
            f"{summary.answers_updated} updated, {summary.answers_unchanged} unchanged"
        )
    return 0


def _info(project: Project, args: argparse.Namespace) -> int:
    counts = project.counts()
    if args.json:
        print(json.dumps(counts))
    else:
        print(project.url)
        for name, count in counts.items():
            print(f"  {name:12} {count}")
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
            print(f"{c.written!r:28} -> {', '.join(c.passages[:5]) or 'not in the document'}")
    return 0


def prepare_gui(project: Project, args: argparse.Namespace) -> None:
    """What `assay gui` does before the window opens."""
    if args.sample and not project.answers():
        import_dataset(project.sessions, SAMPLE_DATASET)


COMMANDS = {
    "init": _init,
    "import": _import,
    "info": _info,
    "search": _search,
    "citations": _citations,
}

if __name__ == "__main__":
    sys.exit(main())
