"""Data points carry the span of their lead-in ("Specifically, it includes:"), read with the point.

Revision ID: 0007
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0012"


def upgrade() -> None:
    # Plain ADD COLUMNs: SQLite keeps the table (no rebuild), so no label or citation is touched.
    # Existing points keep their spans and simply have no context.
    with op.batch_alter_table("data_points") as batch:
        batch.add_column(sa.Column("context_start", sa.Integer))
        batch.add_column(sa.Column("context_end", sa.Integer))
