"""Walls and an audit log that hold whatever a login types in psql (issue 62, migration 0021).

Five real logins: `lead` owns the database; `ana` is on matter A (client Acme), `ben` on matter B
(Birch); `carol` is walled from Acme and holds only `assay_reviewer`; `dave` holds `assay_lead`'s
rights and is on no matter. 0021 revokes TEMPORARY from PUBLIC; carol and dave are granted it back
(as a DBA might) so that they can try what the issue found: temporary tables named `matters`,
`matter_members`, `audit_log`, `answers`, `documents` and `pg_class` standing in for the real ones
inside the walls' functions.

Runs under tests/with_postgres.sh (skipped without a server).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.test_matters import DOCUMENTS, answer_ids, write_dataset, write_labels
from tests.test_matters_postgres import SERVER, Server, _key, _psql

pytestmark = pytest.mark.skipif(not SERVER, reason="no PostgreSQL server: run under tests/with_postgres.sh")

Firm = tuple[Server, dict[str, list[str]]]

# Every table the walls' functions read, shadowed by a temporary one that says what the attacker wants:
# every matter is hers, she owns `matters`, no answer or document belongs to a matter; and everyone
# may read them (the owner's functions too).
SHADOWS = """
CREATE TEMP TABLE matters (id int, client text, number text, name text, archived_at timestamptz,
  created_at timestamptz);
INSERT INTO matters SELECT g, 'x', g::text, 'x', NULL, now() FROM generate_series(1, 50) g;
CREATE TEMP TABLE matter_members (id int, matter_id int, person text, added_by text, added_at timestamptz);
INSERT INTO matter_members SELECT g, g, session_user, 'x', now() FROM generate_series(1, 50) g;
CREATE TEMP TABLE answers (id text, matter_id int);
CREATE TEMP TABLE documents (id int, matter_id int);
CREATE TEMP TABLE audit_log (id int, hash text, action text, entity_id text, payload json);
CREATE TEMP TABLE pg_class (oid oid, relowner oid, relname name);
INSERT INTO pg_class SELECT c, r.oid, 'matters' FROM pg_roles r,
  unnest(ARRAY['public.matters'::regclass::oid, 'matters'::regclass::oid]) c WHERE r.rolname = session_user;
GRANT SELECT ON matters, matter_members, answers, documents, audit_log, pg_class TO PUBLIC;
"""


@pytest.fixture(scope="module")
def firm(tmp_path_factory: pytest.TempPathFactory) -> Firm:
    server = Server("walls", ("lead", "ana", "ben", "carol", "dave"))
    root = tmp_path_factory.mktemp("walls")
    answers = {}
    for key, document in DOCUMENTS.items():
        write_dataset(root / f"data{key}", document)
        answers[key] = answer_ids(root / f"data{key}")
    assert server.assay("lead", "init") == 0
    ana, ben, carol, dave = (server.logins[who] for who in ("ana", "ben", "carol", "dave"))
    server.as_superuser(
        f"GRANT assay_reviewer TO {ana}, {ben}, {carol}",
        f"GRANT assay_lead TO {dave}",
        f"GRANT TEMPORARY ON DATABASE {server.database} TO {carol}, {dave}",
    )
    assert server.assay("lead", "matters", "--create", "A-1", "--client", "Acme", "--name", "Acme NDA") == 0
    assert server.assay("lead", "matters", "--create", "B-1", "--client", "Birch", "--name", "Birch NDA") == 0
    assert server.assay("lead", "matters", "--add", ana, "--to", "A-1") == 0
    assert server.assay("lead", "matters", "--add", ben, "--to", "B-1") == 0
    assert server.assay("lead", "matters", "--wall", carol, "--client", "Acme", "--reason", "acts for a rival") == 0
    for key in "AB":
        assert server.assay("lead", "import", str(root / f"data{key}"), "--matter", f"{key}-1") == 0
        judge = write_labels(root / f"judge{key}.jsonl", answers[key], "judge", "judge")
        assert server.assay("lead", "import-labels", str(judge)) == 0
    for who, key in (("ana", "A"), ("ben", "B")):
        review = write_labels(root / f"{who}.jsonl", answers[key][:3], server.logins[who], "human")
        assert server.assay(who, "import-labels", str(review)) == 0
    return server, answers


def _lines(done: object) -> dict[str, str]:
    """psql's `label|value` rows by label."""
    out = getattr(done, "stdout", "")
    return dict(line.split("|", 1) for line in out.splitlines() if "|" in line)


# ---------------------------------------------------------------- 1: temporary tables


