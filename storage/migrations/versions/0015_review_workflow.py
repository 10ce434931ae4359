"""Review workflow a firm signs: guidelines versions and sign-off (issue 32).

Revision ID: 0015
Revises: 0014
"""

from alembic import op  # noqa: F401

revision = "0015"
down_revision = "0014"


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
