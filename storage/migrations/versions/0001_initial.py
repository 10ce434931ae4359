"""The first release's schema: documents, passages (with FTS5), answers, raters, labels, reviews, audit.

Revision ID: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "documents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(500), nullable=False, unique=True),
        sa.Column("format", sa.String(10), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("parser_version", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_table(
        "passages",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("document_id", sa.Integer, sa.ForeignKey("documents.id", ondelete="CASCADE"), nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("citation_id", sa.String(20), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("article", sa.String(20)),
        sa.Column("section", sa.String(60)),
        sa.Column("heading_path", sa.Text, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("page", sa.Integer),
        sa.Column("char_start", sa.Integer),
        sa.Column("char_end", sa.Integer),
        sa.Column("footnote_label", sa.String(10)),
        sa.Column("refers_to_id", sa.Integer, sa.ForeignKey("passages.id", ondelete="SET NULL")),
        sa.UniqueConstraint("document_id", "citation_id"),
        sa.CheckConstraint("kind IN ('paragraph', 'footnote', 'toc')", name="passage_kind"),
    )
    op.create_index("ix_passages_document_id", "passages", ["document_id"])
    op.create_index("ix_passages_section", "passages", ["section"])
    op.create_table(
        "questions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("document_id", sa.Integer, sa.ForeignKey("documents.id", ondelete="CASCADE"), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.UniqueConstraint("document_id", "text"),
    )
    op.create_index("ix_questions_document_id", "questions", ["document_id"])
    op.create_table(
        "answers",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("question_id", sa.Integer, sa.ForeignKey("questions.id", ondelete="CASCADE"), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("generator", sa.String(200)),
        sa.Column("gold_answer", sa.Text),
        sa.Column("gold_required", sa.Text),
        sa.Column("gold_helpful", sa.Text),
        sa.Column("gold_spans", sa.JSON),
        sa.Column("meta", sa.JSON, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_index("ix_answers_question_id", "answers", ["question_id"])
    op.create_table(
        "raters",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("config", sa.JSON, nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.CheckConstraint("kind IN ('human', 'judge')", name="rater_kind"),
    )
    op.create_table(
        "data_points",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("answer_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("raters.id"), nullable=False),
        sa.Column("ordinal", sa.Integer, nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("span_start", sa.Integer),
        sa.Column("span_end", sa.Integer),
        sa.Column("created_at", TZ, nullable=False),
    )
    op.create_index("ix_data_points_answer_id", "data_points", ["answer_id"])
    op.create_table(
        "labels",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("data_point_id", sa.Integer, sa.ForeignKey("data_points.id", ondelete="CASCADE"), nullable=False),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("raters.id"), nullable=False),
        sa.Column("tag", sa.String(12), nullable=False),
        sa.Column("confidence", sa.Float),
        sa.Column("rationale", sa.Text),
        sa.Column("created_at", TZ, nullable=False),
        sa.UniqueConstraint("data_point_id", "rater_id"),
        sa.CheckConstraint("tag IN ('correct', 'incorrect', 'irrelevant', 'missing')", name="label_tag"),
        sa.CheckConstraint("confidence IS NULL OR (confidence >= 0 AND confidence <= 1)", name="label_confidence"),
    )
    op.create_index("ix_labels_data_point_id", "labels", ["data_point_id"])
    op.create_index("ix_labels_rater_id", "labels", ["rater_id"])
    op.create_table(
        "citations",
        sa.Column(
            "data_point_id",
            sa.Integer,
            sa.ForeignKey("data_points.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("passage_id", sa.Integer, sa.ForeignKey("passages.id", ondelete="CASCADE"), primary_key=True),
    )
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("answer_id", sa.String(200), sa.ForeignKey("answers.id", ondelete="CASCADE"), nullable=False),
        sa.Column("rater_id", sa.Integer, sa.ForeignKey("raters.id"), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("active_seconds", sa.Float, nullable=False),
        sa.Column("holistic_correctness", sa.Integer),
        sa.Column("holistic_relevance", sa.Integer),
        sa.Column("comment", sa.Text),
        sa.Column("updated_at", TZ, nullable=False),
        sa.UniqueConstraint("answer_id", "rater_id"),
        sa.CheckConstraint("status IN ('unreviewed', 'in_review', 'submitted')", name="review_status"),
        sa.CheckConstraint("holistic_correctness IS NULL OR holistic_correctness BETWEEN 1 AND 5", name="review_hc"),
        sa.CheckConstraint("holistic_relevance IS NULL OR holistic_relevance BETWEEN 1 AND 5", name="review_hr"),
    )
    op.create_index("ix_reviews_answer_id", "reviews", ["answer_id"])
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("at", TZ, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(60), nullable=False),
        sa.Column("entity", sa.String(40), nullable=False),
        sa.Column("entity_id", sa.String(200), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
    )
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_audit_is_append_only()
        _sqlite_passage_search()


def _sqlite_audit_is_append_only() -> None:
    for event in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER audit_log_no_{event.lower()} BEFORE {event} ON audit_log "
            "BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END"
        )


def _sqlite_passage_search() -> None:
    # External-content FTS5: the text lives once, in passages; table-of-contents lines stay out
    # of the index so that "governing law" finds the clause, not its entry in the contents.
    op.execute(
        "CREATE VIRTUAL TABLE passages_fts USING fts5("
        "text, heading_path, content='passages', content_rowid='id', tokenize='porter unicode61')"
    )
    op.execute(
        "CREATE TRIGGER passages_fts_insert AFTER INSERT ON passages WHEN new.kind != 'toc' BEGIN "
        "INSERT INTO passages_fts(rowid, text, heading_path) VALUES (new.id, new.text, new.heading_path); END"
    )
    op.execute(
        "CREATE TRIGGER passages_fts_delete AFTER DELETE ON passages WHEN old.kind != 'toc' BEGIN "
        "INSERT INTO passages_fts(passages_fts, rowid, text, heading_path) "
        "VALUES ('delete', old.id, old.text, old.heading_path); END"
    )
