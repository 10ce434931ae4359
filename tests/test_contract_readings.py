"""A contract is read once, at import: what the claim checker's encoders read of it (every evidence passage's vector,
and in a commercial contract every sentence the reference contracts are compared with) is kept with it in the store
(documents.readings), and a check reads it back instead of embedding the contract again on its first claim. The
verdicts are those of a contract read claim by claim; a reading by another encoder, or a damaged one, is not used."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select, update

from app.judging.verification import Verifier, read_contracts, verify_project
from app.project import SAMPLE_DATASET, Project
from models.checker.encoder import Encoders
from models.checker.reference import sentences
from storage import answers, documents
from storage.schema import DocumentRow

SMALL = "DoiT-ICN-NonDisclosure-Agreement.txt"  # the sample's shortest contract


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every text the bi-encoder embeds, wherever it is asked to."""
    texts: list[str] = []
    original = Encoders.embed

    def counting(self: Encoders, said: list[str]):  # type: ignore[no-untyped-def]
        texts.extend(said)
        return original(self, said)

    monkeypatch.setattr(Encoders, "embed", counting)
    yield texts


def _contract(project: Project) -> tuple[int, list[str]]:
    """The sample's shortest commercial contract (the reference contracts read no NDA, the encoders no privacy
    policy), and the answers about it."""
    with project.sessions() as session:
        about: dict[int, list[str]] = {}
        for a in answers.list_answers(session):
            about.setdefault(answers.answer_detail(session, a.id).document_id, []).append(a.id)
        verifier = Verifier(project.sessions)
        prepared = {d: verifier.document(session, d)[0] for d in about}
        commercial = [d for d, p in prepared.items() if p.evidence.kind == "contract" and not p.nda]
        size = {d: len(session.scalar(select(DocumentRow.text).where(DocumentRow.id == d))) for d in commercial}
    chosen = min(commercial, key=lambda d: size[d])
    return chosen, about[chosen]


def _reports(project: Project, answer_ids: list[str]) -> list[dict]:
    return [
        asdict(r) for r in verify_project(project.sessions, answer_ids, save=False, verifier=Verifier(project.sessions))
    ]


@pytest.mark.every_store
def test_a_contract_read_at_import_is_not_embedded_again_and_reads_the_same(
    sample_project: Project, embedded: list[str]
) -> None:
    document_id, answer_ids = _contract(sample_project)
    claim_by_claim = _reports(sample_project, answer_ids)
    with sample_project.sessions() as session:
        assert documents.readings(session, document_id) is None  # imported before anything read it
        texts = [p.text for p in documents.passages_of(session, document_id)]

    assert read_contracts(sample_project.sessions, [document_id]) == 1
    with sample_project.sessions() as session:
        assert documents.readings(session, document_id) is not None
        assert document_id not in documents.unread(session)
    assert read_contracts(sample_project.sessions, [document_id]) == 0  # kept: not read twice

    embedded.clear()
    assert _reports(sample_project, answer_ids) == claim_by_claim  # every verdict, passage and reading the same
    contract = set(texts) | set(sentences(texts))
    assert embedded, "the claims themselves are embedded"
    assert not contract & set(embedded), "a passage or sentence of the contract was embedded again"


def test_a_reading_by_another_encoder_or_a_damaged_one_is_read_again(
    sample_project: Project, embedded: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    document_id, answer_ids = _contract(sample_project)
    claim_by_claim = _reports(sample_project, answer_ids)
    read_contracts(sample_project.sessions, [document_id])
    with sample_project.sessions() as session:
        kept = documents.readings(session, document_id)
        texts = [p.text for p in documents.passages_of(session, document_id)]
    assert kept is not None

    # another bi-encoder's vectors (a later build's weights) are not this one's: the contract is read again
    monkeypatch.setattr("models.checker.engine.dense_reader", lambda: "another encoder")
    embedded.clear()
    assert _reports(sample_project, answer_ids) == claim_by_claim
    assert set(texts) & set(embedded), "a contract kept by another encoder was not read again"
    monkeypatch.undo()

    with np.load(io.BytesIO(kept)) as arrays:  # the same arrays, compressed: what is read could outgrow the bytes
        compressed = io.BytesIO()
        np.savez_compressed(compressed, **{name: arrays[name] for name in arrays.files})
    verifier = Verifier(sample_project.sessions)
    with sample_project.sessions() as session:
        prepared, _ = verifier.document(session, document_id)
    assert verifier.engine.read_kept(prepared, kept)
    for damaged in (
        kept[: len(kept) // 2],
        b"not a reading",
        kept.replace(b"passages", b"passageZ"),
        compressed.getvalue(),
    ):
        assert not verifier.engine.read_kept(prepared, damaged)
        with sample_project.sessions.begin() as session:
            session.execute(update(DocumentRow).where(DocumentRow.id == document_id).values(readings=damaged))
        assert _reports(sample_project, answer_ids) == claim_by_claim


def test_importing_through_the_window_reads_the_contracts(project: Project, tmp_path: Path) -> None:
    """The workspace's import (the welcome screen's, the menu's) reads the new contracts before it returns."""
    from app.workspace import Workspace

    folder = tmp_path / "one"
    (folder / "documents").mkdir(parents=True)
    (folder / "documents" / "nda.txt").write_text((SAMPLE_DATASET / "documents" / SMALL).read_text(encoding="utf-8"))
    row = {"id": "one-1", "document": "nda.txt", "question": "Is it mutual?", "answer": "The agreement is mutual."}
    (folder / "qa.jsonl").write_text(json.dumps(row) + "\n")
    Workspace(project).import_dataset(folder)
    with project.sessions() as session:
        (document_id,) = session.scalars(select(DocumentRow.id))
        assert documents.unread(session) == []
        assert documents.readings(session, document_id)
