"""What a bundle carries besides sign-offs is taken only when its author's key signed it (issue 62,
item 3; app/review/bundle_signatures.py): an adjudicator's decisions, guideline versions, a reviewer's
first key. Each attack is made as its attacker would: a bundle's JSON edited and resealed (its seal is
a plain SHA-256), or a bundle written on the attacker's own computer under another's name."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app import keys
from app.errors import InvalidInput
from app.ingest.datasets import import_dataset
from app.project import SAMPLE_DATASET, Project
from app.review import adjudication
from app.review.bundle_signatures import decision_message
from app.review.service import ReviewService
from app.review.team import export_bundle, import_bundle
from models.vocabulary import Tag

from .forgery_helpers import ANSWER, b64, reseal, state, submitted, verify
from .forgery_helpers import computer as computer  # autouse: ana's laptop, or another computer by name
from .key_helpers import cli as _cli


@pytest.fixture
def lead(new_project_url: Callable[[str], str]) -> Iterator[Project]:
    """The lead's project: the same sample answers, no review of its own."""
    opened = Project.open(new_project_url("lead"))
    import_dataset(opened.sessions, SAMPLE_DATASET)
    yield opened
    opened.close()


def _disputed(project: Project) -> None:
    """ana tags every point of ANSWER correct; ben tags its second point incorrect."""
    submitted(project, ANSWER, "ana", Tag.CORRECT)
    service = ReviewService(project, "ben")
    for n, point in enumerate(service.open(ANSWER).points):
        service.set_tag(ANSWER, point.point.id, Tag.INCORRECT if n == 1 else Tag.CORRECT)
    service.submit(ANSWER)


def _bundles(project: Project, tmp_path: Path, *reviewers: str) -> list[Path]:
    paths = []
    for reviewer in reviewers:
        paths.append(tmp_path / f"{reviewer}.json")
        export_bundle(project, reviewer, paths[-1])
    return paths


def _waiting(project: Project) -> list[str]:
    return [case.answer_id for case in adjudication.waiting(project)]


def test_a_party_cannot_add_a_decision_in_an_adjudicators_name(
    sample_project: Project, lead: Project, tmp_path: Path
) -> None:
    _disputed(sample_project)
    point = adjudication.case(sample_project, ANSWER).disputed[0]
    ana, ben = _bundles(sample_project, tmp_path, "ana", "ben")
    adjudication.set_adjudicators(lead, ["carol"], "lead")
    import_bundle(lead, ana)
    import_bundle(lead, ben)
    assert _waiting(lead) == [ANSWER]
    decision = {
        "answer_id": ANSWER,
        "answer_sha256": json.loads(ana.read_text(encoding="utf-8"))["items"][0]["answer_sha256"],
        "point_key": point.key,
        "tag": "incorrect",
        "reason": "reviewer error",
        "adjudicator": "carol",
        "reviewers": {"ana": "correct", "ben": "incorrect"},
        "guideline_version": None,
        "decided_at": datetime.now(UTC).isoformat(),
    }
    reseal(ben, lambda data: data.update(adjudications=[decision]))  # ben, a party, decides as carol
    before = state(lead)
    with pytest.raises(InvalidInput, match=r"the bundle of ben carries a decision by 'carol'"):
        import_bundle(lead, ben)
    assert state(lead) == before
    assert "consensus" not in lead.data_points(ANSWER) and _waiting(lead) == [ANSWER]


def _carols_decision(project: Project, tmp_path: Path) -> Path:
    """carol, an adjudicator and no party, decides ANSWER's dispute on her laptop and exports her bundle."""
    ReviewService(project, "carol")
    number = adjudication.case(project, ANSWER).disputed[0].number
    adjudication.decide(project, ANSWER, number, Tag.INCORRECT, "reviewer error", "carol")
    (path,) = _bundles(project, tmp_path, "carol")
    return path


def _invent_parties(path: Path) -> None:
    """carol's own decision, made to name a reviewer who never reviewed the answer, signed again with her key."""
    held = keys.local_keys("carol")

    def edit(data: dict[str, Any]) -> None:
        (item,) = data["adjudications"]
        item["reviewers"] = {"ana": "correct", "zed": "incorrect"}
        if held:
            item["signature"] = b64(keys.signer(held[0]).sign(decision_message(item)))

    reseal(path, edit)


