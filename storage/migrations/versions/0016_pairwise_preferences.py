"""Model comparison: pairwise preferences between two generators' answers to one question (issue 33).

Revision ID: 0016
Revises: 0015
"""

from alembic import op  # noqa: F401

revision = "0016"
down_revision = "0015"


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
