"""Passages read by OCR from a scan keep Tesseract's confidence, shown to the reviewer when low.

Revision ID: 0013
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0010"


def upgrade() -> None:
    with op.batch_alter_table("passages") as batch:
        batch.add_column(sa.Column("ocr_confidence", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("passages") as batch:
        batch.drop_column("ocr_confidence")
