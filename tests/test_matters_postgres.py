"""Ethical walls held by PostgreSQL itself, with three real logins: `lead` (owns the database,
administers matters), `ana` (on matter A, client Acme) and `ben` (on matter B, client Birch). Both
reviewers are granted every right on every table, so that row-level security alone keeps them apart.
Ben reads no row of A through `psql`, finds nothing of A with `assay search` or full-text search,
cannot write a tag on an A answer (the database refuses it), and A's figures do not move with his work.

Neither can a walled login change what A's figures mean through the tables every matter shares
(raters, settings, reviewers' keys, signed heads), read A's part of the audit log or settings, nor
register a key or sign off in another reviewer's name (migration 0020).

Runs under tests/with_postgres.sh (skipped without a server).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from app.cli import main
from storage.matters import MATTER_TABLES, WALLED_TABLES
from storage.schema import Base
from tests.test_matters import DOCUMENTS, answer_ids, write_dataset, write_labels

REFUSED = "row-level security"

SERVER = os.environ.get("ASSAY_TEST_POSTGRES")
pytestmark = pytest.mark.skipif(not SERVER, reason="no PostgreSQL server: run under tests/with_postgres.sh")


def _psql() -> str:
    found = shutil.which("psql") or next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/psql"))), None)
    if found is None:
        pytest.skip("no psql client")
    return str(found)


class Server:
    """The test server, a database owned by `lead`, and the three logins' URLs."""

    def __init__(self, tag: str = "", people: tuple[str, ...] = ("lead", "ana", "ben")) -> None:
        """`tag` keeps apart the firms of two modules run by one process; `people` are its logins."""
        assert SERVER is not None
        self.socket = SERVER.split("host=", 1)[1]
        suffix = f"{tag}{os.getpid()}"
        self.database = f"firm_{suffix}"
        self.logins = {who: f"{who}_{suffix}" for who in people}
        admin = create_engine(SERVER, isolation_level="AUTOCOMMIT")
        with admin.connect() as db:
            for who, login in self.logins.items():
                rights = "LOGIN CREATEROLE" if who == "lead" else "LOGIN"  # lead may make the team roles (0018)
                db.exec_driver_sql(f"CREATE ROLE {login} {rights}")
            db.exec_driver_sql(f"CREATE DATABASE {self.database} OWNER {self.logins['lead']}")
        admin.dispose()

    def as_superuser(self, *statements: str) -> None:
        """Statements run in the firm's database by the server's superuser (a DBA's grants)."""
        assert SERVER is not None
        admin = create_engine(SERVER.replace("/postgres?", f"/{self.database}?"), isolation_level="AUTOCOMMIT")
        with admin.connect() as db:
            for statement in statements:
                db.exec_driver_sql(statement)
        admin.dispose()

    def url(self, who: str) -> str:
        return f"postgresql+psycopg://{self.logins[who]}@/{self.database}?host={self.socket}"

    def grant_everything(self) -> None:
        """Every right on every table to both reviewers: only the walls keep them apart."""
        reviewers = f"{self.logins['ana']}, {self.logins['ben']}"
        self.as_superuser(
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {reviewers}",
            f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {reviewers}",
        )

    def psql(self, who: str, sql: str) -> subprocess.CompletedProcess[str]:
        """`sql` run by the real psql client as this login."""
        return subprocess.run(
            [_psql(), "-h", self.socket, "-U", self.logins[who], "-d", self.database, "-tAX", "-c", sql],
            capture_output=True,
            text=True,
            check=False,
        )

    def session(self, who: str, script: str) -> subprocess.CompletedProcess[str]:
        """`script`, statements one a line, run by psql as this login in one session (its temporary
        tables live as long as it), each statement on its own: a refused one does not stop the rest."""
        return subprocess.run(
            [_psql(), "-h", self.socket, "-U", self.logins[who], "-d", self.database, "-tAX"],
            input=script,
            capture_output=True,
            text=True,
            check=False,
        )

    def value(self, who: str, sql: str) -> str:
        done = self.psql(who, sql)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    def assay(self, who: str, *argv: str) -> int:
        return main(["--db", self.url(who), *argv])


