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
        assert entries >= 129  # 10 documents and 119 answers imported
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
