"""`assay terms`, `references` and `parties`: a contract of the project as a lawyer reads it, from
the passages stored at import (so the ids are the ones answers cite)."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from app.ingest.contract_terms import cross_references, defined_terms, parties
from app.project import Project
from storage.documents import Passage, document_id_by_name, passages_of


def _passages(project: Project, wanted: str) -> list[Passage]:
    """The passages of the document named (or uniquely matched) by `wanted`; InvalidInput if none."""
    name = project.document_named(wanted)
    with project.sessions() as session:
        document_id = document_id_by_name(session, name)
        assert document_id is not None  # document_named found it
        return passages_of(session, document_id)


def _name(project: Project, args: argparse.Namespace) -> str:
    return project.document_named(args.document)


def _terms(project: Project, args: argparse.Namespace) -> int:
    terms = defined_terms(_passages(project, args.document))
    if args.json:
        print(json.dumps([asdict(t) for t in terms], ensure_ascii=False))
    else:
        for t in terms:
            print(f"{t.passage:>8}  {t.term[:30]:30}  {' '.join(t.definition.split())[:100]}")
        if not terms:
            print(f"no defined terms found in {_name(project, args)}")
    return 0


def _references(project: Project, args: argparse.Namespace) -> int:
    references = cross_references(_passages(project, args.document))
    if args.json:
        print(json.dumps([asdict(r) for r in references], ensure_ascii=False))
    else:
        for r in references:
            where = ", ".join(r.passages[:5]) if r.passages else "unresolved"
            text = " ".join(r.text.split())[:24]  # the words, not Python's quoting of them
            print(f"{r.passage:>8}  {r.start:>5}-{r.end:<5} {text:24} -> {where}")
        if not references:
            print(f"no references to its own sections, exhibits or schedules found in {_name(project, args)}")
    return 0


def _parties(project: Project, args: argparse.Namespace) -> int:
    found = parties(_passages(project, args.document))
    if args.json:
        print(json.dumps([asdict(p) for p in found], ensure_ascii=False))
    else:
        for p in found:
            print(f"{p.passage:>8}  {p.name or '(unnamed)'}: {', '.join(p.short_names)}  role: {p.role or '-'}")
        if not found:
            print(f"no parties found in {_name(project, args)}")
    return 0


COMMANDS = {"terms": _terms, "references": _references, "parties": _parties}