def test_temporary_tables_do_not_open_the_walls(firm: Firm) -> None:
    server, _ = firm
    before = server.value("lead", "SELECT string_agg(tag, ',' ORDER BY id) FROM labels")
    done = server.session(
        "carol",
        SHADOWS
        + """
SELECT 'administers', public.assay_administers();
SELECT 'answers', count(*) FROM public.answers WHERE matter_id IS NOT NULL;
SELECT 'documents', count(*) FROM public.documents WHERE matter_id IS NOT NULL;
SELECT 'passages', count(*) FROM public.passages WHERE matter_id IS NOT NULL;
SELECT 'matters', count(*) FROM public.matters;
UPDATE public.labels SET tag = 'correct';
""",
    )
    assert "CREATE TABLE" in done.stdout, done.stderr  # she did make every temporary table
    seen = _lines(done)
    assert seen == {"administers": "f", "answers": "0", "documents": "0", "passages": "0", "matters": "0"}
    assert "UPDATE 0" in done.stdout
    assert server.value("lead", "SELECT string_agg(tag, ',' ORDER BY id) FROM labels") == before


def test_temporary_tables_do_not_register_a_key_for_another_reviewer(firm: Firm) -> None:
    server, _ = firm
    ana, carol = server.logins["ana"], server.logins["carol"]
    public, fingerprint = _key()
    payload = json.dumps({"fingerprint": fingerprint, "reviewer": ana, "public_key": public})
    done = server.session(
        "carol",
        SHADOWS + f"INSERT INTO audit_log VALUES (1, 'h', 'key.registered', '{fingerprint}', '{payload}');\n"
        "BEGIN;\n"
        "INSERT INTO public.audit_log (at, actor, action, entity, entity_id, payload, prev_hash, hash) "
        f"VALUES (now(), '{carol}', 'key.registered', 'key', '{fingerprint}', '{payload}', "
        f"public.assay_audit_head(), repeat('a', 64));\n"
        "INSERT INTO public.reviewer_keys (fingerprint, reviewer, algorithm, public_key, created_at) "
        f"VALUES ('{fingerprint}', '{ana}', 'ed25519', '{public}', now());\n"
        "COMMIT;\n",
    )
    assert "ERROR" in done.stderr
    assert server.value("lead", f"SELECT count(*) FROM reviewer_keys WHERE reviewer = '{ana}'") == "0"
    assert server.value("lead", f"SELECT count(*) FROM audit_log WHERE actor = '{carol}'") == "0"


def test_temporary_tables_do_not_let_a_login_remove_a_wall_or_join_a_matter(firm: Firm) -> None:
    server, _ = firm
    dave = server.logins["dave"]
    walls = server.value("lead", "SELECT count(*) FROM matter_walls")
    done = server.session(
        "dave",
        SHADOWS + "DELETE FROM public.matter_walls;\n"
        "INSERT INTO public.matter_members (matter_id, person, added_by, added_at) "
        "SELECT m.id, session_user, session_user, now() FROM generate_series(1, 50) m(id);\n"
        "UPDATE public.matters SET archived_at = now();\n",
    )
    assert "DELETE 0" in done.stdout and "UPDATE 0" in done.stdout
    assert "row-level security" in done.stderr
    assert server.value("lead", "SELECT count(*) FROM matter_walls") == walls != "0"
    assert server.value("lead", f"SELECT count(*) FROM matter_members WHERE person = '{dave}'") == "0"
    assert server.value("lead", "SELECT count(*) FROM matters WHERE archived_at IS NOT NULL") == "0"


def test_every_function_names_its_tables_and_its_search_path(firm: Firm) -> None:
    server, _ = firm
    loose = server.value(
        "lead",
        "SELECT string_agg(p.proname, ', ') FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = 'public' AND NOT coalesce('search_path=pg_catalog, public, pg_temp' = ANY (p.proconfig), "
        "false)",
    )
    assert loose == ""


def test_a_login_may_make_no_temporary_table(firm: Firm) -> None:
    server, _ = firm
    done = server.psql("ben", "CREATE TEMP TABLE matters (id int)")
    assert done.returncode != 0 and "permission denied to create temporary tables" in done.stderr


# ---------------------------------------------------------------- 2: no answer to "does it exist?"


