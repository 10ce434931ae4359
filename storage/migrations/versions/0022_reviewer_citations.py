"""A reviewer's citations are only the passages the reviewer cited.

Until now a reviewer's copy of a point stored the passages it came with (the judge's evidence, the
answer's own citations) as its citations, so `assay show`, the exports and a sign-off listed the claim
checker's passage as the reviewer's citation, even where the reviewer overrode the checker. Those
rows now have the basis "carried" (storage/reviews.py's CARRIED): shown beside the point, never listed
as the reviewer's. A reviewer's copy could not be given a citation of its own on a point of the answer
(only a missing point, chosen in the document, is cited by the reviewer), so the rows marked are a
person's on a point with a span, written by the review (a rank; imported citations have none).

A review signed and not reopened keeps its rows as they are: its signature covers its citations, and
`signoff verify` would find them changed. How many rows changed (and how many were left on signed
reviews) goes into the audit log and is said on the standard error.

Revision ID: 0022
Revises: 0021
"""

import logging
import sys

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

revision = "0022"
down_revision = "0021"

CARRIED = "carried"  # a frozen copy of storage/reviews.py's CARRIED as of this revision
_CARRIED_ROWS = """
    FROM data_points d JOIN raters r ON r.id = d.rater_id
    WHERE d.id = citations.data_point_id AND r.kind = 'human' AND d.span_start IS NOT NULL
"""
_SIGNED = """
    EXISTS (SELECT 1 FROM signoffs s JOIN data_points d ON d.answer_id = s.answer_id AND d.rater_id = s.rater_id
            WHERE d.id = citations.data_point_id AND s.reopened_at IS NULL)
"""
_WHERE = f"basis IS NULL AND rank IS NOT NULL AND EXISTS (SELECT 1 {_CARRIED_ROWS})"


def upgrade() -> None:
    bind = op.get_bind()
    kept = bind.execute(sa.text(f"SELECT count(*) FROM citations WHERE {_WHERE} AND {_SIGNED}")).scalar_one()
    changed = bind.execute(
        sa.text(f"UPDATE citations SET basis = :carried WHERE {_WHERE} AND NOT {_SIGNED}"), {"carried": CARRIED}
    ).rowcount
    if not changed and not kept:
        return  # a new project, or one whose reviewers never opened a judged answer: nothing to say
    from storage.audit_chain import append_audit  # the chain's one writer: its hash is the log's

    session = Session(bind=bind)
    try:
        append_audit(
            session,
            "assay",
            "project.migrated",
            "project",
            "-",
            {"revision": revision, "citations_no_longer_the_reviewers": changed, "left_on_signed_reviews": kept},
        )
    finally:
        session.close()
    said = (
        f"assay: {changed} citation{'s' * (changed != 1)} that reviewers' points had carried over from the judge "
        f"or the answer are no longer listed as the reviewers' own (migration {revision})"
    )
    if kept:
        said += f"; {kept} on signed reviews were left as signed (reopen and sign again to drop them)"
    logging.getLogger("assay.migrations").info(said)
    print(said, file=sys.stderr)


def downgrade() -> None:
    op.execute(sa.text("UPDATE citations SET basis = NULL WHERE basis = :carried").bindparams(carried=CARRIED))
