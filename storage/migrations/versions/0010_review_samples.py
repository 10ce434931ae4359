"""Answers drawn at random for review: only their reviews back a guarantee or an unbiased estimate.

Revision ID: 0010
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0006"


def upgrade() -> None:
    op.create_table(
        "review_samples",
        sa.Column("answer_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("draw", sa.Integer, nullable=False),
        sa.Column("seed", sa.Integer),
        sa.Column("population", sa.Integer, nullable=False),
        sa.Column("drawn_by", sa.String(200), nullable=False),
        sa.Column("drawn_at", sa.DateTime(timezone=True), nullable=False),
    )
