"""Model comparison: pairwise preferences between two generators' answers to one question.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    op.create_table(
        "pairwise_preferences",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("raters.id"), nullable=False),
        sa.Column("answer_a_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("answer_b_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("preferred_id", sa.String(200)),
        sa.Column("reason", sa.Text),
        sa.Column("shown_first_id", sa.String(200), nullable=False),
        sa.Column("blind", sa.Boolean, nullable=False),
        sa.Column("seed", sa.Integer),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("rater_id", "answer_a_id", "answer_b_id"),
        sa.CheckConstraint("answer_a_id < answer_b_id", name="preference_pair_order"),
    )
    op.create_index("ix_pairwise_preferences_rater_id", "pairwise_preferences", ["rater_id"])
    op.create_index("ix_pairwise_preferences_answer_a_id", "pairwise_preferences", ["answer_a_id"])
    op.create_index("ix_pairwise_preferences_answer_b_id", "pairwise_preferences", ["answer_b_id"])


def downgrade() -> None:
    op.drop_table("pairwise_preferences")
