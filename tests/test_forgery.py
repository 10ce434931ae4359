"""A bundle cannot forge a reviewer's sign-off (issue 57, section 3), on SQLite and PostgreSQL; the
project file's own edits are tested in test_forgery_in_file.py, the keys in test_forgery_keys.py.

Each attack is made as its attacker would make it: a bundle's JSON edited and its SHA-256 seal
recomputed (anyone can: it is a plain hash). The rules it meets are in storage/signoff_bundles.py and
storage/reviewer_keys.py: a bundle brings a sign-off only when its reviewer's own key made it, a
reviewer's key other than their first is theirs only by a rotation their key in force signed, and a
bundle never reopens a sign-off in force where it is merged.

Two computers are two key folders: ana's laptop, where she reviews and signs, and the lead's.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import text

from app.cli import main
from app.errors import InvalidInput
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from app.review.team import export_bundle, import_bundle

from .forgery_helpers import ANSWER, OTHER, b64, canonical, public_key_of, reseal, state, submitted, verify
from .forgery_helpers import computer as computer  # autouse: ana's laptop, or another computer by name
from .key_helpers import cli as _cli


@pytest.fixture
def lead(new_project_url: Callable[[str], str]) -> Iterator[Project]:
    """The lead's project: the same sample answers, no review of its own."""
    opened = Project.open(new_project_url("lead"))
    import_dataset(opened.sessions, SAMPLE_DATASET)
    yield opened
    opened.close()


def _forged(item: dict[str, Any], edit: Callable[[dict[str, Any]], None], key: Ed25519PrivateKey | None) -> dict:
    """A bundle's sign-off with its record edited, its digest recomputed, signed with `key` (None: unsigned)."""
    record = copy.deepcopy(item["record"])
    edit(record)
    fingerprint = signature = public = None
    if key is None:
        record.pop("key", None)
    else:
        fingerprint, public = public_key_of(key)
        record["key"] = fingerprint
        signature = b64(key.sign(canonical(record).encode()))
    digest = hashlib.sha256(canonical(record).encode()).hexdigest()
    return {
        **item,
        "record": record,
        "digest": digest,
        "key_fingerprint": fingerprint,
        "signature": signature,
        "public_key": public,
        "reopened_at": None,
    }


def _retag(tag: str) -> Callable[[dict[str, Any]], None]:
    def edit(record: dict[str, Any]) -> None:
        for point in record["points"]:
            point["tag"] = tag

    return edit


def _retag_items(bundle: dict[str, Any], answer_id: str, tag: str) -> None:
    for item in bundle["items"]:
        if item["answer_id"] == answer_id:
            for point in item["points"]:
                point["tag"] = tag


def _anas_bundle(project: Project, tmp_path: Path, *answers: str) -> Path:
    """ana reviews and signs the answers on her laptop, through the command line, and exports her bundle."""
    for answer in answers:
        submitted(project, answer)
        assert main(["--db", project.url, "signoff", answer, "--reviewer", "ana"]) == 0
    path = tmp_path / "ana.json"
    export_bundle(project, "ana", path)
    return path


