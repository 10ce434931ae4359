"""Adjudication of disagreeing reviews and reviewer qualification against gold.

The consensus itself is an ordinary rater's points and labels; this table keeps each decision, its
reason and what the reviewers had said. Qualification needs only settings (the settings table).

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"

TAGS = "'correct', 'incorrect', 'irrelevant', 'missing'"


def upgrade() -> None:
    op.create_table(
        "adjudications",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("answer_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("point_key", sa.String(80), nullable=False),
        sa.Column("tag", sa.String(12)),
        sa.Column("reason", sa.String(30)),
        sa.Column("adjudicator", sa.String(200), nullable=False),
        sa.Column("reviewers", sa.JSON, nullable=False),
        sa.Column("guideline_version", sa.String(40)),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("answer_id", "point_key"),
        sa.CheckConstraint(f"tag IS NULL OR tag IN ({TAGS})", name="adjudication_tag"),
    )
    op.create_index("ix_adjudications_answer_id", "adjudications", ["answer_id"])


def downgrade() -> None:
    op.drop_index("ix_adjudications_answer_id", "adjudications")
    op.drop_table("adjudications")