@pytest.fixture(scope="module")
def firm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Server, dict[str, list[str]], dict[str, str]]:
    server = Server()
    root = tmp_path_factory.mktemp("walled")
    answers = {}
    for key, document in DOCUMENTS.items():
        write_dataset(root / f"data{key}", document)
        answers[key] = answer_ids(root / f"data{key}")
    assert server.assay("lead", "init") == 0
    server.grant_everything()
    assert server.assay("lead", "matters", "--create", "A-1", "--client", "Acme", "--name", "Acme NDA") == 0
    assert server.assay("lead", "matters", "--create", "B-1", "--client", "Birch", "--name", "Birch NDA") == 0
    assert server.assay("lead", "matters", "--add", server.logins["ana"], "--to", "A-1") == 0
    assert server.assay("lead", "matters", "--add", server.logins["ben"], "--to", "B-1") == 0
    for key in "AB":
        assert server.assay("lead", "import", str(root / f"data{key}"), "--matter", f"{key}-1") == 0
        judge = write_labels(root / f"judge{key}.jsonl", answers[key], "judge", "judge")
        assert server.assay("lead", "import-labels", str(judge)) == 0
    files = {"root": str(root)}
    return server, answers, files


def test_every_table_of_matter_data_has_a_forced_policy(firm: tuple[Server, dict, dict]) -> None:
    server = firm[0]
    rows = server.value(
        "lead",
        "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, count(p.polname) FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_policy p ON p.polrelid = c.oid "
        "WHERE n.nspname = 'public' AND c.relkind = 'r' GROUP BY 1, 2, 3",
    )
    protected = {
        name: (secure == "t", forced == "t", int(policies))
        for name, secure, forced, policies in (line.split("|") for line in rows.splitlines())
    }
    with_matter_column = set(
        server.value(
            "lead",
            "SELECT table_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND column_name = 'matter_id'",
        ).split()
    )
    # every table: those of matter data, and those that change what a matter's figures mean (0020)
    must = set(WALLED_TABLES) | set(MATTER_TABLES) | with_matter_column | set(Base.metadata.tables)
    assert set(Base.metadata.tables) <= set(protected)
    unprotected = sorted(
        name for name in must if not (protected[name][0] and protected[name][1] and protected[name][2] > 0)
    )
    assert not unprotected, f"tables holding matter data without a forced policy: {unprotected}"


def test_a_walled_login_reads_nothing_of_the_other_matter(firm: tuple[Server, dict, dict]) -> None:
    server, answers, _ = firm
    a = server.value("lead", "SELECT id FROM matters WHERE number = 'A-1'")
    for table in WALLED_TABLES:
        assert server.value("ben", f"SELECT count(*) FROM {table} WHERE matter_id = {a}") == "0", table
        assert server.value("ana", f"SELECT count(*) FROM {table} WHERE matter_id = {a}") == server.value(
            "lead", f"SELECT count(*) FROM {table} WHERE matter_id = {a}"
        ), table
    assert server.value("ana", f"SELECT count(*) FROM passages WHERE matter_id = {a}") != "0"
    ids = ",".join(f"'{i}'" for i in answers["A"])
    assert server.value("ben", f"SELECT count(*) FROM answers WHERE id IN ({ids})") == "0"
    assert server.value("ben", "SELECT number FROM matters") == "B-1"
    assert server.value("ben", "SELECT count(*) FROM matter_members") == "1"  # his own
    # full-text search through psql finds only his own matter's passages
    hits = server.value(
        "ben",
        "SELECT DISTINCT d.name FROM passages p JOIN documents d ON d.id = p.document_id "
        "WHERE to_tsvector('english', p.text) @@ plainto_tsquery('english', 'confidential information')",
    )
    assert hits == DOCUMENTS["B"]


