"""Each answer keeps its segmentation, so that it is segmented once per segmenter version.

`answers.segmentation` holds the data points the segmenter (models/segmentation.py) cut the answer into,
with the segmenter's version: {"version": N, "points": [[start, end, context_start, context_end], ...]}.
It starts empty and is filled on first read (storage/answers.segmentations): an answer whose stored
version is not the segmenter's is segmented again then, lazily, not here, so that a project of 100,000
answers opens without a wait and a later version needs no migration. A new column of `answers` is under
that table's row-level security on PostgreSQL (0019's matter wall): no policy to add.

Revision ID: 0023
Revises: 0022
"""

import sqlalchemy as sa
from alembic import op

revision = "0023"
down_revision = "0022"


def upgrade() -> None:
    if "segmentation" in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("answers")}:
        return  # a project whose revision was set back to replay an earlier migration has it already
    # ALTER TABLE, not a batch's copy of the table: a copy on SQLite would drop 0019's triggers on answers
    op.add_column("answers", sa.Column("segmentation", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE answers DROP COLUMN segmentation")  # SQLite 3.35 and PostgreSQL alike
