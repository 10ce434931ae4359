"""Matters and ethical walls.

- `matters` (client, number, name; archived rather than deleted once reviewed), `matter_members`
  (person ↔ matter; on a server the person is a database login) and `matter_walls` (person ↔ client
  they must see nothing of).
- `matter_id` on every table that holds matter data. A document's is given; every other row's is its
  parent's, set by the database (triggers), never by the writer: a row cannot claim another matter.
  Existing rows stay unassigned (NULL): a project from before matters reads as it did.
- PostgreSQL: row-level security, forced (the owner too), on every one of those tables and on the
  matter tables themselves: a login sees and writes the unassigned rows and those of the matters it is
  a member of (`session_user` in `matter_members`); the owner role (and logins granted it) sees all and
  alone administers matters. A policy costs two values computed once per query (the login's matter
  ids, whether it administers) and an equality on an indexed column per row.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"

# Each table holding matter data, and where its matter comes from: (column, parent table, parent key).
# A frozen copy of storage/matters.py's MATTER_PARENTS as of this revision.
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
WALLED = ("documents", *PARENTS, "audit_log")

# The policy of every table of matter data: unassigned rows, the login's matters, or an administrator.
# The two sub-selects are computed once per statement (init plans), not once per row.
VISIBLE = "matter_id IS NULL OR matter_id = ANY (ARRAY(SELECT assay_login_matters())) OR (SELECT assay_administers())"
ADMIN = "(SELECT assay_administers())"


def upgrade() -> None:
    op.create_table(
        "matters",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("client", sa.String(200), nullable=False),
        sa.Column("number", sa.String(100), nullable=False),
        sa.Column("name", sa.String(300), nullable=False),
        sa.Column("archived_at", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("client", "number"),
    )
    op.create_table(
        "matter_members",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("matter_id", sa.Integer, sa.ForeignKey("matters.id", ondelete="CASCADE"), nullable=False),
        sa.Column("person", sa.String(200), nullable=False),
        sa.Column("added_by", sa.String(200), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("matter_id", "person"),
    )
    op.create_index("ix_matter_members_matter_id", "matter_members", ["matter_id"])
    op.create_index("ix_matter_members_person", "matter_members", ["person"])
    op.create_table(
        "matter_walls",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("person", sa.String(200), nullable=False),
        sa.Column("client", sa.String(200), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("added_by", sa.String(200), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("person", "client"),
    )
    op.create_index("ix_matter_walls_person", "matter_walls", ["person"])
    with op.batch_alter_table("documents") as batch:
        batch.add_column(sa.Column("matter_id", sa.Integer))
        batch.create_foreign_key("fk_documents_matter_id", "matters", ["matter_id"], ["id"])
    op.create_index("ix_documents_matter_id", "documents", ["matter_id"])
    for table in (*PARENTS, "audit_log"):
        op.add_column(table, sa.Column("matter_id", sa.Integer))
        op.create_index(f"ix_{table}_matter_id", table, ["matter_id"])
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        _sqlite_triggers()
    elif dialect == "postgresql":
        _postgres_triggers()
        _postgres_policies()


def _sqlite_triggers() -> None:
    # SQLite cannot change NEW before the insert: the row is given its parent's matter just after.
    # The audit log refuses updates; its entries' matters are derived when read (storage/matters.py).
    for table, (column, parent, key) in PARENTS.items():
        matter = f"(SELECT matter_id FROM {parent} WHERE {parent}.{key} = new.{column})"
        for event, name in ((f"INSERT ON {table}", "insert"), (f"UPDATE OF {column} ON {table}", "move")):
            op.execute(
                f"CREATE TRIGGER {table}_matter_{name} AFTER {event} "
                f"WHEN new.matter_id IS NOT {matter} BEGIN "
                f"UPDATE {table} SET matter_id = {matter} WHERE rowid = new.rowid; END"
            )


def _postgres_triggers() -> None:
    # SECURITY DEFINER: the parent is read with the owner's sight, so a row written by a login that
    # cannot see its parent still gets the parent's matter, and the policy then refuses the write.
    for table, (column, parent, key) in PARENTS.items():
        op.execute(
            f"CREATE FUNCTION assay_matter_of_{table}() RETURNS trigger LANGUAGE plpgsql "
            "SECURITY DEFINER SET search_path FROM CURRENT AS $$ BEGIN "
            f"NEW.matter_id := (SELECT matter_id FROM {parent} WHERE {key} = NEW.{column}); "
            "RETURN NEW; END $$"
        )
        op.execute(
            f"CREATE TRIGGER {table}_matter BEFORE INSERT OR UPDATE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION assay_matter_of_{table}()"
        )
    op.execute(
        "CREATE FUNCTION assay_matter_of_audit_log() RETURNS trigger LANGUAGE plpgsql "
        "SECURITY DEFINER SET search_path FROM CURRENT AS $$ BEGIN "
        "NEW.matter_id := CASE NEW.entity "
        "WHEN 'answer' THEN (SELECT matter_id FROM answers WHERE id = NEW.entity_id) "
        "WHEN 'answer_pair' THEN (SELECT matter_id FROM answers WHERE id = split_part(NEW.entity_id, '|', 1)) "
        "WHEN 'document' THEN (SELECT matter_id FROM documents WHERE id::text = NEW.entity_id) "
        "WHEN 'matter' THEN (SELECT id FROM matters WHERE id::text = NEW.entity_id) "
        "ELSE NULL END; RETURN NEW; END $$"
    )
    op.execute(
        "CREATE TRIGGER audit_log_matter BEFORE INSERT ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION assay_matter_of_audit_log()"
    )
    # Whoever writes the log chains to its newest entry, seen or not: else a walled login's entry
    # would link to the newest one it can see, and the chain would read as tampered with.
    op.execute(
        "CREATE FUNCTION assay_audit_head() RETURNS text LANGUAGE sql STABLE "
        "SECURITY DEFINER SET search_path FROM CURRENT AS $$ "
        "SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1 $$"
    )


def _postgres_policies() -> None:
    op.execute(
        "CREATE FUNCTION assay_login_matters() RETURNS SETOF integer LANGUAGE sql STABLE PARALLEL RESTRICTED "
        "SECURITY DEFINER SET search_path FROM CURRENT AS $$ "
        "SELECT matter_id FROM matter_members WHERE person = session_user $$"
    )
    # The owner of the tables administers, and any login granted the owner's role. Both functions are
    # PARALLEL RESTRICTED, computed once by the leader: an unsafe one would make every query on a walled
    # table serial (1.5× the triage's time on 1 M points).
    op.execute(
        "CREATE FUNCTION assay_administers() RETURNS boolean LANGUAGE sql STABLE PARALLEL RESTRICTED "
        "SET search_path FROM CURRENT AS $$ "
        "SELECT pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = 'matters'::regclass), 'USAGE') $$"
    )
    for table in WALLED:
        _protect(table)
        op.execute(f"CREATE POLICY matter_wall ON {table} USING ({VISIBLE}) WITH CHECK ({VISIBLE})")
    _protect("matters")
    op.execute(
        "CREATE POLICY matter_wall ON matters FOR SELECT "
        f"USING (id = ANY (ARRAY(SELECT assay_login_matters())) OR {ADMIN})"
    )
    op.execute(f"CREATE POLICY matter_admin ON matters USING ({ADMIN}) WITH CHECK ({ADMIN})")
    for table in ("matter_members", "matter_walls"):
        _protect(table)
        op.execute(f"CREATE POLICY matter_wall ON {table} FOR SELECT USING (person = session_user OR {ADMIN})")
        op.execute(f"CREATE POLICY matter_admin ON {table} USING ({ADMIN}) WITH CHECK ({ADMIN})")


def _protect(table: str) -> None:
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        for table in (*WALLED, "matters", "matter_members", "matter_walls"):
            op.execute(f"DROP POLICY IF EXISTS matter_wall ON {table}")
            op.execute(f"DROP POLICY IF EXISTS matter_admin ON {table}")
            op.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
            op.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
        for table in (*PARENTS, "audit_log"):
            op.execute(f"DROP TRIGGER {table}_matter ON {table}")
            op.execute(f"DROP FUNCTION assay_matter_of_{table}()")
        for function in ("assay_audit_head", "assay_login_matters", "assay_administers"):
            op.execute(f"DROP FUNCTION {function}()")
    elif dialect == "sqlite":
        for table in PARENTS:
            op.execute(f"DROP TRIGGER {table}_matter_insert")
            op.execute(f"DROP TRIGGER {table}_matter_move")
    for table in (*PARENTS, "audit_log"):
        op.drop_index(f"ix_{table}_matter_id", table)
        with op.batch_alter_table(table) as batch:
            batch.drop_column("matter_id")
    op.drop_index("ix_documents_matter_id", "documents")
    with op.batch_alter_table("documents") as batch:
        batch.drop_constraint("fk_documents_matter_id", type_="foreignkey")
        batch.drop_column("matter_id")
    op.drop_table("matter_walls")
    op.drop_table("matter_members")
    op.drop_table("matters")
