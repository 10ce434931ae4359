"""Each contract keeps what the claim checker's encoders read of it, so that it is read once, at import.

`documents.readings` holds the bi-encoder's vector of each evidence passage and of each sentence the reference
reader compares claims with (models/checker/engine.ClaimEngine.read_whole), with the SHA-256 of the encoder file that
read them: a check reads them back instead of embedding a merger agreement's 800 sentences on its first claim
(2.7-3.7 s on two cores), and a contract read by another encoder is read again. It starts empty: a project
imported before it reads each contract on its first check, as it did. A new column of `documents` is under that
table's row-level security on PostgreSQL (0019's matter wall): no policy to add.

Revision ID: 0025
Revises: 0024
"""

import sqlalchemy as sa
from alembic import op

revision = "0025"
down_revision = "0024"


def upgrade() -> None:
    if "readings" in {c["name"] for c in sa.inspect(op.get_bind()).get_columns("documents")}:
        return  # a project whose revision was set back to replay an earlier migration has it already
    # ALTER TABLE, not a batch's copy of the table: a copy on SQLite would drop 0019's triggers on documents
    op.add_column("documents", sa.Column("readings", sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE documents DROP COLUMN readings")  # SQLite 3.35 and PostgreSQL alike