def test_a_walled_login_cannot_tell_another_matters_ids_from_unused_ones(firm: Firm) -> None:
    server, answers = firm
    every = "ARRAY[" + ",".join(str(i) for i in range(1, 51)) + "]"
    old = server.psql("ben", f"SELECT assay_audit_entry_seen('answer', 'x', 'x', 'x', NULL, {every})")
    assert old.returncode != 0 and "does not exist" in old.stderr  # the caller names no matters any more
    named = [*answers["A"], "no-such-answer"]
    seen = server.value(
        "ben",
        "SELECT string_agg(public.assay_audit_entry_seen('answer', a, 'x', 'nobody', NULL)::text, ',') "
        f"FROM unnest(ARRAY[{','.join(repr(a) for a in named)}]) a",
    )
    assert set(seen.split(",")) == {"false"}
    document = server.value("lead", "SELECT id FROM documents WHERE name = " + repr(DOCUMENTS["A"]))
    for entity_id in (document, "999999"):
        assert (
            server.value("ben", f"SELECT public.assay_audit_entry_seen('document', '{entity_id}', 'x', 'y', NULL)")
            == "f"
        )
    # nor does writing under an answer say whether it exists
    judge = server.value("lead", "SELECT id FROM raters WHERE name = 'judge'")

    def refusal(answer_id: str) -> str:
        done = server.psql(
            "ben",
            "INSERT INTO reviews (answer_id, rater_id, status, active_seconds) "
            f"VALUES ('{answer_id}', {judge}, 'unreviewed', 0)",
        )
        assert done.returncode != 0
        return re.sub(r"\S*" + re.escape(answer_id) + r"\S*", "ID", done.stderr.splitlines()[0])

    assert refusal(answers["A"][0]) == refusal("no-such-answer")


def test_what_the_checker_read_of_a_contract_stays_behind_its_wall(firm: Firm) -> None:
    """documents.readings (migration 0025), kept by the lead who imported the contracts: a login sees a contract's
    readings only where it sees the contract, and no reviewer may write them (forged vectors would steer verdicts)."""
    from app.judging.verification import read_contracts
    from app.project import Project

    server, _ = firm
    project = Project.open(server.url("lead"))
    try:
        read_contracts(project.sessions)
    finally:
        project.close()
    kept = "SELECT count(*) FROM documents WHERE readings IS NOT NULL"
    assert server.value("lead", kept) == "2"
    assert server.value("ana", kept) == server.value("ben", kept) == "1"
    assert server.value("carol", kept) == "0"  # walled from Acme, and on no matter
    for who in ("ana", "carol"):
        done = server.psql(who, "UPDATE documents SET readings = NULL")
        assert done.returncode != 0 and "permission denied" in done.stderr, done.stderr
    assert server.value("lead", kept) == "2"


def test_a_walled_login_reads_no_hidden_entrys_hash(firm: Firm) -> None:
    server, _ = firm
    wall = server.value("lead", "SELECT min(id) FROM audit_log WHERE entity = 'wall'")
    assert len(server.value("lead", f"SELECT public.assay_audit_entry_hash({wall})")) == 64
    assert server.value("ben", f"SELECT coalesce(public.assay_audit_entry_hash({wall}), 'hidden')") == "hidden"


# ---------------------------------------------------------------- 8: one login's own entries


