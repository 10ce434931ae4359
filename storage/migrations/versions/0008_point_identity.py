"""Data points carry their identity (what they say), the points a reviewer's edit replaced, and
answers their place in the dataset.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"


def upgrade() -> None:
    with op.batch_alter_table("data_points") as batch:
        batch.add_column(sa.Column("point_key", sa.String(80)))
        batch.add_column(sa.Column("replaces", sa.JSON))
    op.create_index("ix_data_points_answer_key", "data_points", ["answer_id", "point_key"])
    with op.batch_alter_table("answers") as batch:
        batch.add_column(sa.Column("position", sa.Integer))
    op.create_index("ix_answers_position", "answers", ["position"])
    _fill(op.get_bind())


def _fill(bind) -> None:
    """Existing points get their keys in the order they were made; answers their import order."""
    from models.identity import PointContent, key_for

    order = dict(
        bind.execute(
            sa.text("SELECT entity_id, min(id) FROM audit_log WHERE action = 'answer.imported' GROUP BY entity_id")
        ).all()
    )
    answers = [row[0] for row in bind.execute(sa.text("SELECT id FROM answers"))]
    ranked = sorted(answers, key=lambda a: (a not in order, order.get(a, 0), a))
    for position, answer_id in enumerate(ranked, start=1):
        bind.execute(sa.text("UPDATE answers SET position = :p WHERE id = :a"), {"p": position, "a": answer_id})

    cited: dict[int, list[str]] = {}
    for point_id, citation in bind.execute(
        sa.text("SELECT c.data_point_id, p.citation_id FROM citations c JOIN passages p ON p.id = c.passage_id")
    ):
        cited.setdefault(point_id, []).append(citation)
    keyed: dict[str, list] = {}
    points = bind.execute(
        sa.text("SELECT id, answer_id, rater_id, text, span_start, span_end FROM data_points ORDER BY answer_id, id")
    ).all()
    for point_id, answer_id, rater_id, text, start, end in points:
        content = PointContent(text, start, end, tuple(sorted(cited.get(point_id, ()))))
        existing = keyed.setdefault(answer_id, [])
        key = key_for(content, [(k, c) for k, c, rater in existing if rater != rater_id])  # as storage/points.py
        existing.append((key, content, rater_id))
        bind.execute(sa.text("UPDATE data_points SET point_key = :k WHERE id = :i"), {"k": key, "i": point_id})
