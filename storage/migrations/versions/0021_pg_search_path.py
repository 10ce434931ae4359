"""PostgreSQL: walls a temporary table cannot move, no answer to "does this exist?", and an audit log
one login cannot break for everyone.

- Every function of migrations 0006, 0018, 0019 and 0020 is made again with each table named by its
  schema (`public.matters`, `pg_catalog.pg_class`) and `SET search_path = pg_catalog, public, pg_temp`.
  They ran under `SET search_path FROM CURRENT`, and PostgreSQL searches a session's temporary schema
  first when the path does not name it: `CREATE TEMP TABLE matters (id int)` made
  `assay_administers()` true for any login (the temporary table is its own), and a temporary
  `answers`, `documents`, `audit_log` or `pg_class` stood in for the real one inside the walls'
  functions. `CREATE OR REPLACE` keeps each function's identity, so the policies and triggers that
  call it call the new text.
- The right to make temporary tables (TEMPORARY on the database) is revoked from PUBLIC: Assay makes
  none, and a DBA who grants it back to a login no longer opens the walls.
- `assay_audit_entry_seen` takes no list of matters from its caller any more (a walled login gave it
  every matter id and learnt which answer and document ids exist): it reads the login's matters
  itself. `assay_audit_entry_hash` runs as its caller, so it gives only the hash of an entry the
  caller may read. A row written under a parent the login cannot see is refused in the same words
  whether the parent exists or not (a foreign key's error said which).
- The audit log, for a login that does not administer (the owner's role excepted: it imports bundles
  and can drop any trigger anyway): an entry is the login's own (its `actor`, or its payload's
  `login` where the actor is a tool such as import-labels; the reviewer a sign-off's or a key's entry
  names, but a lead retiring a lost key), its payload a JSON object, its hash 64 hex digits, and it
  links to the newest entry of the log; writers of the log take one lock until they commit, so two
  never fork it. A key beyond a reviewer's first comes with the rotation that retires their key in
  force (one key in force each), or after a lead retired their last key (a lost key). A sign-off is
  signed with the login's key in force; once written, only its reopening is written, once, with its
  audit entry; a sign-off is removed only by the owner's role. What the database cannot check (an
  Ed25519 signature, the content behind a hash) `assay audit verify` names as that login's doing.
- Policies are not made again: PostgreSQL keeps a policy's tables and functions by identity, not by
  name, when it is created.

Revision ID: 0021
Revises: 0020
"""

from alembic import op

revision = "0021"
down_revision = "0020"

