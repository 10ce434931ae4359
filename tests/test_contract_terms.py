"""Defined terms, cross-references and parties (app/ingest/contract_terms.py): the drafting forms one
by one, then recall and precision against three shared contracts read by hand
(fixtures/contract_terms.json), and the share of "Section N.NN" references that resolve in the
merger agreements, with the time extraction takes beside parsing."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from app.cli import main
from app.ingest.contract_terms import as_passages, cross_references, defined_terms, parties
from app.ingest.documents import parse_document
from storage.documents import Passage

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "legalbench_rag_qa"
DOCUMENTS = SHARED / "documents"
FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "contract_terms.json").read_text(encoding="utf-8"))
HAND_READ = [name for name in FIXTURE if not name.startswith("_")]
MERGERS = ["HMS Holdings Corp._Veritas Capital.txt", "Inovalon_Holdings_Management_Led_Buyout.txt"]
MERGERS.append("The Michaels Companies, Inc._Apollo Global Management, LLC.txt")
needs_shared = pytest.mark.skipif(not DOCUMENTS.is_dir(), reason="the shared legalbench_rag_qa documents are absent")

PREAMBLE = (
    'This Agreement is made between ACME CORP., a Delaware corporation ("Acme" or the "Disclosing Party"), '
    'and Beta Labs LLC (hereinafter "Recipient") (each, a "Party").'
)
CONTRACT = f"""\
# MUTUAL NON-DISCLOSURE AGREEMENT

{PREAMBLE}

WHEREAS, Acme owns certain software (the “Platform”) and wishes to disclose it.

## 1. Definitions

"Affiliate": any entity controlling or controlled by a Party.

"Confidential Information" means all information disclosed under this Agreement.

"Term" shall mean the period in Section 4.1 (the "Initial Period") and any renewal (each, a “Renewal”).

## 4. Term

4.1 This Agreement lasts two years, subject to Sections 4.1 and 4.2 and Article IV.

4.2 Either Party may end it under this Section, Exhibit B or Schedule 1, as set out in Section 7.3(a).

4.3 The fees are listed below: (a) a set-up fee; and (b) a monthly fee, each under clause (b) and paragraph 4 above.
"""


def _contract(tmp_path: Path) -> list[Passage]:
    path = tmp_path / "nda.md"
    path.write_text(CONTRACT, encoding="utf-8")
    return as_passages(parse_document(path))


def test_each_drafting_form_defines_a_term(tmp_path: Path) -> None:
    terms = {t.term: t for t in defined_terms(_contract(tmp_path))}
    wanted = ["Acme", "Disclosing Party", "Recipient", "Party", "Platform", "Affiliate", "Confidential Information"]
    assert {*wanted, "Term", "Initial Period", "Renewal"} <= set(terms)
    assert "Agreement" not in terms  # "This Agreement" defines nothing
    assert terms["Confidential Information"].definition.startswith('"Confidential Information" means all')
    assert terms["Platform"].definition.startswith("WHEREAS, Acme owns")


def test_references_carry_offsets_and_resolve_or_say_unresolved(tmp_path: Path) -> None:
    passages = _contract(tmp_path)
    by_id = {p.citation_id: p for p in passages}
    refs = cross_references(passages)
    for r in refs:
        assert by_id[r.passage].text[r.start : r.end] == r.text
    found = {(r.kind, r.target): r.passages for r in refs}
    section_41 = next(p.citation_id for p in passages if p.section == "4.1")
    section_43 = next(p.citation_id for p in passages if p.section == "4.3")
    assert found["section", "4.1"] == (section_41,)
    assert ("section", "4.2") in found
    assert found["article", "IV"] is None  # the document has no Article IV: never guessed
    assert found["exhibit", "B"] is None and found["schedule", "1"] is None
    assert found["section", "7.3(a)"] is None
    assert found["section", "this"] == (next(p.citation_id for p in passages if p.section == "4.2"),)
    assert found["clause", "(b)"] == (section_43,)  # the item (b) its own passage lists
    assert ("paragraph", "4") in found


def test_parties_come_from_the_preamble(tmp_path: Path) -> None:
    found = parties(_contract(tmp_path))
    acme = next(p for p in found if "ACME" in p.name)
    assert acme.name == "ACME CORP." and acme.short_names == ("Acme", "Disclosing Party")
    assert acme.role == "Disclosing Party"
    assert any(p.name == "Beta Labs LLC" and p.short_names == ("Recipient",) for p in found)


def _figures(expected: list[str], got: list[str]) -> tuple[float, float]:
    """Recall and precision of `got` against `expected`, counted as multisets."""
    hits = sum((Counter(expected) & Counter(got)).values())
    return hits / max(len(expected), 1), hits / max(len(got), 1)


@needs_shared
@pytest.mark.parametrize("name", HAND_READ)
def test_extraction_matches_a_reading_by_hand(name: str) -> None:
    passages = as_passages(parse_document(DOCUMENTS / name))
    wanted = FIXTURE[name]
    term_recall, term_precision = _figures(wanted["terms"], [t.term for t in defined_terms(passages)])
    refs = cross_references(passages)
    written = [f"{r['kind']} {r['target']} {r['text']} {r['resolves']}" for r in wanted["references"]]
    found = [f"{r.kind} {r.target} {r.text} {r.passages is not None}" for r in refs]
    ref_recall, ref_precision = _figures(written, found)
    print(
        f"\n{name[:40]}: terms recall {term_recall:.3f} precision {term_precision:.3f}; "
        f"references recall {ref_recall:.3f} precision {ref_precision:.3f}"
    )
    assert min(term_recall, term_precision, ref_recall, ref_precision) >= 0.95


@needs_shared
def test_merger_agreements_section_references_resolve() -> None:
    shares = []
    for name in MERGERS:
        refs = cross_references(as_passages(parse_document(DOCUMENTS / name)))
        numbered = [r for r in refs if r.kind == "section" and re.fullmatch(r"\d+\.\d+.*", r.target)]
        share = sum(r.passages is not None for r in numbered) / len(numbered)
        print(f"\n{name[:40]}: {len(numbered)} 'Section N.NN' references, {share:.1%} resolved")
        shares.append(share)
        assert len(numbered) > 100
    assert min(shares) >= 0.90


@needs_shared
def test_the_commands_print_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = ["--project", str(tmp_path / "p.assay")]
    assert main([*project, "import", str(SHARED)]) == 0
    capsys.readouterr()
    assert main([*project, "terms", "DoiT", "--json"]) == 0
    assert {t["term"] for t in json.loads(capsys.readouterr().out)} == {"State", "Vendor", "CONFIDENTIAL INFORMATION"}
    assert main([*project, "references", "Fulucai", "--json"]) == 0
    refs = json.loads(capsys.readouterr().out)
    assert {"text": "Exhibit A", "passages": None}.items() <= refs[1].items()
    assert main([*project, "parties", "Fulucai", "--json"]) == 0
    assert [p["short_names"] for p in json.loads(capsys.readouterr().out)] == [["ConvergTV"], ["Producer"]]
