"""An index on labels (rater_id, tag, data_point_id), in place of the one on rater_id alone.

The figures read every label as one string of data point ids per rater and tag (storage/columns.py):
along this index SQLite reads them without visiting the table, nothing computed per label, in half the
time (a million data points tagged by a judge and a reviewer: 0.31 s to 0.16 s). It starts with rater_id,
so it serves whatever the old index served.

Revision ID: 0024
Revises: 0023
"""

from alembic import op

revision = "0024"
down_revision = "0023"


def upgrade() -> None:
    op.create_index("ix_labels_rater_tag_point", "labels", ["rater_id", "tag", "data_point_id"])
    op.drop_index("ix_labels_rater_id", table_name="labels")


def downgrade() -> None:
    op.create_index("ix_labels_rater_id", "labels", ["rater_id"])
    op.drop_index("ix_labels_rater_tag_point", table_name="labels")
