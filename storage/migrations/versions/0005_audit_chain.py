"""Hash-chain the audit log: each entry carries the previous entry's hash and its own.

Revision ID: 0005
Revises: 0004
"""

import hashlib
import json

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
GENESIS = "0" * 64


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:  # the append-only triggers must step aside while existing entries get their links
        op.execute("DROP TRIGGER IF EXISTS audit_log_no_update")
    op.add_column("audit_log", sa.Column("prev_hash", sa.String(64)))
    op.add_column("audit_log", sa.Column("hash", sa.String(64)))
    bind = op.get_bind()
    prev = GENESIS
    rows = bind.execute(sa.text("SELECT id, at, actor, action, entity, entity_id, payload FROM audit_log ORDER BY id"))
    for row in rows.all():
        at = str(row.at)[:26].replace("T", " ")
        if "." not in at:
            at += ".000000"
        payload = json.loads(row.payload) if isinstance(row.payload, str) else row.payload
        content = json.dumps(
            [prev, at, row.actor, row.action, row.entity, row.entity_id, payload],
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            default=str,
        )
        digest = hashlib.sha256(content.encode()).hexdigest()
        bind.execute(
            sa.text("UPDATE audit_log SET prev_hash = :p, hash = :h WHERE id = :i"),
            {"p": prev, "h": digest, "i": row.id},
        )
        prev = digest
    if sqlite:
        op.execute(
            "CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log "
            "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END"
        )
