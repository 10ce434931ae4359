"""Answer-level results of the other rubrics (pointwise, coverage, two-dimensional, DeCE, SCORE).

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "rubric_results",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("raters.id", ondelete="CASCADE"), nullable=False),
        sa.Column("answer_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("rubric", sa.String(30), nullable=False),
        sa.Column("label", sa.String(60)),
        sa.Column("score", sa.Float),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("rater_id", "answer_id", "rubric"),
    )
    op.create_index("ix_rubric_results_rater_id", "rubric_results", ["rater_id"])
    op.create_index("ix_rubric_results_answer_id", "rubric_results", ["answer_id"])
