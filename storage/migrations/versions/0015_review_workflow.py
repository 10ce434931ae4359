"""Review workflow a firm signs: guidelines versions and sign-off.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    op.create_table(
        "guideline_versions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("version", sa.Integer, nullable=False, unique=True),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "signoffs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("answer_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("raters.id"), nullable=False),
        sa.Column("guideline_version", sa.Integer),
        sa.Column("signed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("record", sa.JSON, nullable=False),
        sa.Column("reopened_at", sa.DateTime(timezone=True)),
        sa.Column("reopened_by", sa.String(200)),
        sa.Column("reopen_reason", sa.Text),
    )
    op.create_index("ix_signoffs_answer_id", "signoffs", ["answer_id"])
    op.create_index("ix_signoffs_rater_id", "signoffs", ["rater_id"])
    op.create_index("ix_signoffs_digest", "signoffs", ["digest"])
    op.add_column("reviews", sa.Column("guideline_version", sa.Integer))


def downgrade() -> None:
    with op.batch_alter_table("reviews") as batch:
        batch.drop_column("guideline_version")
    op.drop_table("signoffs")
    op.drop_table("guideline_versions")