def test_a_walled_login_finds_nothing_of_the_other_matter_in_assay(
    firm: tuple[Server, dict, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    server = firm[0]
    capsys.readouterr()
    assert server.assay("ben", "search", "DoiT", "confidential information") == 2
    assert "no document has that name" in capsys.readouterr().err
    assert server.assay("ben", "search", "EFCA", "confidential information", "--json") == 0
    assert json.loads(capsys.readouterr().out)
    assert server.assay("ben", "matters", "--json") == 0
    assert [m["number"] for m in json.loads(capsys.readouterr().out)["matters"]] == ["B-1"]
    assert server.assay("ben", "info", "--json") == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 1
    assert server.assay("ben", "matters", "--add", server.logins["ben"], "--to", "A-1") == 2
    assert "no such matter" in capsys.readouterr().err
    assert server.assay("ben", "matters", "--create", "C-1", "--client", "Cole", "--name", "mine") == 2
    assert "only the database's owner" in capsys.readouterr().err


def test_the_database_refuses_a_tag_on_the_other_matter(firm: tuple[Server, dict, dict]) -> None:
    server = firm[0]
    point = server.value(
        "lead", "SELECT min(id) FROM data_points WHERE matter_id = (SELECT id FROM matters WHERE number = 'A-1')"
    )
    rater = server.value("lead", "SELECT id FROM raters WHERE name = 'judge'")
    before = server.value("lead", "SELECT count(*) FROM labels")
    refused = server.psql(
        "ben",
        f"INSERT INTO labels (data_point_id, rater_id, tag, created_at) VALUES ({point}, {rater}, 'correct', now())",
    )
    # refused as a point that is not there would be (migration 0021): the refusal does not say it exists
    assert refused.returncode != 0 and "that this login may see" in refused.stderr
    # nor can he claim the row is unassigned, nor change or delete what he cannot see
    assert (
        server.psql("ben", f"UPDATE labels SET tag = 'missing' WHERE data_point_id = {point}").stdout.strip()
        == "UPDATE 0"
    )
    assert server.psql("ben", f"DELETE FROM data_points WHERE id = {point}").stdout.strip() == "DELETE 0"
    assert server.value("lead", "SELECT count(*) FROM labels") == before


def test_the_other_matters_work_leaves_a_matters_figures_as_they_were(
    firm: tuple[Server, dict, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    server, answers, files = firm
    root = Path(files["root"])

    def figures() -> object:
        capsys.readouterr()
        assert server.assay("lead", "scores", "--matter", "A-1", "--json") == 0
        return json.loads(capsys.readouterr().out)

    before = figures()
    review = write_labels(root / "ben.jsonl", answers["B"][:2], server.logins["ben"], "human")
    assert server.assay("ben", "import-labels", str(review)) == 0
    on_a = write_labels(root / "ben_on_a.jsonl", answers["A"][:1], server.logins["ben"], "human")
    capsys.readouterr()
    assert server.assay("ben", "import-labels", str(on_a)) == 2  # he cannot see A's answers to tag them
    assert figures() == before
    assert server.assay("ana", "scores", "--json") == 0
    seen = {row["answer_id"] for row in json.loads(capsys.readouterr().out)}
    assert seen <= set(answers["A"])
    # the audit chain stays whole with the walled logins' entries in it
    capsys.readouterr()
    assert server.assay("lead", "audit", "verify") == 0, capsys.readouterr()


# ---------------------------------------------------------------- issue 57: the tables every matter shares


@pytest.fixture(scope="module")
def ana_reviewed(firm: tuple[Server, dict, dict]) -> str:
    """Ana's review of A's first three answers, imported by her login; her rater's id."""
    server, answers, files = firm
    review = write_labels(Path(files["root"]) / "ana.jsonl", answers["A"][:3], server.logins["ana"], "human")
    assert server.assay("ana", "import-labels", str(review)) == 0
    return server.value("lead", f"SELECT id FROM raters WHERE name = '{server.logins['ana']}'")


def _refused(done: subprocess.CompletedProcess[str], why: str = REFUSED) -> bool:
    return done.returncode != 0 and why in done.stderr


def test_a_walled_login_cannot_make_a_reviewer_a_judge(firm: tuple[Server, dict, dict], ana_reviewed: str) -> None:
    server = firm[0]
    ana, lead = server.logins["ana"], server.logins["lead"]
    assert server.psql("ben", f"UPDATE raters SET kind = 'judge' WHERE name = '{ana}'").stdout.strip() == "UPDATE 0"
    assert server.psql("ben", f"DELETE FROM raters WHERE name = '{ana}'").stdout.strip() == "DELETE 0"
    taken = f"INSERT INTO raters (name, kind, config, created_at) VALUES ('{lead}', 'judge', '{{}}', now())"
    assert _refused(server.psql("ben", taken))  # a login's name, taken for a judge run before they review
    assert server.value("lead", f"SELECT kind FROM raters WHERE id = {ana_reviewed}") == "human"


def test_a_walled_login_cannot_change_the_settings(firm: tuple[Server, dict, dict]) -> None:
    server = firm[0]
    allow = (
        "INSERT INTO settings (key, value) VALUES ('network.allowed_hosts', '[\"evil.example\"]') "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
    )
    assert _refused(server.psql("ben", allow))
    assert server.psql("ben", "UPDATE settings SET value = 'null'").stdout.strip() == "UPDATE 0"
    assert server.psql("ben", "DELETE FROM settings").stdout.strip() == "DELETE 0"
    assert server.value("lead", "SELECT count(*) FROM settings WHERE value::text LIKE '%evil%'") == "0"


def test_a_walled_login_reads_no_other_matters_settings(
    firm: tuple[Server, dict, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    server = firm[0]
    reviewers = f"{server.logins['ana']},{server.logins['ben']}"
    assert server.assay("lead", "assign", "--reviewers", reviewers, "--per-answer", "1") == 0
    assert server.value("lead", "SELECT count(*) FROM settings WHERE key = 'assignments'") == "1"
    assert server.value("ben", "SELECT count(*) FROM settings WHERE key = 'assignments'") == "0"
    server.value("lead", "INSERT INTO settings (key, value) VALUES ('comparison.seed', '7') ON CONFLICT DO NOTHING")
    assert server.value("ben", "SELECT value FROM settings WHERE key = 'comparison.seed'") == "7"  # the project's


def _key() -> tuple[str, str]:
    """A fresh Ed25519 public key (base64 of its raw bytes) and its fingerprint."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    raw = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    )
    return base64.b64encode(raw).decode(), hashlib.sha256(raw).hexdigest()


def _insert_key(reviewer: str, public: str, fingerprint: str) -> str:
    return (
        "INSERT INTO reviewer_keys (fingerprint, reviewer, algorithm, public_key, created_at) "
        f"VALUES ('{fingerprint}', '{reviewer}', 'ed25519', '{public}', now())"
    )


def test_a_walled_login_cannot_plant_keys_or_heads(firm: tuple[Server, dict, dict]) -> None:
    server = firm[0]
    ana, ben = server.logins["ana"], server.logins["ben"]
    public, fingerprint = _key()
    before = (
        server.value("lead", "SELECT count(*) FROM reviewer_keys"),
        server.value("lead", "SELECT count(*) FROM audit_heads"),
    )
    assert _refused(server.psql("ben", _insert_key(ana, public, fingerprint)))  # a key in ana's name
    assert _refused(server.psql("ben", _insert_key(ben, public, "0" * 64)))  # one not named by its hash
    # his own, behind Assay's back (no audit entry registers it): refused when the transaction ends
    assert _refused(server.psql("ben", _insert_key(ben, public, fingerprint)), "registered with its audit entry")
    head = (
        "INSERT INTO audit_heads (entry_id, entry_hash, fingerprint, signed_at, signature) "
        f"VALUES (999999, '{'1' * 64}', '{fingerprint}', now(), 'junk')"
    )
    assert _refused(server.psql("ben", head))
    after = (
        server.value("lead", "SELECT count(*) FROM reviewer_keys"),
        server.value("lead", "SELECT count(*) FROM audit_heads"),
    )
    assert after == before


def test_only_the_reviewers_own_login_signs_her_review(
    firm: tuple[Server, dict, dict], ana_reviewed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    server, answers, _ = firm
    ana = server.logins["ana"]
    assert server.assay("ana", "signoff", answers["A"][0]) == 0, capsys.readouterr()
    assert server.value("lead", "SELECT count(*) FROM signoffs") == "1"
    assert server.value("lead", "SELECT DISTINCT reviewer FROM reviewer_keys") == ana
    forged = (
        "INSERT INTO signoffs (answer_id, rater_id, signed_at, digest, record) "
        f"VALUES ('{answers['B'][0]}', {ana_reviewed}, now(), '{'2' * 64}', '{{\"reviewer\": \"{ana}\"}}')"
    )
    assert _refused(server.psql("ben", forged))
    assert server.value("lead", "SELECT count(*) FROM signoffs") == "1"
    capsys.readouterr()
    assert server.assay("lead", "audit", "verify") == 0, capsys.readouterr()


def test_a_walled_login_reads_no_other_matters_audit_entries(
    firm: tuple[Server, dict, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    server, answers, files = firm
    root = Path(files["root"])
    assert server.assay("lead", "matters", "--wall", "carol", "--client", "Acme", "--reason", "acts for a rival") == 0
    every = len(answers["A"]) + len(answers["B"])
    assert server.assay("lead", "sample", "--size", str(every), "--seed", "7") == 0  # names A's answers
    write_dataset(root / "dataC", "Keep.txt")
    assert server.assay("lead", "import", str(root / "dataC")) == 0  # unassigned: its entries carry no matter
    assert server.assay("lead", "matters", "--assign", "Keep", "--to", "A-1") == 0  # A's from now on
    a_ids = ",".join(f"'{i}'" for i in answers["A"] + answer_ids(root / "dataC"))
    leaks = (
        "SELECT count(*) FROM audit_log WHERE entity = 'wall' OR payload::text LIKE '%rival%' "
        "OR payload::text LIKE '%Acme%' OR payload::text LIKE '%Keep%' "
        f"OR entity_id IN ({a_ids}) OR EXISTS (SELECT 1 FROM unnest(ARRAY[{a_ids}]) AS a(id) "
        "WHERE payload::text LIKE '%' || a.id || '%')"
    )
    assert server.value("lead", leaks) != "0"
    assert server.value("ben", leaks) == "0"
    assert server.value("ana", "SELECT count(*) FROM audit_log WHERE payload::text LIKE '%Keep%'") != "0"
    assert server.value("ana", "SELECT count(*) FROM audit_log WHERE entity = 'wall'") == "0"  # carol's, not hers
    capsys.readouterr()
    assert server.assay("lead", "audit", "verify") == 0, capsys.readouterr()
