"""The project file: migrated schema, WAL, append-only audit, BM25 search."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

from app.project import Project
from storage.db import ProjectTooNew, connect, current_revision, head_revision, open_project, url_for_path
from storage.schema import Base


@pytest.mark.every_store
def test_migrations_build_exactly_the_schema_the_code_uses(project: Project) -> None:
    engine = project.sessions.kw["bind"]
    assert current_revision(engine) == head_revision()
    with engine.connect() as connection:
        # The FTS5 index is SQL the ORM does not model.
        context = MigrationContext.configure(
            connection, opts={"include_name": lambda name, kind, _parent: not (kind == "table" and "_fts" in name)}
        )
        differences = compare_metadata(context, Base.metadata)
    assert differences == []


def test_sqlite_project_is_in_wal_mode_with_foreign_keys(project: Project) -> None:
    with project.sessions() as session:
        assert session.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert session.execute(text("PRAGMA foreign_keys")).scalar() == 1


@pytest.mark.every_store
def test_audit_log_is_append_only(sample_project: Project) -> None:
    with sample_project.sessions() as session:
        entries = session.execute(text("SELECT count(*) FROM audit_log")).scalar()
        assert entries >= 165  # 12 documents and 153 answers imported
        truncate = ["TRUNCATE audit_log"] if session.get_bind().dialect.name == "postgresql" else []
        for statement in ("UPDATE audit_log SET actor = 'mallory'", "DELETE FROM audit_log", *truncate):
            with pytest.raises(DatabaseError, match="append-only"):
                session.execute(text(statement))
            session.rollback()


def test_project_from_a_newer_assay_is_refused(tmp_path: Path) -> None:
    url = url_for_path(tmp_path / "future.assay")
    open_project(url)
    with connect(url).begin() as connection:
        connection.execute(text("UPDATE alembic_version SET version_num = '9999'"))
    with pytest.raises(ProjectTooNew, match="newer Assay"):
        open_project(url)


@pytest.mark.every_store
def test_governing_law_search_ranks_the_governing_law_clause_first(sample_project: Project) -> None:
    hits = sample_project.search("Cybergy", "governing law")
    assert hits[0].passage.text.startswith("This Agreement is accepted by Company in the State of Nevada")
    assert "Governing Law" in hits[0].passage.heading_path


@pytest.mark.every_store
def test_search_skips_the_table_of_contents_and_survives_odd_input(sample_project: Project) -> None:
    hits = sample_project.search("CopAcc", "governing law")
    assert hits[0].passage.text.startswith("This Agreement and the rights and obligations")
    assert sample_project.search("CopAcc", 'law" OR (NEAR') != []  # FTS syntax in a query is just words
    assert sample_project.search("CopAcc", "***") == []


def test_upgrading_a_first_release_project_keeps_every_label(tmp_path: Path) -> None:
    """Users' files outlive app versions: a 0001 project with reviews upgrades with nothing lost."""
    from alembic import command

    from storage.db import _alembic_config

    url = url_for_path(tmp_path / "old.assay")
    engine = connect(url)
    config = _alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0001")
        connection.exec_driver_sql("INSERT INTO documents VALUES (1, 'nda.txt', 'txt', 'x', 1, 'Text.', '2025-01-01')")
        connection.exec_driver_sql("INSERT INTO questions VALUES (1, 1, 'Q?')")
        connection.exec_driver_sql(
            "INSERT INTO answers VALUES ('a1', 1, 'A.', NULL, NULL, NULL, NULL, NULL, '{}', '2025-01-01')"
        )
        connection.exec_driver_sql("INSERT INTO raters VALUES (1, 'ana', 'human', '{}', '2025-01-01')")
        connection.exec_driver_sql("INSERT INTO data_points VALUES (1, 'a1', 1, 0, 'A.', 0, 2, '2025-01-01')")
        connection.exec_driver_sql("INSERT INTO labels VALUES (1, 1, 1, 'incorrect', NULL, 'wrong date', '2025-01-01')")
    engine.dispose()

    sessions = open_project(url)
    with sessions() as session:
        assert session.execute(text("SELECT tag, rationale FROM labels")).all() == [("incorrect", "wrong date")]
        assert session.execute(text("PRAGMA foreign_keys")).scalar() == 1
    assert current_revision(sessions.kw["bind"]) == head_revision()


def test_upgrading_to_point_contexts_keeps_every_tag_citation_and_copy(tmp_path: Path) -> None:
    """0007 gives data points a lead-in span; an older project's judge and reviewer work comes through whole."""
    from alembic import command

    from storage.db import _alembic_config

    url = url_for_path(tmp_path / "0006.assay")
    engine = connect(url)
    config = _alembic_config()
    answer = "Yes. Specifically:\n- MA may not assign."
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0006")
        for statement in (
            "INSERT INTO documents (id, name, format, sha256, parser_version, text, created_at)"
            " VALUES (1, 'nda.txt', 'txt', 'x', 1, 'MA may not assign.', '2025-01-01')",
            "INSERT INTO passages (id, document_id, ordinal, citation_id, kind, heading_path, text)"
            " VALUES (1, 1, 0, 'par_1', 'paragraph', '', 'MA may not assign.')",
            "INSERT INTO questions (id, document_id, text) VALUES (1, 1, 'Q?')",
            "INSERT INTO answers (id, question_id, text, meta, created_at)"
            f" VALUES ('a1', 1, '{answer}', '{{}}', '2025-01-01')",
            "INSERT INTO raters (id, name, kind, config, created_at) VALUES (1, 'judge', 'judge', '{}', '2025-01-01')",
            "INSERT INTO raters (id, name, kind, config, created_at) VALUES (2, 'ana', 'human', '{}', '2025-01-01')",
            "INSERT INTO data_points (id, answer_id, rater_id, ordinal, text, span_start, span_end, created_at)"
            " VALUES (1, 'a1', 1, 0, 'MA may not assign.', 21, 39, '2025-01-01')",
            "INSERT INTO data_points (id, answer_id, rater_id, ordinal, text, span_start, span_end, source_id,"
            " comment, created_at) VALUES (2, 'a1', 2, 0, 'MA may not assign.', 21, 39, 1, 'checked', '2025-01-01')",
            "INSERT INTO labels (data_point_id, rater_id, tag, confidence, created_at)"
            " VALUES (1, 1, 'correct', 0.9, '2025-01-01')",
            "INSERT INTO labels (data_point_id, rater_id, tag, rationale, created_at)"
            " VALUES (2, 2, 'incorrect', 'wrong party', '2025-01-01')",
            "INSERT INTO citations (data_point_id, passage_id) VALUES (1, 1)",
            "INSERT INTO citations (data_point_id, passage_id) VALUES (2, 1)",
        ):
            connection.exec_driver_sql(statement)
    engine.dispose()

    project = Project.open(url)
    try:
        points = project.data_points("a1")
        [judge], [ana] = points["judge"], points["ana"]
        assert (judge.tag.value, judge.confidence, judge.citations) == ("correct", 0.9, ("par_1",))
        assert (ana.tag.value, ana.rationale, ana.comment, ana.source_id) == ("incorrect", "wrong party", "checked", 1)
        assert (ana.context_start, ana.context_end, ana.context) == (None, None, "")
        assert current_revision(project.sessions.kw["bind"]) == head_revision()
    finally:
        project.close()
