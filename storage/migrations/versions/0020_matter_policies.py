"""Walls on the project-wide tables, and signatures only by the signer's own login.

On PostgreSQL every table now has row-level security, forced:

- A login that does not see every matter (a walled login: not the owner's role, and not on every
  matter) can no longer change what a matter's figures mean: `raters` (a person turned into a judge
  run empties a matter's human reviews), `settings` (the network allow-list, the review mode, gold
  answers) and `guideline_versions` are written only by the owner's role or a login on every matter.
  A walled login may still add its own reviewer rater (named as its login), the adjudicators'
  consensus, and a judge run's rater (named as no login).
- `reviewer_keys`: a key is registered only for the login itself (its reviewer is `session_user`),
  its fingerprint the SHA-256 of its public key, and, before the transaction ends, the audit entry
  registering it in the log (else `audit verify` would fail for everyone); it is retired by its
  reviewer, the owner's role, or a lead on every matter. The owner's role registers anyone's key:
  a reviewer's bundle brings their key.
- `audit_heads`: a head names an entry of the log with its hash, and is signed with a key not
  retired: the login's own (the owner's role: any registered key).
- `signoffs`: a sign-off is written (and reopened or removed) only by its reviewer's login: its
  rater and the reviewer its record names are `session_user`, its key theirs. The owner's role is
  excepted: it imports reviewers' bundles.
- `audit_log`: an entry without a matter is read by a walled login only when what it is about is
  not another matter's: an answer, pair of answers or document now filed under another matter (filed
  after the entry was written), a wall on someone else, a sample drawn over another matter's
  answers, another reviewer's bundle and the naming of the project's matter stay hidden.
- `settings`: the keys that hold a matter's data (`MATTER_SETTINGS`: assignments by answer, a check's
  timings by answer, the matter's name) are hidden from a walled login.

The reviewer's name is the login, as the code names it on a server (app/review/roles.py).

Revision ID: 0020
Revises: 0019
"""

from alembic import op

revision = "0020"
down_revision = "0019"

ADMIN = "(SELECT assay_administers())"
# Writes that change what every matter's figures mean: the owner's role, or a login on every matter.
WRITER = f"({ADMIN} OR (SELECT assay_sees_every_matter()))"
MINE = "ARRAY(SELECT assay_login_matters())"
VISIBLE = f"matter_id IS NULL OR matter_id = ANY ({MINE}) OR {ADMIN}"
# A frozen copy of storage/matters.py's MATTER_SETTINGS and MATTER_SETTING_PREFIXES as of this revision.
MATTER_SETTING = "key IN ('assignments', 'project.matter_name') OR key LIKE 'model\\_check.%'"
PROJECT_WIDE = ("raters", "settings", "guideline_versions", "reviewer_keys", "audit_heads")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    _functions()
    for table in PROJECT_WIDE:
        op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    for table in ("raters", "guideline_versions", "reviewer_keys", "audit_heads"):
        op.execute(f"CREATE POLICY everyone_reads ON {table} FOR SELECT USING (true)")
    for table in ("raters", "settings", "guideline_versions"):
        op.execute(f"CREATE POLICY project_wide ON {table} USING ({WRITER}) WITH CHECK ({WRITER})")
    op.execute(
        "CREATE POLICY own_rater ON raters FOR INSERT WITH CHECK ("
        "(kind = 'human' AND (name = session_user OR (name = 'consensus' AND (config ->> 'consensus') = 'true'))) "
        "OR (kind <> 'human' AND NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = name)))"
    )
    op.execute(f"CREATE POLICY matter_wall ON settings FOR SELECT USING (NOT ({MATTER_SETTING}))")
    op.execute(
        "CREATE POLICY own_key ON reviewer_keys FOR INSERT WITH CHECK ("
        f"{ADMIN} OR (reviewer = session_user "
        "AND fingerprint = encode(sha256(decode(public_key, 'base64')), 'hex')))"
    )
    retirer = (
        f"reviewer = session_user OR {ADMIN} OR ((SELECT assay_sees_every_matter()) "
        "AND EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'assay_lead') "
        "AND pg_has_role(session_user, 'assay_lead', 'MEMBER'))"
    )
    op.execute(f"CREATE POLICY own_key_retired ON reviewer_keys FOR UPDATE USING ({retirer}) WITH CHECK ({retirer})")
    op.execute(
        "CREATE CONSTRAINT TRIGGER reviewer_keys_audited AFTER INSERT ON reviewer_keys "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assay_key_audited()"
    )
    op.execute(
        "CREATE POLICY own_head ON audit_heads FOR INSERT WITH CHECK ("
        "assay_audit_entry_hash(entry_id) = entry_hash AND EXISTS (SELECT 1 FROM reviewer_keys k "
        "WHERE k.fingerprint = audit_heads.fingerprint AND k.retired_at IS NULL "
        f"AND (k.reviewer = session_user OR {ADMIN})))"
    )
    signer = (
        f"{ADMIN} OR ((SELECT name FROM raters WHERE raters.id = signoffs.rater_id) = session_user "
        "AND record ->> 'reviewer' = session_user AND (key_fingerprint IS NULL OR EXISTS ("
        "SELECT 1 FROM reviewer_keys k WHERE k.fingerprint = signoffs.key_fingerprint "
        "AND k.reviewer = session_user)))"
    )
    # Restrictive: on top of the matter's wall (0019), not instead of it.
    op.execute(f"CREATE POLICY signer_is_login ON signoffs AS RESTRICTIVE FOR INSERT WITH CHECK ({signer})")
    op.execute(
        f"CREATE POLICY signer_reopens ON signoffs AS RESTRICTIVE FOR UPDATE USING ({signer}) WITH CHECK ({signer})"
    )
    op.execute(f"CREATE POLICY signer_removes ON signoffs AS RESTRICTIVE FOR DELETE USING ({signer})")
    op.execute("DROP POLICY matter_wall ON audit_log")
    op.execute(
        f"CREATE POLICY matter_wall ON audit_log FOR SELECT USING ({ADMIN} OR matter_id = ANY ({MINE}) "
        f"OR (matter_id IS NULL AND assay_audit_entry_seen(entity, entity_id, action, actor, payload, {MINE})))"
    )
    op.execute(f"CREATE POLICY matter_write ON audit_log FOR INSERT WITH CHECK ({VISIBLE})")


