"""Review: reviewers' copies of judge points (source_id), point comments, project settings.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    with op.batch_alter_table("data_points") as batch:
        batch.add_column(sa.Column("source_id", sa.Integer))
        batch.add_column(sa.Column("comment", sa.Text))
        batch.create_foreign_key("fk_data_points_source_id", "data_points", ["source_id"], ["id"], ondelete="SET NULL")
    op.create_table(
        "settings",
        sa.Column("key", sa.String(60), primary_key=True),
        sa.Column("value", sa.JSON),
    )
