"""Where a project has no human label, the standing a verifier run shows counts the whole engine's held-out
answers on the checker's newer parts (resources/claim_checker/engine_held_out.json, written by
bench/engine_card.py) beside the data cards', each answer once, and only while the card was measured with
the artefacts that ship: a card of another engine is refused, never shown as this one's."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.ingest.datasets import import_dataset
from app.judging.standing import standing_of_run
from app.judging.verification import VERIFIER, verify_project
from app.project import SAMPLE_DATASET, Project
from models.checker import manifest, shipped_held_out
from models.checker.encoder import engine_held_out
from models.checker.manifest import ENGINE_CARD, RESOURCES, artefacts_sha256

RERUN = "the engine card was measured with other artefacts: rerun `nice -n 10 .venv/bin/python bench/engine_card.py`"


@pytest.fixture
def checked(project: Project) -> Project:
    """The sample imported and one answer checked: a verifier run in a project with no human label."""
    import_dataset(project.sessions, SAMPLE_DATASET)
    verify_project(project.sessions, [next(a.id for a in project.answers())])
    return project


def _held_out_answers(project: Project) -> int:
    """How many held-out answers the run's standing says it rests on, read from its words."""
    text = standing_of_run(project.sessions, VERIFIER).text
    found = re.search(r"\(([\d,]+) held-out, from its data card", text)
    assert found, text
    return int(found.group(1).replace(",", ""))


def _resources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, card: dict[str, Any] | None) -> Path:
    """A copy of the shipped data cards and manifest (nothing here loads an encoder from it), with `card` as
    the engine card, pinned; None: no engine card."""
    copy = (tmp_path / "claim_checker").resolve()
    (copy / "encoder").mkdir(parents=True)
    for name in ("manifest.json", "model.json", "kinds.json", "encoder/contract_checker.json"):
        shutil.copyfile(RESOURCES / name, copy / name)
    monkeypatch.setattr(manifest, "RESOURCES", copy)
    monkeypatch.setattr(manifest, "MANIFEST", copy / "manifest.json")
    if card is not None:
        (copy / ENGINE_CARD).write_text(json.dumps(card))
        manifest.pin(copy / ENGINE_CARD)
    return copy


def _shipped_card() -> dict[str, Any]:
    card: dict[str, Any] = json.loads((RESOURCES / ENGINE_CARD).read_text())
    return card


def test_the_standing_counts_the_engines_held_out_answers(
    checked: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = _shipped_card()["held_out"]
    assert engine_held_out() == entries, RERUN
    engine = sum(e["answers"] for e in entries)
    assert engine > 1500  # the lawyer's wordings, dates and terms, kinds of clause
    shown = _held_out_answers(checked)
    assert shown == sum(e["answers"] for e in shipped_held_out())

    _resources(tmp_path, monkeypatch, {**_shipped_card(), "held_out": []})
    assert _held_out_answers(checked) == shown - engine  # what the window said before the card


def test_a_card_measured_with_other_artefacts_is_refused(
    checked: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = _resources(tmp_path, monkeypatch, None)
    without = _held_out_answers(checked)
    card = _shipped_card()
    for entry in card["held_out"]:
        entry["measured_with"] = artefacts_sha256()  # measured with the artefacts of the copy: it counts
    _resources(tmp_path / "again", monkeypatch, card)
    counted = _held_out_answers(checked)
    assert counted == without + sum(e["answers"] for e in card["held_out"])

    kinds = json.loads((copy / "kinds.json").read_text())
    kinds["minutes"] = kinds["minutes"] + 1  # the clause-kind reader retrained: the card is another engine's
    again = manifest.RESOURCES
    (again / "kinds.json").write_text(json.dumps(kinds))
    manifest.pin(again / "kinds.json")
    assert engine_held_out() == [] and _held_out_answers(checked) == without

    for entry in card["held_out"]:
        entry["measured_with"] = artefacts_sha256()
    _resources(tmp_path / "altered", monkeypatch, card)
    (manifest.RESOURCES / ENGINE_CARD).write_text(json.dumps({**card, "held_out": card["held_out"] * 2}))
    assert _held_out_answers(checked) == without  # a card edited after it was pinned counts nothing


def test_each_held_out_answer_is_counted_once() -> None:
    entries = shipped_held_out()
    names = [e["set"] for e in entries]
    assert len(names) == len(set(names)), names
    for entry in _shipped_card()["held_out"]:
        assert entry["with_errors"] + entry["correct"] == entry["answers"]
        assert entry["kind"] == "contract" and entry["shipped"] is True
    lawyer = next(e["set"] for e in entries if "lawyer's wording" in e["set"])
    assert "contractnli-dev" in lawyer and "held out by wording, not by document" in lawyer