def _functions() -> None:
    # SECURITY DEFINER where a walled login must be judged on rows it cannot see (the matters it is not
    # on, the answers of another matter); each names the login by session_user, never current_user
    # (the definer's, inside).
    op.execute(
        "CREATE FUNCTION assay_sees_every_matter() RETURNS boolean LANGUAGE sql STABLE PARALLEL RESTRICTED "
        "SECURITY DEFINER SET search_path FROM CURRENT AS $$ "
        "SELECT NOT EXISTS (SELECT 1 FROM matters m WHERE NOT EXISTS ("
        "SELECT 1 FROM matter_members p WHERE p.matter_id = m.id AND p.person = session_user)) $$"
    )
    op.execute(
        "CREATE FUNCTION assay_audit_entry_hash(entry integer) RETURNS text LANGUAGE sql STABLE "
        "SECURITY DEFINER SET search_path FROM CURRENT AS $$ SELECT hash FROM audit_log WHERE id = entry $$"
    )
    # Whether a walled login may read an entry that carries no matter: whether what it is about is
    # unassigned or in one of `mine` now (a document filed after its entry was written carries it).
    op.execute(
        "CREATE FUNCTION assay_audit_entry_seen(entity text, entity_id text, action text, actor text, "
        "payload json, mine integer[]) RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL RESTRICTED "
        "SECURITY DEFINER SET search_path FROM CURRENT AS $$ BEGIN "
        "IF actor = session_user THEN RETURN true; END IF; "
        "IF entity IN ('answer', 'answer_pair', 'sample') THEN RETURN NOT EXISTS ("
        "SELECT 1 FROM unnest(CASE WHEN entity = 'sample' "
        "THEN ARRAY(SELECT json_array_elements_text(payload -> 'answers')) "
        "ELSE string_to_array(entity_id, '|') END) AS named(id) "
        "LEFT JOIN answers a ON a.id = named.id "
        "WHERE a.id IS NULL OR NOT (a.matter_id IS NULL OR a.matter_id = ANY (mine))); END IF; "
        "IF entity = 'document' THEN RETURN EXISTS (SELECT 1 FROM documents d WHERE d.id::text = entity_id "
        "AND (d.matter_id IS NULL OR d.matter_id = ANY (mine))); END IF; "
        "IF entity = 'wall' OR action = 'bundle.imported' THEN RETURN entity_id = session_user; END IF; "
        "IF action = 'project.named' THEN RETURN false; END IF; "  # the name is a matter's, hidden in settings
        "RETURN entity <> 'matter'; END $$"
    )
    op.execute(
        "CREATE FUNCTION assay_key_audited() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF assay_administers() OR EXISTS (SELECT 1 FROM audit_log WHERE action = 'key.registered' "
        "AND entity_id = NEW.fingerprint AND payload ->> 'public_key' = NEW.public_key) THEN RETURN NULL; END IF; "
        "RAISE EXCEPTION 'a reviewer key is registered with its audit entry (key %)', NEW.fingerprint "
        "USING ERRCODE = 'insufficient_privilege'; END $$"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP POLICY matter_write ON audit_log")
    op.execute("DROP POLICY matter_wall ON audit_log")
    op.execute(f"CREATE POLICY matter_wall ON audit_log USING ({VISIBLE}) WITH CHECK ({VISIBLE})")
    for policy in ("signer_is_login", "signer_reopens", "signer_removes"):
        op.execute(f"DROP POLICY {policy} ON signoffs")
    op.execute("DROP TRIGGER reviewer_keys_audited ON reviewer_keys")
    for table in PROJECT_WIDE:
        for policy in ("everyone_reads", "project_wide", "own_rater", "matter_wall", "own_key", "own_key_retired"):
            op.execute(f"DROP POLICY IF EXISTS {policy} ON {table}")
        op.execute(f"DROP POLICY IF EXISTS own_head ON {table}")
        op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
    op.execute("DROP FUNCTION assay_key_audited()")
    op.execute("DROP FUNCTION assay_audit_entry_seen(text, text, text, text, json, integer[])")
    op.execute("DROP FUNCTION assay_audit_entry_hash(integer)")
    op.execute("DROP FUNCTION assay_sees_every_matter()")
