"""Who is who in team mode, on a real PostgreSQL server with real logins.

The reviewer is the database login (session_user), whatever name is typed; what each login may
write is the database's to enforce, through the roles migration 0018 grants (assay_reviewer,
assay_adjudicator, assay_lead). An adjudication or a guideline change by a login without the role is
refused by the database itself, checked with `psql` as that login, and Assay says so in one sentence.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import create_engine, text

from app.cli import main
from app.project import Project
from app.review.service import ReviewService
from models.vocabulary import Tag
from tests.conftest import POSTGRES, _new_postgres_database

pytestmark = pytest.mark.skipif(not POSTGRES, reason="no PostgreSQL server: run through tests/with_postgres.sh")

ANSWER = "contractnli-027"
_numbers = itertools.count()
PSQL = shutil.which("psql") or next(iter(Path("/usr/lib/postgresql").glob("*/bin/psql")), None)
ROLE_OF = {"rita": "assay_reviewer", "rhea": "assay_reviewer", "rob": "assay_reviewer", "adam": "assay_adjudicator"}


def _as(url: str, login: str) -> str:
    return url.replace("://assay@", f"://{login}@", 1)


@pytest.fixture
def team(request: pytest.FixtureRequest) -> dict[str, str]:
    """A project on the server and four logins: reviewers rita, rhea and rob, adjudicator adam."""
    assert POSTGRES is not None
    url = _new_postgres_database(template=request.getfixturevalue("_sample_postgres_template"))
    Project.open(url).close()  # at the newest schema, roles and grants included
    suffix = f"{os.getpid()}_{next(_numbers)}"
    logins = {name: f"{name}_{suffix}" for name in ROLE_OF}
    admin = create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        for name, login in logins.items():
            connection.execute(text(f"CREATE ROLE {login} LOGIN"))
            connection.execute(text(f"GRANT {ROLE_OF[name]} TO {login}"))
    admin.dispose()
    return {"url": url, **logins}


def _psql(url: str, login: str, sql: str) -> subprocess.CompletedProcess[str]:
    parts = urlsplit(url)
    host = parse_qs(parts.query)["host"][0]
    command = [str(PSQL), "-h", host, "-U", login, "-d", parts.path.lstrip("/"), "-v", "ON_ERROR_STOP=1", "-c", sql]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def _review(url: str, login: str, tag: Tag) -> str:
    project = Project.open(_as(url, login))
    try:
        service = ReviewService(project, "Somebody Typed")  # a typed name does not make a reviewer
        for point in service.open(ANSWER).points:
            service.set_tag(ANSWER, point.point.id, tag)
        service.submit(ANSWER)
        return service.reviewer
    finally:
        project.close()


def test_labels_carry_the_login_not_a_typed_name(team: dict[str, str]) -> None:
    assert _review(team["url"], team["rita"], Tag.CORRECT) == team["rita"]
    owner = create_engine(team["url"])
    with owner.connect() as connection:
        names = connection.execute(
            text(
                "SELECT DISTINCT r.name FROM labels l JOIN raters r ON r.id = l.rater_id "
                "JOIN data_points p ON p.id = l.data_point_id WHERE p.answer_id = :a AND r.kind = 'human'"
            ),
            {"a": ANSWER},
        ).all()
        actors = connection.execute(text("SELECT DISTINCT actor FROM audit_log WHERE action LIKE 'review.%'")).all()
    owner.dispose()
    assert {n for (n,) in names} == {team["rita"]} and {a for (a,) in actors} == {team["rita"]}


@pytest.mark.skipif(not PSQL, reason="psql is installed with PostgreSQL")
def test_the_database_refuses_an_adjudication_or_guideline_change_without_the_role(team: dict[str, str]) -> None:
    insert = (
        "INSERT INTO adjudications (answer_id, point_key, tag, adjudicator, reviewers, decided_at) "
        f"VALUES ('{ANSWER}', 'psql', 'correct', current_user, '{{}}', now())"
    )
    refused = _psql(team["url"], team["rita"], insert)
    assert refused.returncode != 0 and "permission denied for table adjudications" in refused.stderr
    allowed = _psql(team["url"], team["adam"], insert)
    assert allowed.returncode == 0, allowed.stderr
    guideline = (
        "INSERT INTO guideline_versions (version, text, sha256, author, created_at) VALUES (9, 'x', 'x', 'x', now())"
    )
    refused = _psql(team["url"], team["adam"], guideline)
    assert refused.returncode != 0 and "permission denied for table guideline_versions" in refused.stderr


def test_assay_says_in_one_sentence_what_the_database_refused(
    team: dict[str, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _review(team["url"], team["rita"], Tag.CORRECT)
    _review(team["url"], team["rhea"], Tag.INCORRECT)  # a dispute on every point

    def run(login: str, *argv: str) -> tuple[int, str]:
        capsys.readouterr()
        status = main(["--db", _as(team["url"], login), *argv])
        _, err = capsys.readouterr()
        assert "Traceback" not in err
        return status, err.strip()

    status, said = run(team["rob"], "adjudicate", ANSWER, "--point", "1", "--tag", "correct")
    assert status == 2 and said.count("\n") == 0
    assert f"the database refused it: the login {team['rob']} does not have the adjudicator role" in said
    assert f"GRANT assay_adjudicator TO {team['rob']}" in said
    status, said = run(team["adam"], "adjudicate", ANSWER, "--point", "1", "--tag", "correct")
    assert status == 0, said
    guidelines = tmp_path / "guidelines.md"
    guidelines.write_text("# Guidelines\n\nTag what the contract says.\n", encoding="utf-8")
    status, said = run(team["adam"], "guidelines", "--set", str(guidelines))
    assert status == 2 and f"the login {team['adam']} does not have the lead role" in said
    owner = create_engine(team["url"])
    with owner.connect() as connection:
        adjudicators = connection.execute(text("SELECT DISTINCT adjudicator FROM adjudications")).all()
        versions = connection.execute(text("SELECT count(*) FROM guideline_versions")).scalar_one()
    owner.dispose()
    assert {a for (a,) in adjudicators} == {team["adam"]} and versions == 0


def test_a_login_retires_its_own_key_not_another_reviewers(
    team: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    def run(login: str, *argv: str) -> tuple[int, str]:
        capsys.readouterr()
        status = main(["--db", _as(team["url"], login), *argv])
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        return status, (out + err).strip()

    status, said = run(team["adam"], "keys", "create", "--reviewer", "Somebody Typed")
    assert status == 0 and f"made a signing key for {team['adam']}" in said, said
    fingerprint = said.split(": ")[1].split()[0]
    status, said = run(team["rita"], "keys", "retire", fingerprint)
    assert status == 2 and f"the key is {team['adam']}'s: only they or a lead may retire it" in said
    status, said = run(team["adam"], "keys", "retire", fingerprint)
    assert status == 0 and "it signs nothing more" in said, said
