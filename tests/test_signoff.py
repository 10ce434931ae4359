"""Guidelines and sign-off (issue 32), on SQLite and PostgreSQL: guidelines are versioned and audited,
a submitted review records its version, a sign-off binds the review by a digest in the audit log,
a signed review changed behind Assay's back is reported by `assay audit verify`, and one changed
through Assay must be reopened first (audited)."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
from sqlalchemy import text

from app.cli import main
from app.errors import AssayError
from app.ingest.datasets import import_dataset
from app.project import DEFAULT_GUIDELINES, SAMPLE_DATASET, Project
from app.review.service import ReviewService
from app.review.team import export_bundle, import_bundle
from models.vocabulary import Tag
from storage.audit import audit_entries

pytestmark = pytest.mark.every_store

ANSWER, OTHER = "contractnli-027", "contractnli-028"


def _cli(capsys: pytest.CaptureFixture[str], project: Project, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(["--db", project.url, *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out


def _json(capsys: pytest.CaptureFixture[str], project: Project, *argv: str) -> tuple[int, object]:
    status, out = _cli(capsys, project, *argv, "--json")
    return status, json.loads(out)


def _submitted(project: Project, answer_id: str, reviewer: str = "ana", tag: Tag = Tag.CORRECT) -> ReviewService:
    """The reviewer tags every point of the answer, comments the first, and submits."""
    service = ReviewService(project, reviewer)
    state = service.open(answer_id)
    for point in state.points:
        service.set_tag(answer_id, point.point.id, tag)
    service.comment_point(answer_id, state.points[0].point.id, "clause 3 says so")
    service.submit(answer_id)
    return service


def _actions(project: Project, action: str) -> list[dict[str, object]]:
    with project.sessions() as session:
        return [e.payload for e in audit_entries(session) if e.action == action]


def test_setting_guidelines_makes_an_audited_version(
    capsys: pytest.CaptureFixture[str], sample_project: Project, tmp_path: Path
) -> None:
    assert _json(capsys, sample_project, "guidelines") == (0, None)
    first = tmp_path / "guidelines.md"
    first.write_text(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), encoding="utf-8")
    status, v1 = _json(capsys, sample_project, "guidelines", "--set", str(first), "--author", "lead")
    assert status == 0 and v1["version"] == 1 and v1["author"] == "lead" and v1["added"]
    assert v1["sha256"] == hashlib.sha256(first.read_bytes()).hexdigest()
    # The same text again is no new version; an edit is.
    assert _json(capsys, sample_project, "guidelines", "--set", str(first))[1]["version"] == 1
    first.write_text(first.read_text(encoding="utf-8") + "\n## Citations\n\nCite the deciding passage.\n")
    status, v2 = _json(capsys, sample_project, "guidelines", "--set", str(first), "--author", "lead")
    assert v2["version"] == 2 and v2["added"]
    status, current = _json(capsys, sample_project, "guidelines")
    assert current["version"] == 2 and "Cite the deciding passage." in current["text"]
    assert [p["version"] for p in _actions(sample_project, "guidelines.set")] == [1, 2]
    assert _actions(sample_project, "guidelines.set")[1]["previous"] == 1
    guidelines = sample_project.guidelines()
    assert guidelines is not None and guidelines.version == 2 and guidelines.sha256 == v2["sha256"]
    status, out = _cli(capsys, sample_project, "guidelines")
    assert status == 0 and out.startswith("version 2 · lead") and "## Incorrect" in out


def test_a_submitted_review_records_the_guideline_version_it_was_made_under(sample_project: Project) -> None:
    sample_project.set_guidelines("# Guidelines\n\n## Correct\n\nSupported and asked for.\n", "lead")
    service = _submitted(sample_project, ANSWER)
    sample_project.set_guidelines("# Guidelines\n\n## Correct\n\nSupported, and what was asked.\n", "lead")
    _submitted(sample_project, OTHER)
    with sample_project.sessions() as session:
        versions = dict(
            session.execute(
                text("SELECT answer_id, guideline_version FROM reviews WHERE rater_id = :r"), {"r": service.rater_id}
            ).all()
        )
    assert versions == {ANSWER: 1, OTHER: 2}
    assert [p["guideline_version"] for p in _actions(sample_project, "review.submitted")] == [1, 2]


def test_a_signed_review_edited_in_the_database_is_reported_by_audit_verify(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    sample_project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "lead")
    _submitted(sample_project, ANSWER)
    status, signed = _json(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 0 and signed["guideline_version"] == 1
    # The digest is the SHA-256 of the record's canonical JSON, and the audit log chains it.
    with sample_project.sessions() as session:
        record = session.execute(text("SELECT record FROM signoffs")).scalar_one()
    record = json.loads(record) if isinstance(record, str) else record
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(canonical.encode()).hexdigest() == signed["digest"]
    assert record["reviewer"] == "ana" and record["guidelines"]["version"] == 1
    assert record["claim_checker"] == "shipped"  # no checker was fitted on this project's reviews
    assert {p["tag"] for p in record["points"]} == {"correct"} and record["points"][0]["comment"] == "clause 3 says so"
    assert _actions(sample_project, "review.signed")[0]["digest"] == signed["digest"]

    status, report = _json(capsys, sample_project, "audit", "verify")
    assert status == 0 and report["ok"] and [s["matches"] for s in report["signoffs"]] == [True]

    with sample_project.sessions.begin() as session:  # behind Assay's back: one label, then one comment
        session.execute(
            text(
                "UPDATE labels SET tag = 'incorrect' WHERE id = (SELECT MIN(l.id) FROM labels l "
                "JOIN raters r ON r.id = l.rater_id JOIN data_points d ON d.id = l.data_point_id "
                "WHERE r.name = 'ana' AND d.answer_id = :a)"
            ),
            {"a": ANSWER},
        )
    status, report = _json(capsys, sample_project, "audit", "verify")
    (check,) = report["signoffs"]
    assert status == 1 and not report["ok"] and not check["matches"]
    assert check["answer_id"] == ANSWER and check["reviewer"] == "ana" and check["digest"] == signed["digest"]
    assert "was tagged correct when signed, now incorrect" in check["problem"]
    assert report["problems"] == []  # the audit chain itself is intact: the review was what changed

    with sample_project.sessions.begin() as session:
        session.execute(
            text(
                "UPDATE data_points SET comment = 'nothing to see' WHERE answer_id = :a AND comment IS NOT NULL "
                "AND rater_id = (SELECT id FROM raters WHERE name = 'ana')"
            ),
            {"a": ANSWER},
        )
    status, out = _cli(capsys, sample_project, "audit", "verify")
    assert status == 1
    assert "1 sign-off: it no longer matches what is stored" in out
    assert "its comment was 'clause 3 says so' when signed, now 'nothing to see'" in out
    checks = sample_project.signoffs()
    assert [(c.answer_id, c.matches) for c in checks] == [(ANSWER, False)]


def test_a_sign_off_withdrawn_behind_assays_back_is_reported(sample_project: Project) -> None:
    service = _submitted(sample_project, ANSWER)
    service.sign_off(ANSWER)
    with sample_project.sessions.begin() as session:
        session.execute(text("UPDATE signoffs SET reopened_at = signed_at, reopened_by = 'someone'"))
    (check,) = sample_project.signoffs()
    assert not check.matches and "the audit log records no reopen" in (check.problem or "")


def test_a_signed_review_cannot_change_until_reopened_and_the_reopen_is_audited(
    capsys: pytest.CaptureFixture[str], sample_project: Project
) -> None:
    service = _submitted(sample_project, ANSWER)
    first = service.state(ANSWER).points[0].point.id
    service.sign_off(ANSWER)
    assert service.state(ANSWER).signoff is not None
    for change in (
        lambda: service.set_tag(ANSWER, first, Tag.INCORRECT),
        lambda: service.comment_point(ANSWER, first, "on second thoughts"),
        lambda: service.delete(ANSWER, first),
        lambda: service.rate(ANSWER, 2, 2),
        lambda: service.comment_answer(ANSWER, "changed"),
        lambda: service.submit(ANSWER),
        lambda: service.restore(ANSWER, [], "undo"),  # what undo and redo do
    ):
        with pytest.raises(AssayError, match=r"ana signed off answer contractnli-027 on .* reopen it"):
            change()
    assert {p.point.tag for p in service.state(ANSWER).points} == {Tag.CORRECT}
    with pytest.raises(AssayError, match="already signed off"):
        service.sign_off(ANSWER)
    assert [c.matches for c in sample_project.signoffs()] == [True]

    status, reopened = _json(capsys, sample_project, "reopen", ANSWER, "--reviewer", "ana", "--reason", "wrong tag")
    assert status == 0 and reopened["reason"] == "wrong tag"
    (entry,) = _actions(sample_project, "review.reopened")
    assert entry == {"digest": reopened["digest"], "reason": "wrong tag"}
    assert sample_project.signoffs() == []  # withdrawn: no longer a claim to check

    service.set_tag(ANSWER, first, Tag.INCORRECT)  # now it may change, and be signed again
    status, signed = _json(capsys, sample_project, "signoff", ANSWER, "--reviewer", "ana")
    assert status == 0 and signed["digest"] != reopened["digest"]
    assert [(c.digest, c.matches) for c in sample_project.signoffs()] == [(signed["digest"], True)]
    status, out = _cli(capsys, sample_project, "audit", "verify")
    assert status == 0 and "1 sign-off: it matches what is stored" in out


def test_exports_carry_the_signoff(sample_project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _submitted(sample_project, ANSWER)
    _submitted(sample_project, OTHER)
    signed = ReviewService(sample_project, "ana").sign_off(ANSWER)
    out = tmp_path / "set.csv"
    assert _cli(capsys, sample_project, "export", "--format", "csv", str(out))[0] == 0
    rows = [r for r in csv.DictReader(out.read_text(encoding="utf-8").splitlines()) if r["rater"] == "ana"]
    assert {r["signoff_sha256"] for r in rows if r["answer_id"] == ANSWER} == {signed.digest}
    assert {r["signed_at"] for r in rows if r["answer_id"] == ANSWER} == {signed.signed_at.isoformat()}
    assert {r["signoff_sha256"] for r in rows if r["answer_id"] == OTHER} == {""}
    out = tmp_path / "set.jsonl"
    assert _cli(capsys, sample_project, "export", "--format", "jsonl", str(out))[0] == 0
    lines = {(r["answer_id"], r["rater"]): r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert lines[(ANSWER, "ana")]["signoff"] == {
        "reviewer": "ana",
        "signed_at": signed.signed_at.isoformat(),
        "sha256": signed.digest,
    }
    assert lines[(OTHER, "ana")]["signoff"] is None


def test_a_bundle_carries_signoffs_and_the_guidelines_they_name(
    sample_project: Project, new_project_url, tmp_path: Path
) -> None:
    sample_project.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "lead")
    _submitted(sample_project, ANSWER).sign_off(ANSWER)
    bundle = tmp_path / "ana.json"
    export_bundle(sample_project, "ana", bundle)
    lead = Project.open(new_project_url("lead"))
    try:
        import_dataset(lead.sessions, SAMPLE_DATASET)
        # A version the project lacks is taken only with its author's key (issue 62; test_bundle_signed.py):
        # the lead's own guidelines are in the lead's project.
        with pytest.raises(AssayError, match="its guideline version 1 by 'lead' is not signed with a key of theirs"):
            import_bundle(lead, bundle)
        lead.set_guidelines(DEFAULT_GUIDELINES.read_text(encoding="utf-8"), "lead")
        import_bundle(lead, bundle)
        guidelines = lead.guidelines()
        assert guidelines is not None and guidelines.version == 1
        assert guidelines.sha256 == sample_project.guidelines().sha256
        (check,) = lead.signoffs()
        assert check.matches and check.reviewer == "ana" and check.digest == sample_project.signoffs()[0].digest
        assert import_bundle(lead, bundle).already_imported and len(lead.signoffs()) == 1
        other = Project.open(new_project_url("other"))
        try:
            import_dataset(other.sessions, SAMPLE_DATASET)
            other.set_guidelines("# This firm's own guidelines\n", "lead")  # a different version 1
            with pytest.raises(AssayError, match="its guideline version 1 is not this project's"):
                import_bundle(other, bundle)
            assert other.signoffs() == []
        finally:
            other.close()
    finally:
        lead.close()