def test_one_login_breaks_only_its_own_entries_and_verify_names_it(
    firm: Firm, capsys: pytest.CaptureFixture[str]
) -> None:
    server, answers = firm
    ana, ben = server.logins["ana"], server.logins["ben"]
    assert server.assay("ana", "signoff", answers["A"][0]) == 0, capsys.readouterr()
    assert server.assay("ben", "signoff", answers["B"][0]) == 0, capsys.readouterr()
    fingerprint = server.value("lead", f"SELECT fingerprint FROM reviewer_keys WHERE reviewer = '{ana}'")
    rater = server.value("lead", f"SELECT id FROM raters WHERE name = '{ana}'")
    signed = server.value("lead", "SELECT count(*), string_agg(record::text || digest, '') FROM signoffs")

    def entry(actor: str, payload: str = "{}", prev: str = "public.assay_audit_head()", **given: str) -> str:
        digest, action, entity_id = (
            given.get("digest", "repeat('e', 64)"),
            given.get("action", "note"),
            given.get("id", "x"),
        )
        return (
            "INSERT INTO audit_log (at, actor, action, entity, entity_id, payload, prev_hash, hash) "
            f"VALUES (now(), '{actor}', '{action}', 'key', '{entity_id}', '{payload}', {prev}, {digest});\n"
        )

    second, second_fingerprint = _key()
    registered = json.dumps({"fingerprint": second_fingerprint, "reviewer": ana, "public_key": second})

    refused = [
        entry(server.logins["lead"]),  # in another's name
        entry(ana, payload="[1]"),  # a payload verify cannot read as an object
        entry(ana, digest="'junk'"),
        entry(ana, prev="'" + "1" * 64 + "'"),  # linked to no entry: a fork
        entry(ana, payload=json.dumps({"reviewer": ben}), action="review.signed"),  # a sign-off in ben's name
        # a second key of hers, with its audit entry, but no rotation
        "BEGIN;\n"
        + entry(ana, payload=registered, action="key.registered", id=second_fingerprint)
        + "INSERT INTO reviewer_keys (fingerprint, reviewer, algorithm, public_key, created_at) "
        f"VALUES ('{second_fingerprint}', '{ana}', 'ed25519', '{second}', now());\nCOMMIT;\n",
        "INSERT INTO signoffs (answer_id, rater_id, signed_at, digest, record) "
        f"VALUES ('{answers['A'][1]}', {rater}, now(), '{'3' * 64}', '{{\"reviewer\": \"{ana}\"}}');\n",
        f'UPDATE signoffs SET record = \'{{"reviewer": "{ana}"}}\';\n',
        "DELETE FROM signoffs;\n",
    ]
    for attempt in refused:
        done = server.session("ana", attempt)
        assert "ERROR" in done.stderr, attempt
    assert server.value("lead", "SELECT count(*), string_agg(record::text || digest, '') FROM signoffs") == signed
    assert server.value("lead", f"SELECT count(*) FROM reviewer_keys WHERE reviewer = '{ana}'") == "1"
    # What the database cannot check: a hash that is not the content's, a head's Ed25519 signature.
    junk = server.session(
        "ana",
        entry(ana) + "INSERT INTO audit_heads (entry_id, entry_hash, fingerprint, signed_at, "
        f"signature) SELECT id, hash, '{fingerprint}', now(), 'AAAA' FROM audit_log ORDER BY id DESC LIMIT 1;\n",
    )
    assert "ERROR" not in junk.stderr, junk.stderr
    assert server.assay("lead", "matters", "--create", "C-1", "--client", "Cole", "--name", "after") == 0
    capsys.readouterr()
    assert server.assay("lead", "audit", "verify", "--json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["problems"] and all(p["login"] == ana and ana in p["problem"] for p in report["problems"])
    assert {c["reviewer"]: c["matches"] for c in report["signoffs"]} == {ana: True, ben: True}
    assert server.assay("lead", "audit", "verify") == 1
    assert f"{ana} broke" in capsys.readouterr().out


def test_a_login_still_reopens_and_rotates_its_own(firm: Firm, capsys: pytest.CaptureFixture[str]) -> None:
    server, answers = firm
    ben = server.logins["ben"]
    if (
        server.value(
            "lead", f"SELECT count(*) FROM signoffs s JOIN raters r ON r.id = s.rater_id WHERE r.name = '{ben}'"
        )
        == "0"
    ):
        assert server.assay("ben", "signoff", answers["B"][1]) == 0, capsys.readouterr()
    # a reopening behind Assay's back (no audit entry) is refused when the transaction ends
    bare = server.psql("ben", f"UPDATE signoffs SET reopened_at = now(), reopened_by = '{ben}'")
    assert bare.returncode != 0 and "reopened with its audit entry" in bare.stderr
    assert server.assay("ben", "reopen", answers["B"][0], "--reason", "point 1 is wrong") == 0, capsys.readouterr()
    assert server.value("lead", "SELECT count(*) FROM signoffs WHERE reopened_at IS NOT NULL") == "1"
    assert server.assay("ben", "keys", "create") == 0, capsys.readouterr()  # a rotation: his new key retires the old
    assert (
        server.value("lead", f"SELECT count(*) FROM reviewer_keys WHERE reviewer = '{ben}' AND retired_at IS NULL")
        == "1"
    )
    assert server.value("lead", f"SELECT count(*) FROM reviewer_keys WHERE reviewer = '{ben}'") == "2"


def test_two_writers_at_once_do_not_fork_the_log(firm: Firm) -> None:
    server, _ = firm
    first = subprocess.Popen(
        [_psql(), "-h", server.socket, "-U", server.logins["ben"], "-d", server.database, "-tAX"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert first.stdin is not None and first.stdout is not None
    first.stdin.write("BEGIN;\nSELECT 'head', public.assay_audit_head() IS NOT NULL;\n")
    first.stdin.flush()
    assert first.stdout.readline().strip() == "BEGIN"
    assert first.stdout.readline().strip() == "head|t"  # it holds the log's lock until it ends
    second = subprocess.Popen(
        [
            _psql(),
            "-h",
            server.socket,
            "-U",
            server.logins["ana"],
            "-d",
            server.database,
            "-tAX",
            "-c",
            "SELECT public.assay_audit_head()",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    while server.value("lead", waiting) != "1":  # the second writer waits for the first to end
        assert second.poll() is None, second.communicate()
    _, failed = first.communicate(
        "INSERT INTO audit_log (at, actor, action, entity, entity_id, payload, prev_hash, hash) "
        "VALUES (now(), session_user, 'note', 'project', 'x', '{}', public.assay_audit_head(), repeat('b', 64));\n"
        "COMMIT;\n"
    )
    assert first.returncode == 0 and "ERROR" not in failed, failed
    out, err = second.communicate()
    assert out.strip() == "b" * 64, err  # it links to the first one's entry, not to the one before it