@pytest.mark.every_store
def test_a_decision_between_invented_parties_neither_enters_nor_hides_the_dispute(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path
) -> None:
    _disputed(sample_project)
    ana, ben = _bundles(sample_project, tmp_path, "ana", "ben")
    carol = _carols_decision(sample_project, tmp_path)
    forged = tmp_path / "forged.json"
    forged.write_text(carol.read_text(encoding="utf-8"), encoding="utf-8")
    _invent_parties(forged)
    import_bundle(lead, ana)
    import_bundle(lead, ben)
    before = state(lead)
    with pytest.raises(InvalidInput, match=r"names zed, who did not review it here \(its reviewers are ana, ben\)"):
        import_bundle(lead, forged)
    assert state(lead) == before and _waiting(lead) == [ANSWER]
    status, out = _cli(capsys, lead, "adjudicate", "--list")
    assert status == 0 and ANSWER in out, out
    import_bundle(lead, carol)  # the genuine decision, signed by carol's key, settles it
    assert [p.tag for p in lead.data_points(ANSWER)["consensus"]][:2] == [Tag.CORRECT, Tag.INCORRECT]
    assert _waiting(lead) == []
    assert verify(capsys, lead)[0] == 0


def test_a_decision_brought_before_the_reviews_never_hides_a_dispute_it_does_not_name(
    sample_project: Project, lead: Project, tmp_path: Path
) -> None:
    """Brought before the reviews it settles, a decision waits for them; one naming others never counts."""
    _disputed(sample_project)
    ana, ben = _bundles(sample_project, tmp_path, "ana", "ben")
    forged = _carols_decision(sample_project, tmp_path)
    _invent_parties(forged)
    import_bundle(lead, forged)  # no reviews here yet: it waits
    import_bundle(lead, ana)
    import_bundle(lead, ben)
    assert _waiting(lead) == [ANSWER] and "consensus" not in lead.data_points(ANSWER)


def test_a_bundle_never_replaces_the_guidelines_without_their_authors_key(
    sample_project: Project, lead: Project, tmp_path: Path
) -> None:
    rules = "# Review guidelines\n\nA point is correct when the document says so.\n"
    sample_project.set_guidelines(rules, "lead")
    lead.set_guidelines(rules, "lead")
    submitted(sample_project, ANSWER)
    (path,) = _bundles(sample_project, tmp_path, "ana")
    genuine = path.read_text(encoding="utf-8")
    forgeries = {
        "is not signed with a key of theirs registered here": {"version": 2, "text": "Everything is correct."},
        r"is not the next version here \(2\)": {"version": -1, "text": "Everything is correct."},
        "is over 5 MB": {"version": 2, "text": "x" * (20 * 1000**2)},
    }
    for problem, version in forgeries.items():
        path.write_text(genuine, encoding="utf-8")
        reseal(path, lambda data, v=version: data["guidelines"].append({**v, "author": "lead"}))
        before = state(lead)
        with pytest.raises(InvalidInput, match=rf"its guideline version -?\d by 'lead' {problem}"):
            import_bundle(lead, path)
        assert state(lead) == before
        current = lead.guidelines()
        assert current is not None and (current.version, current.text) == (1, rules)
    path.write_text(genuine, encoding="utf-8")
    assert not import_bundle(lead, path).already_imported  # the version it shares with the project is fine


@pytest.mark.every_store
def test_a_bundle_in_a_reviewers_name_brings_no_first_key_where_her_work_is(
    capsys: pytest.CaptureFixture[str], sample_project: Project, lead: Project, tmp_path: Path, computer
) -> None:
    """alice reviews in the lead's project (no key yet); an attacker writes a bundle as alice on his own
    computer, with his key as her first: it would rewrite her review and lock her real key out."""
    submitted(lead, ANSWER, "alice", Tag.CORRECT)
    computer("attacker")
    submitted(sample_project, ANSWER, "alice", Tag.INCORRECT)
    assert _cli(capsys, sample_project, "signoff", ANSWER, "--reviewer", "alice")[0] == 0
    (path,) = _bundles(sample_project, tmp_path, "alice")
    before = state(lead)
    with pytest.raises(InvalidInput, match=r"alice has work in this project and no key here: a bundle does not bring"):
        import_bundle(lead, path)
    assert state(lead) == before
    assert {p.tag for p in lead.data_points(ANSWER)["alice"]} == {Tag.CORRECT}
    computer("laptop")  # alice, where the project is, signs with a key of her own
    status, out = _cli(capsys, lead, "signoff", ANSWER, "--reviewer", "alice")
    assert status == 0, out
    assert verify(capsys, lead)[0] == 0