SAFE = "SET search_path = pg_catalog, public, pg_temp"
# A frozen copy of 0019's PARENTS.
PARENTS = {
    "passages": ("document_id", "documents", "id"),
    "questions": ("document_id", "documents", "id"),
    "answers": ("question_id", "questions", "id"),
    "data_points": ("answer_id", "answers", "id"),
    "labels": ("data_point_id", "data_points", "id"),
    "citations": ("data_point_id", "data_points", "id"),
    "reviews": ("answer_id", "answers", "id"),
    "judge_outcomes": ("answer_id", "answers", "id"),
    "rubric_results": ("answer_id", "answers", "id"),
    "review_samples": ("answer_id", "answers", "id"),
    "adjudications": ("answer_id", "answers", "id"),
    "signoffs": ("answer_id", "answers", "id"),
    "pairwise_preferences": ("answer_a_id", "answers", "id"),
}
ADMIN = "(SELECT public.assay_administers())"
MINE = "ARRAY(SELECT public.assay_login_matters())"
# The login itself administers (inside a SECURITY DEFINER function current_user is the owner's).
SESSION_ADMINISTERS = (
    "pg_catalog.pg_has_role(session_user, (SELECT c.relowner FROM pg_catalog.pg_class c "
    "WHERE c.oid = 'public.matters'::pg_catalog.regclass), 'USAGE')"
)
GENESIS = "0" * 64
AUDIT_LOCK = 4_173_736_179  # the advisory lock every writer of the audit log holds until it commits
REVIEW_SIGNED, REVIEW_REOPENED, KEY_REGISTERED, KEY_RETIRED = (
    "review.signed",
    "review.reopened",
    "key.registered",
    "key.retired",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    _revoke_temporary()
    _wall_functions()
    _matter_triggers()
    _audit_functions()
    _append_only_functions()
    _audit_log_rules()
    _key_rules()
    _signoff_rules()


def _revoke_temporary() -> None:
    # Only the database's owner (or a superuser) may: another login migrating leaves it to the DBA.
    op.execute(
        "DO $$ BEGIN EXECUTE pg_catalog.format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', "
        "pg_catalog.current_database()); EXCEPTION WHEN insufficient_privilege THEN "
        "RAISE NOTICE 'this login may not revoke TEMPORARY from PUBLIC: the database administrator should'; END $$"
    )


def _wall_functions() -> None:
    op.execute(
        "CREATE OR REPLACE FUNCTION public.assay_login_matters() RETURNS SETOF integer LANGUAGE sql STABLE "
        f"PARALLEL RESTRICTED SECURITY DEFINER {SAFE} AS $$ "
        "SELECT m.matter_id FROM public.matter_members m WHERE m.person = session_user $$"
    )
    # Not SECURITY DEFINER: current_user is the login in a policy, the owner inside a definer function.
    op.execute(
        "CREATE OR REPLACE FUNCTION public.assay_administers() RETURNS boolean LANGUAGE sql STABLE "
        f"PARALLEL RESTRICTED {SAFE} AS $$ "
        "SELECT pg_catalog.pg_has_role(current_user, (SELECT c.relowner FROM pg_catalog.pg_class c "
        "WHERE c.oid = 'public.matters'::pg_catalog.regclass), 'USAGE') $$"
    )
    op.execute(
        "CREATE OR REPLACE FUNCTION public.assay_sees_every_matter() RETURNS boolean LANGUAGE sql STABLE "
        f"PARALLEL RESTRICTED SECURITY DEFINER {SAFE} AS $$ "
        "SELECT NOT EXISTS (SELECT 1 FROM public.matters m WHERE NOT EXISTS ("
        "SELECT 1 FROM public.matter_members p WHERE p.matter_id = m.id AND p.person = session_user)) $$"
    )


def _matter_triggers(checked: bool = True) -> None:
    # The parent is read with the owner's sight; one the login cannot see is refused in the words of
    # one that is not there, so a write cannot tell another matter's ids from ids never used.
    for table, (column, parent, key) in PARENTS.items():
        op.execute(
            f"CREATE OR REPLACE FUNCTION public.assay_matter_of_{table}() RETURNS trigger LANGUAGE plpgsql "
            f"SECURITY DEFINER {SAFE} AS $$ BEGIN "
            + (_checked_parent(column, parent, key) if checked else "")
            + f"NEW.matter_id := (SELECT p.matter_id FROM public.{parent} p WHERE p.{key} = NEW.{column}); "
            "RETURN NEW; END $$"
        )
    op.execute(
        "CREATE OR REPLACE FUNCTION public.assay_matter_of_audit_log() RETURNS trigger LANGUAGE plpgsql "
        f"SECURITY DEFINER {SAFE} AS $$ BEGIN "
        "NEW.matter_id := CASE NEW.entity "
        "WHEN 'answer' THEN (SELECT a.matter_id FROM public.answers a WHERE a.id = NEW.entity_id) "
        "WHEN 'answer_pair' THEN (SELECT a.matter_id FROM public.answers a "
        "WHERE a.id = pg_catalog.split_part(NEW.entity_id, '|', 1)) "
        "WHEN 'document' THEN (SELECT d.matter_id FROM public.documents d WHERE d.id::text = NEW.entity_id) "
        "WHEN 'matter' THEN (SELECT m.id FROM public.matters m WHERE m.id::text = NEW.entity_id) "
        "ELSE NULL END; RETURN NEW; END $$"
    )


def _checked_parent(column: str, parent: str, key: str) -> str:
    """The trigger's refusal of a parent the login may not see, there or not (the owner's role: the
    foreign key answers for one that is not there)."""
    visible = (
        f"SELECT 1 FROM public.{parent} p WHERE p.{key} = NEW.{column} AND (p.matter_id IS NULL "
        "OR p.matter_id = ANY (ARRAY(SELECT public.assay_login_matters())))"
    )
    return (
        f"IF NEW.{column} IS NOT NULL AND NOT EXISTS ({visible}) AND NOT {SESSION_ADMINISTERS} THEN "
        f"RAISE EXCEPTION 'no {parent} row % that this login may see', NEW.{column} "
        "USING ERRCODE = 'foreign_key_violation'; END IF; "
    )


def _audit_functions() -> None:
    # Whoever writes the log chains to its newest entry, seen or not, holding the log's lock until it
    # commits: a second writer waits, then reads the first one's entry as the newest (VOLATILE: a
    # fresh snapshot after the wait), so the chain never forks.
    op.execute(
        "CREATE OR REPLACE FUNCTION public.assay_audit_head() RETURNS text LANGUAGE sql VOLATILE "
        f"SECURITY DEFINER {SAFE} AS $$ SELECT pg_catalog.pg_advisory_xact_lock({AUDIT_LOCK}); "
        "SELECT l.hash FROM public.audit_log l ORDER BY l.id DESC LIMIT 1 $$"
    )
    # As its caller, under the log's policy: the hash of an entry the caller may read, else NULL.
    op.execute(
        "CREATE OR REPLACE FUNCTION public.assay_audit_entry_hash(entry integer) RETURNS text LANGUAGE sql "
        f"STABLE SECURITY INVOKER {SAFE} AS $$ SELECT l.hash FROM public.audit_log l WHERE l.id = entry $$"
    )
    op.execute("DROP POLICY matter_wall ON audit_log")
    op.execute("DROP FUNCTION public.assay_audit_entry_seen(text, text, text, text, json, integer[])")
    op.execute(
        "CREATE FUNCTION public.assay_audit_entry_seen(entity text, entity_id text, action text, actor text, "
        "payload json) RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL RESTRICTED "
        f"SECURITY DEFINER {SAFE} AS $$ DECLARE mine integer[] := ARRAY(SELECT public.assay_login_matters()); "
        "BEGIN "
        "IF actor = session_user THEN RETURN true; END IF; "
        "IF entity IN ('answer', 'answer_pair', 'sample') THEN RETURN NOT EXISTS ("
        "SELECT 1 FROM pg_catalog.unnest(CASE WHEN entity = 'sample' "
        "THEN ARRAY(SELECT pg_catalog.json_array_elements_text(payload -> 'answers')) "
        "ELSE pg_catalog.string_to_array(entity_id, '|') END) AS named(id) "
        "LEFT JOIN public.answers a ON a.id = named.id "
        "WHERE a.id IS NULL OR NOT (a.matter_id IS NULL OR a.matter_id = ANY (mine))); END IF; "
        "IF entity = 'document' THEN RETURN EXISTS (SELECT 1 FROM public.documents d "
        "WHERE d.id::text = entity_id AND (d.matter_id IS NULL OR d.matter_id = ANY (mine))); END IF; "
        "IF entity = 'wall' OR action = 'bundle.imported' THEN RETURN entity_id = session_user; END IF; "
        "IF action = 'project.named' THEN RETURN false; END IF; "
        "RETURN entity <> 'matter'; END $$"
    )
    op.execute(
        f"CREATE POLICY matter_wall ON audit_log FOR SELECT USING ({ADMIN} OR matter_id = ANY ({MINE}) "
        "OR (matter_id IS NULL AND public.assay_audit_entry_seen(entity, entity_id, action, actor, payload)))"
    )


def _append_only_functions() -> None:
    for name, message in (
        ("audit_log_refuse_change", "the audit log is append-only"),
        ("audit_heads_refuse_change", "the signed heads of the audit log are append-only"),
    ):
        op.execute(
            f"CREATE OR REPLACE FUNCTION public.{name}() RETURNS trigger LANGUAGE plpgsql {SAFE} AS $$ "
            f"BEGIN RAISE EXCEPTION '{message}'; END $$"
        )
    op.execute(
        f"CREATE OR REPLACE FUNCTION public.reviewer_keys_retire_only() RETURNS trigger LANGUAGE plpgsql {SAFE} "
        "AS $$ BEGIN "
        "IF TG_OP = 'DELETE' THEN RAISE EXCEPTION 'a reviewer key is retired, never deleted'; END IF; "
        "IF OLD.retired_at IS NOT NULL OR NEW.fingerprint IS DISTINCT FROM OLD.fingerprint "
        "OR NEW.public_key IS DISTINCT FROM OLD.public_key OR NEW.reviewer IS DISTINCT FROM OLD.reviewer THEN "
        "RAISE EXCEPTION 'a reviewer key can only be retired, once'; END IF; RETURN NEW; END $$"
    )


def _refuse(message: str) -> str:
    return f"RAISE EXCEPTION '{message}' USING ERRCODE = 'insufficient_privilege';"


def _audit_log_rules() -> None:
    # As the login (not SECURITY DEFINER): assay_administers() asks about the login itself.
    op.execute(
        f"CREATE FUNCTION public.assay_audit_entry_own() RETURNS trigger LANGUAGE plpgsql {SAFE} AS $$ "
        "DECLARE head text; BEGIN "
        "head := COALESCE(public.assay_audit_head(), '" + GENESIS + "'); "
        "IF public.assay_administers() THEN RETURN NEW; END IF; "
        "IF COALESCE(NEW.payload ->> 'login', NEW.actor) IS DISTINCT FROM session_user::text THEN "
        + _refuse("an audit entry names its own login: as its actor, or as its login beside a tool''s name")
        + " END IF; "
        "IF NEW.payload IS NULL OR pg_catalog.json_typeof(NEW.payload) <> 'object' THEN "
        + _refuse("an audit entry''s payload is an object")
        + " END IF; "
        # A sign-off or a key is the login's own; a key is retired by its reviewer or by a lead.
        f"IF NEW.action IN ('{REVIEW_SIGNED}', '{KEY_REGISTERED}') "
        "AND (NEW.payload ->> 'reviewer') IS DISTINCT FROM session_user::text "
        f"OR NEW.action = '{KEY_RETIRED}' AND NOT EXISTS (SELECT 1 FROM public.reviewer_keys k "
        "WHERE k.fingerprint = NEW.entity_id AND k.reviewer = session_user) "
        "AND NOT ((NEW.payload ->> 'lead') = session_user::text "
        "AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = 'assay_lead') "
        "AND pg_catalog.pg_has_role(session_user, 'assay_lead', 'MEMBER')) THEN "
        + _refuse("a sign-off or a key is its own login''s (a key is retired by its reviewer or a lead)")
        + " END IF; "
        "IF NEW.hash IS NULL OR NEW.hash !~ '^[0-9a-f]{64}$' THEN "
        + _refuse("an audit entry''s hash is 64 hexadecimal digits")
        + " END IF; "
        "IF NEW.prev_hash IS DISTINCT FROM head THEN "
        + _refuse("an audit entry links to the newest entry of the log")
        + " END IF; RETURN NEW; END $$"
    )
    op.execute(
        "CREATE TRIGGER audit_log_own_entry BEFORE INSERT ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION public.assay_audit_entry_own()"
    )


def _key_rules() -> None:
    # Checked when the transaction ends (the key, its audit entry, the rotation retiring the old key).
    registered = (
        "SELECT l.id, l.payload ->> 'rotated_from' INTO entry, rotated FROM public.audit_log l "
        f"WHERE l.action = '{KEY_REGISTERED}' AND l.entity_id = NEW.fingerprint "
        "AND l.payload ->> 'public_key' = NEW.public_key AND l.payload ->> 'reviewer' = NEW.reviewer "
        "ORDER BY l.id LIMIT 1"
    )
    op.execute(
        f"CREATE OR REPLACE FUNCTION public.assay_key_audited() RETURNS trigger LANGUAGE plpgsql {SAFE} AS $$ "
        "DECLARE entry integer; rotated text; BEGIN "
        "IF public.assay_administers() THEN RETURN NULL; END IF; "
        f"{registered}; "
        "IF entry IS NULL THEN RAISE EXCEPTION 'a reviewer key is registered with its audit entry (key %)', "
        "NEW.fingerprint USING ERRCODE = 'insufficient_privilege'; END IF; "
        "IF (SELECT pg_catalog.count(*) FROM public.reviewer_keys k "
        "WHERE k.reviewer = NEW.reviewer AND k.retired_at IS NULL) > 1 THEN "
        "RAISE EXCEPTION '% has one key in force: another is registered with a rotation that retires it', "
        "NEW.reviewer USING ERRCODE = 'insufficient_privilege'; END IF; "
        "IF EXISTS (SELECT 1 FROM public.reviewer_keys k WHERE k.reviewer = NEW.reviewer "
        "AND k.fingerprint <> NEW.fingerprint) AND NOT (EXISTS (SELECT 1 FROM public.reviewer_keys k "
        "WHERE k.reviewer = NEW.reviewer AND k.fingerprint = rotated) "
        f"AND NOT EXISTS (SELECT 1 FROM public.audit_log l WHERE l.action = '{KEY_RETIRED}' "
        "AND l.entity_id = rotated AND l.id < entry) "
        f"AND EXISTS (SELECT 1 FROM public.audit_log l WHERE l.action = '{KEY_RETIRED}' "
        "AND l.entity_id = rotated AND l.id > entry)) "
        # a lost key: a lead retired the last of their keys, and the next is a first key again
        "AND NOT (rotated IS NULL AND NOT EXISTS (SELECT 1 FROM public.reviewer_keys k "
        "WHERE k.reviewer = NEW.reviewer AND k.fingerprint <> NEW.fingerprint AND k.retired_at IS NULL) "
        "AND COALESCE((SELECT (l.payload ->> 'lead') IS NOT NULL FROM public.audit_log l "
        f"WHERE l.action = '{KEY_RETIRED}' AND l.id < entry AND l.entity_id IN (SELECT k.fingerprint "
        "FROM public.reviewer_keys k WHERE k.reviewer = NEW.reviewer) ORDER BY l.id DESC LIMIT 1), false)) THEN "
        "RAISE EXCEPTION 'a later key of % is registered with a rotation from their key in force, which it retires', "
        "NEW.reviewer USING ERRCODE = 'insufficient_privilege'; END IF; "
        "RETURN NULL; END $$"
    )


def _signoff_rules() -> None:
    # Signed with the login's key in force (0020's policies already make the reviewer the login).
    signed = (
        f"{ADMIN} OR (key_fingerprint IS NOT NULL AND signature IS NOT NULL "
        "AND record ->> 'key' = key_fingerprint AND EXISTS (SELECT 1 FROM public.reviewer_keys k "
        "WHERE k.fingerprint = signoffs.key_fingerprint AND k.reviewer = session_user AND k.retired_at IS NULL))"
    )
    op.execute(f"CREATE POLICY signed_by_login ON signoffs AS RESTRICTIVE FOR INSERT WITH CHECK ({signed})")
    op.execute(
        f"CREATE FUNCTION public.assay_signoff_kept() RETURNS trigger LANGUAGE plpgsql {SAFE} AS $$ BEGIN "
        "IF public.assay_administers() THEN RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END; END IF; "
        "IF TG_OP = 'DELETE' THEN " + _refuse("a sign-off is reopened, not removed") + " END IF; "
        "IF OLD.reopened_at IS NOT NULL OR NEW.reopened_at IS NULL "
        "OR (NEW.answer_id, NEW.rater_id, NEW.guideline_version, NEW.signed_at, NEW.digest, NEW.record::text, "
        "NEW.key_fingerprint, NEW.signature) IS DISTINCT FROM (OLD.answer_id, OLD.rater_id, OLD.guideline_version, "
        "OLD.signed_at, OLD.digest, OLD.record::text, OLD.key_fingerprint, OLD.signature) THEN "
        + _refuse("a signed sign-off is only reopened, once: its record stays as signed")
        + " END IF; RETURN NEW; END $$"
    )
    op.execute(
        "CREATE TRIGGER signoffs_kept BEFORE UPDATE OR DELETE ON signoffs "
        "FOR EACH ROW EXECUTE FUNCTION public.assay_signoff_kept()"
    )
    op.execute(
        f"CREATE FUNCTION public.assay_signoff_reopen_audited() RETURNS trigger LANGUAGE plpgsql {SAFE} AS $$ "
        "BEGIN IF public.assay_administers() OR NEW.reopened_at IS NULL OR EXISTS (SELECT 1 FROM public.audit_log l "
        f"WHERE l.action = '{REVIEW_REOPENED}' AND l.entity_id = NEW.answer_id "
        "AND l.payload ->> 'digest' = NEW.digest) THEN RETURN NULL; END IF; "
        "RAISE EXCEPTION 'a sign-off is reopened with its audit entry (answer %)', NEW.answer_id "
        "USING ERRCODE = 'insufficient_privilege'; END $$"
    )
    op.execute(
        "CREATE CONSTRAINT TRIGGER signoffs_reopen_audited AFTER UPDATE ON signoffs "
        "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.assay_signoff_reopen_audited()"
    )


def downgrade() -> None:
    """Back to 0020's rules; the functions keep their qualified names (0020 works the same with them)."""
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER signoffs_reopen_audited ON signoffs")
    op.execute("DROP FUNCTION public.assay_signoff_reopen_audited()")
    op.execute("DROP TRIGGER signoffs_kept ON signoffs")
    op.execute("DROP FUNCTION public.assay_signoff_kept()")
    op.execute("DROP POLICY signed_by_login ON signoffs")
    op.execute("DROP TRIGGER audit_log_own_entry ON audit_log")
    op.execute("DROP FUNCTION public.assay_audit_entry_own()")
    op.execute("DROP POLICY matter_wall ON audit_log")
    op.execute("DROP FUNCTION public.assay_audit_entry_seen(text, text, text, text, json)")
    op.execute(
        "CREATE FUNCTION public.assay_audit_entry_seen(entity text, entity_id text, action text, actor text, "
        "payload json, mine integer[]) RETURNS boolean LANGUAGE plpgsql STABLE PARALLEL RESTRICTED "
        f"SECURITY DEFINER {SAFE} AS $$ BEGIN "
        "IF actor = session_user THEN RETURN true; END IF; "
        "IF entity IN ('answer', 'answer_pair', 'sample') THEN RETURN NOT EXISTS ("
        "SELECT 1 FROM pg_catalog.unnest(CASE WHEN entity = 'sample' "
        "THEN ARRAY(SELECT pg_catalog.json_array_elements_text(payload -> 'answers')) "
        "ELSE pg_catalog.string_to_array(entity_id, '|') END) AS named(id) "
        "LEFT JOIN public.answers a ON a.id = named.id "
        "WHERE a.id IS NULL OR NOT (a.matter_id IS NULL OR a.matter_id = ANY (mine))); END IF; "
        "IF entity = 'document' THEN RETURN EXISTS (SELECT 1 FROM public.documents d "
        "WHERE d.id::text = entity_id AND (d.matter_id IS NULL OR d.matter_id = ANY (mine))); END IF; "
        "IF entity = 'wall' OR action = 'bundle.imported' THEN RETURN entity_id = session_user; END IF; "
        "IF action = 'project.named' THEN RETURN false; END IF; "
        "RETURN entity <> 'matter'; END $$"
    )
    op.execute(
        f"CREATE POLICY matter_wall ON audit_log FOR SELECT USING ({ADMIN} OR matter_id = ANY ({MINE}) "
        f"OR (matter_id IS NULL AND public.assay_audit_entry_seen(entity, entity_id, action, actor, payload, {MINE})))"
    )
    op.execute(
        "DO $$ BEGIN EXECUTE pg_catalog.format('GRANT TEMPORARY ON DATABASE %I TO PUBLIC', "
        "pg_catalog.current_database()); EXCEPTION WHEN insufficient_privilege THEN NULL; END $$"
    )