@pytest.mark.every_store
def test_a_bundle_with_an_unsigned_sign_off_is_refused(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    """An unsigned sign-off marked "imported" was taken as signed before reviewer keys."""
    bundle = _anas_bundle(sample_project, tmp_path, ANSWER)

    def forge(data: dict[str, Any]) -> None:
        data["signoffs"] = [_forged(data["signoffs"][0], _retag("incorrect"), None)]
        _retag_items(data, ANSWER, "incorrect")
        data.pop("keys", None)

    reseal(bundle, forge)
    computer("lead")
    before = state(lead)
    with pytest.raises(InvalidInput, match=r"ana's sign-off of answer contractnli-027 is not signed with their key"):
        import_bundle(lead, bundle)
    assert state(lead) == before
    assert verify(capsys, lead)[0] == 0


@pytest.mark.every_store
def test_a_bundle_cannot_reopen_a_sign_off_and_sign_again_with_a_key_it_brings(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    genuine = _anas_bundle(sample_project, tmp_path, ANSWER)
    computer("lead")
    import_bundle(lead, genuine)
    assert verify(capsys, lead)[0] == 0
    attacker = Ed25519PrivateKey.generate()
    forged = tmp_path / "forged.json"
    forged.write_text(genuine.read_text(encoding="utf-8"), encoding="utf-8")

    def forge(data: dict[str, Any]) -> None:
        signed = data["signoffs"][0]
        data["signoffs"] = [
            {**signed, "reopened_at": datetime.now(UTC).isoformat(), "reopened_by": "ana", "reopen_reason": "x"},
            _forged(signed, _retag("incorrect"), attacker),
        ]
        _retag_items(data, ANSWER, "incorrect")

    reseal(forged, forge)
    before = state(lead)
    with pytest.raises(
        InvalidInput, match=r"the bundle reopens ana's sign-off of answer contractnli-027, in force here"
    ):
        import_bundle(lead, forged)
    assert state(lead) == before

    # Without the reopen, a sign-off of another answer with a key the bundle brings under ana's name.
    def sign_other(data: dict[str, Any]) -> None:
        other = _forged(data["signoffs"][1], lambda r: r["answer"].update(id=OTHER), attacker) | {"answer_id": OTHER}
        data["signoffs"] = [data["signoffs"][0] | {"reopened_at": None}, other]
        _retag_items(data, ANSWER, "correct")  # ana's signed review as it is here

    reseal(forged, sign_other)
    with pytest.raises(InvalidInput, match=r"ana already has key [0-9a-f]{16} in this project: another key of theirs"):
        import_bundle(lead, forged)
    assert state(lead) == before
    assert verify(capsys, lead)[0] == 0


@pytest.mark.every_store
def test_a_bundle_cannot_carry_a_sign_off_of_another_reviewer(
    sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    bundle = _anas_bundle(sample_project, tmp_path, ANSWER)
    reseal(bundle, lambda data: data.update(reviewer="ben"))  # ana's signed work, passed off as ben's bundle
    computer("lead")
    before = state(lead)
    with pytest.raises(InvalidInput, match=r"the sign-off of answer contractnli-027 names 'ana', not 'ben'"):
        import_bundle(lead, bundle)
    assert state(lead) == before


@pytest.mark.every_store
def test_a_bundle_brings_a_first_key_and_a_rotation_signed_by_it(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    """The honest case: ana signs, rotates her key, signs again; the lead takes both sign-offs."""
    submitted(sample_project, ANSWER)
    submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")[0] == 0
    status, out = _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")
    assert status == 0, out
    assert _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")[0] == 0
    bundle = tmp_path / "ana.json"
    export_bundle(sample_project, "ana", bundle)
    computer("lead")
    import_bundle(lead, bundle)
    assert [c.matches for c in lead.signoffs()] == [True, True]
    listed = json.loads(_cli(capsys, lead, "keys", "--json")[1])
    assert [k["retired_at"] is not None for k in listed] == [True, False]
    status, out = verify(capsys, lead)
    assert status == 0, out
    assert import_bundle(lead, bundle).already_imported


@pytest.mark.every_store
def test_a_bundle_brings_the_rotations_from_the_key_the_project_knows(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    """ana rotates twice after the lead last heard of her: both rotations travel, and are checked."""
    first = _anas_bundle(sample_project, tmp_path, ANSWER)
    computer("lead")
    import_bundle(lead, first)
    computer("laptop")
    for _ in range(2):
        assert _cli(capsys, sample_project, "keys", "create", "--reviewer", "ana")[0] == 0
    submitted(sample_project, OTHER)
    assert _cli(capsys, sample_project, "signoff", OTHER, "--reviewer", "ana")[0] == 0
    second = tmp_path / "ana-again.json"
    export_bundle(sample_project, "ana", second)
    broken = tmp_path / "broken.json"
    broken.write_text(second.read_text(encoding="utf-8"), encoding="utf-8")
    reseal(broken, lambda data: data["keys"][1].update(rotation_signature=data["keys"][2]["rotation_signature"]))
    computer("lead")
    before = state(lead)
    with pytest.raises(InvalidInput, match=r"the rotation to key [0-9a-f]{16} does not verify with ana's key"):
        import_bundle(lead, broken)
    assert state(lead) == before
    import_bundle(lead, second)
    assert [c.matches for c in lead.signoffs()] == [True, True]
    listed = json.loads(_cli(capsys, lead, "keys", "--json")[1])
    assert [k["retired_at"] is not None for k in listed] == [True, True, False]
    status, out = verify(capsys, lead)
    assert status == 0, out


@pytest.mark.every_store
def test_a_bundle_brings_no_first_key_for_a_reviewer_who_signed_here_before_keys(
    sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    bundle = _anas_bundle(sample_project, tmp_path, ANSWER)
    computer("lead")
    submitted(lead, OTHER)
    with lead.sessions.begin() as session:  # a sign-off from before reviewer keys
        rater = session.execute(text("SELECT id FROM raters WHERE name = 'ana'")).scalar_one()
        session.execute(
            text(
                "INSERT INTO signoffs (answer_id, rater_id, signed_at, digest, record) "
                "VALUES (:a, :r, CURRENT_TIMESTAMP, :d, '{}')"
            ),
            {"a": OTHER, "r": rater, "d": "0" * 64},
        )
    before = state(lead)
    with pytest.raises(InvalidInput, match=r"ana has sign-offs in this project made before reviewer keys"):
        import_bundle(lead, bundle)
    assert state(lead) == before
