"""Open a project database and bring its schema up to this version of Assay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from models.errors import AssayError

MIGRATIONS = Path(__file__).with_name("migrations")


class StorageError(AssayError):
    """The project store cannot be opened or written."""


class ProjectTooNew(StorageError):
    """The project was written by a newer Assay whose schema this version does not know."""


def url_for_path(path: str | Path) -> str:
    return f"sqlite:///{Path(path).expanduser().resolve()}"


def connect(url: str) -> Engine:
    """Open (or create) a project database; SQLite gets WAL and foreign keys."""
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _tune_sqlite)
    return engine


def _tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA foreign_keys = ON")  # off by default in SQLite
    cur.execute("PRAGMA journal_mode = WAL")  # the UI reads while a judge run writes
    cur.execute("PRAGMA synchronous = NORMAL")  # durable across a killed process in WAL mode
    cur.execute("PRAGMA busy_timeout = 5000")
    cur.close()


def _alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def migrate(engine: Engine) -> None:
    """Upgrade the schema to head; refuse a project written by a newer Assay."""
    current = current_revision(engine)
    known = {rev.revision for rev in ScriptDirectory.from_config(_alembic_config()).walk_revisions()}
    if current is not None and current not in known:
        raise ProjectTooNew(f"this project was saved by a newer Assay (schema {current}); update Assay to open it")
    if current == head_revision():
        return
    config = _alembic_config()
    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as connection:
        if sqlite:
            # SQLite migrations rebuild tables (batch mode); with foreign keys on, dropping the old
            # table would cascade-delete every label and citation. Off outside a transaction, then
            # checked once the schema is rebuilt.
            connection.exec_driver_sql("PRAGMA foreign_keys = OFF")
            connection.commit()
        try:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
            if sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first() is not None:
                connection.rollback()
                raise StorageError("the upgraded project fails its foreign-key check; it was left as it was")
            connection.commit()
        finally:
            if sqlite:
                connection.exec_driver_sql("PRAGMA foreign_keys = ON")


def open_project(url: str) -> sessionmaker[Session]:
    """Connect, migrate, and return the one session factory the process uses."""
    if url.startswith("sqlite:///"):
        Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
    engine = connect(url)
    migrate(engine)
    return sessionmaker(engine, expire_on_commit=False)
