"""Adjudication of disagreeing reviews and reviewer qualification against gold (issue 32).

Revision ID: 0017
Revises: 0016
"""

from alembic import op  # noqa: F401

revision = "0017"
down_revision = "0016"


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
