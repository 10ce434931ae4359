"""Reviewer keys and signatures: a sign-off is signed with its reviewer's Ed25519 key, the audit log's
head is signed by whoever acted, and on PostgreSQL the reviewer, adjudicator and lead roles decide
what a login may write.

- `reviewer_keys`: each reviewer's public key, its fingerprint, when it was registered and retired.
  A key is never deleted nor changed except to retire it (triggers refuse the rest).
- `audit_heads`: signed checkpoints of the audit chain (entry id and hash, key, signature),
  append-only like the log itself.
- `signoffs.key_fingerprint` and `signoffs.signature`: the reviewer's signature over the record.
- PostgreSQL: the group roles assay_reviewer, assay_adjudicator (a reviewer who may also adjudicate)
  and assay_lead (everything else: guidelines, settings, imports, judge runs). A login is given one
  with `GRANT assay_adjudicator TO alice`; the database then refuses what the role may not write.

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"

ROLES = ("assay_reviewer", "assay_adjudicator", "assay_lead")
# What a reviewer writes: their labels and reviews, their sign-offs and keys, audit entries and heads.
REVIEWER_WRITES = (
    "raters",
    "data_points",
    "labels",
    "citations",
    "reviews",
    "signoffs",
    "pairwise_preferences",
    "review_samples",
)
APPEND_ONLY = ("audit_log", "audit_heads", "reviewer_keys")


def upgrade() -> None:
    op.create_table(
        "reviewer_keys",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False, unique=True),
        sa.Column("reviewer", sa.String(200), nullable=False),
        sa.Column("algorithm", sa.String(20), nullable=False),
        sa.Column("public_key", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True)),
        sa.Column("retired_by", sa.String(200)),
    )
    op.create_index("ix_reviewer_keys_reviewer", "reviewer_keys", ["reviewer"])
    op.create_table(
        "audit_heads",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("entry_id", sa.Integer, nullable=False),
        sa.Column("entry_hash", sa.String(64), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("signed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("signature", sa.Text, nullable=False),
    )
    op.add_column("signoffs", sa.Column("key_fingerprint", sa.String(64)))
    op.add_column("signoffs", sa.Column("signature", sa.Text))
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        _sqlite_triggers()
    elif dialect == "postgresql":
        _postgres_triggers()
        _postgres_roles()


def _sqlite_triggers() -> None:
    for event in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER audit_heads_no_{event.lower()} BEFORE {event} ON audit_heads "
            "BEGIN SELECT RAISE(ABORT, 'the signed heads of the audit log are append-only'); END"
        )
    op.execute(
        "CREATE TRIGGER reviewer_keys_no_delete BEFORE DELETE ON reviewer_keys "
        "BEGIN SELECT RAISE(ABORT, 'a reviewer key is retired, never deleted'); END"
    )
    op.execute(
        "CREATE TRIGGER reviewer_keys_retire_only BEFORE UPDATE ON reviewer_keys "
        "WHEN old.retired_at IS NOT NULL OR new.fingerprint IS NOT old.fingerprint "
        "OR new.public_key IS NOT old.public_key OR new.reviewer IS NOT old.reviewer "
        "BEGIN SELECT RAISE(ABORT, 'a reviewer key can only be retired, once'); END"
    )


def _postgres_triggers() -> None:
    op.execute(
        "CREATE FUNCTION audit_heads_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN RAISE EXCEPTION 'the signed heads of the audit log are append-only'; END $$"
    )
    op.execute(
        "CREATE TRIGGER audit_heads_append_only BEFORE UPDATE OR DELETE ON audit_heads "
        "FOR EACH ROW EXECUTE FUNCTION audit_heads_refuse_change()"
    )
    op.execute(
        "CREATE FUNCTION reviewer_keys_retire_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF TG_OP = 'DELETE' THEN RAISE EXCEPTION 'a reviewer key is retired, never deleted'; END IF; "
        "IF OLD.retired_at IS NOT NULL OR NEW.fingerprint IS DISTINCT FROM OLD.fingerprint "
        "OR NEW.public_key IS DISTINCT FROM OLD.public_key OR NEW.reviewer IS DISTINCT FROM OLD.reviewer THEN "
        "RAISE EXCEPTION 'a reviewer key can only be retired, once'; END IF; RETURN NEW; END $$"
    )
    op.execute(
        "CREATE TRIGGER reviewer_keys_retire_only BEFORE UPDATE OR DELETE ON reviewer_keys "
        "FOR EACH ROW EXECUTE FUNCTION reviewer_keys_retire_only()"
    )


def _postgres_roles() -> None:
    """The three roles (cluster-wide: made once, if this login may make roles) and what each may write
    in this database. The login that migrates owns the tables and keeps every right."""
    op.execute(
        "DO $$ BEGIN "
        + " ".join(
            f"IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{role}') THEN CREATE ROLE {role} NOLOGIN; END IF;"
            for role in ROLES
        )
        + " EXCEPTION WHEN insufficient_privilege THEN "
        "RAISE NOTICE 'this login may not create roles: team roles are left to the database administrator'; "
        "END $$"
    )
    op.execute(
        "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'assay_lead') THEN "
        # made by another login for another database: their memberships are theirs to grant
        "BEGIN GRANT assay_reviewer TO assay_adjudicator; GRANT assay_adjudicator TO assay_lead; "
        "EXCEPTION WHEN insufficient_privilege THEN NULL; END; "
        "BEGIN GRANT USAGE ON SCHEMA public TO assay_reviewer; "  # public's own grant covers it where not
        "EXCEPTION WHEN insufficient_privilege THEN NULL; END; "
        "GRANT SELECT ON ALL TABLES IN SCHEMA public TO assay_reviewer; "
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO assay_reviewer; "
        f"GRANT INSERT, UPDATE, DELETE ON {', '.join(REVIEWER_WRITES)} TO assay_reviewer; "
        f"GRANT INSERT ON {', '.join(APPEND_ONLY)} TO assay_reviewer; "
        "GRANT UPDATE (retired_at, retired_by) ON reviewer_keys TO assay_reviewer; "
        "GRANT INSERT, UPDATE, DELETE ON adjudications TO assay_adjudicator; "
        "GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO assay_lead; "
        "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO assay_reviewer; "
        "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO assay_reviewer; "
        "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT INSERT, UPDATE, DELETE ON TABLES TO assay_lead; "
        "END IF; END $$"
    )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "postgresql":
        op.execute(
            "DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'assay_lead') THEN "
            "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM assay_reviewer, assay_adjudicator, assay_lead; "
            "END IF; END $$"
        )
        op.execute("DROP TRIGGER reviewer_keys_retire_only ON reviewer_keys")
        op.execute("DROP FUNCTION reviewer_keys_retire_only()")
        op.execute("DROP TRIGGER audit_heads_append_only ON audit_heads")
        op.execute("DROP FUNCTION audit_heads_refuse_change()")
    with op.batch_alter_table("signoffs") as batch:
        batch.drop_column("signature")
        batch.drop_column("key_fingerprint")
    op.drop_table("audit_heads")
    op.drop_index("ix_reviewer_keys_reviewer", "reviewer_keys")
    op.drop_table("reviewer_keys")
