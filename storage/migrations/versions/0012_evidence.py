"""Evidence for every judge tag: the rank and basis of each cited passage, and how many judge points
validation refused (prompt echoes, points citing no passage) per judged answer.

Revision ID: 0012
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0013"


def upgrade() -> None:
    # Older citations keep NULL: they are listed after ranked ones, in document order.
    op.add_column("citations", sa.Column("rank", sa.Integer, nullable=True))
    op.add_column("citations", sa.Column("basis", sa.String(12), nullable=True))
    op.add_column("judge_outcomes", sa.Column("rejected", sa.JSON, nullable=True))
