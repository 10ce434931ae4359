"""Judge runs: per-answer outcomes (failed answers keep their raw output) and unverified citations.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    with op.batch_alter_table("data_points") as batch:
        batch.add_column(sa.Column("unverified_citations", sa.JSON))
    op.create_table(
        "judge_outcomes",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("raters.id", ondelete="CASCADE"), nullable=False),
        sa.Column("answer_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("error", sa.Text),
        sa.Column("raw_output", sa.Text),
        sa.Column("passages_seen", sa.JSON, nullable=False),
        sa.Column("prompt_tokens", sa.Integer, nullable=False),
        sa.Column("completion_tokens", sa.Integer, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("rater_id", "answer_id"),
        sa.CheckConstraint("status IN ('judged', 'failed')", name="judge_outcome_status"),
    )
    op.create_index("ix_judge_outcomes_rater_id", "judge_outcomes", ["rater_id"])
    op.create_index("ix_judge_outcomes_answer_id", "judge_outcomes", ["answer_id"])
