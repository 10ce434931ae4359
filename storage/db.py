"""Open a project database, bring its schema up to this version of Assay, and count what it holds."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import URL, Engine, create_engine, event, func, select
from sqlalchemy.orm import Session, sessionmaker

from storage.errors import NotAProject as NotAProject  # the store's errors, re-exported: callers import them here
from storage.errors import PassphraseNeeded as PassphraseNeeded
from storage.errors import ProjectDamaged as ProjectDamaged
from storage.errors import ProjectTooNew as ProjectTooNew
from storage.errors import StorageError as StorageError
from storage.errors import WrongPassphrase as WrongPassphrase
from storage.schema import AnswerRow, DataPointRow, DocumentRow, LabelRow, PassageRow, QuestionRow, RaterRow

MIGRATIONS = Path(__file__).with_name("migrations")


def url_for_path(path: str | Path) -> str:
    """A project file's address: `sqlite:///` and its absolute path, exactly as given (`%`, `?` and `#`
    are letters of the name here, never URL syntax: `sqlite_path` and `connect` read it back so)."""
    try:
        return f"sqlite:///{Path(path).expanduser().resolve()}"
    except RuntimeError as exc:  # Python 3.11 says a symbolic link that loops this way
        raise NotAProject(path, f"{path} cannot be opened: a symbolic link in its path points to itself") from exc
    except OSError as exc:
        raise NotAProject(path, f"{path} cannot be opened: {exc.strerror or exc}") from exc


def sqlite_path(url: str) -> Path | None:
    """The project file a `sqlite:///` address names: the rest of it, letter for letter."""
    return Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None


def engine_url(url: str) -> str | URL:
    """What SQLAlchemy is given: a project file's path as the database, never parsed as a URL (else
    `p%2e.assay` opened `p..assay` and `a?mode=ro.assay` a file `a`); a server's URL as it is."""
    path = sqlite_path(url)
    return url if path is None else URL.create("sqlite", database=str(path))


def is_encrypted(url: str) -> bool:
    """An existing project file that could be SQLCipher's: not plain SQLite (SQLCipher encrypts even
    the header), whole pages, bytes as even as ciphertext. Other files are named by `integrity`."""
    from storage.integrity import looks_encrypted

    path = sqlite_path(url)
    return path is not None and path.is_file() and looks_encrypted(path)


def connect(url: str, passphrase: str | None = None) -> Engine:
    """Open (or create) a project database; SQLite gets WAL and foreign keys.

    With a passphrase the SQLite file is opened through SQLCipher (AES-256, key derived with
    PBKDF2): pages, write-ahead log and header are unreadable without it. The passphrase never
    enters the URL, so it cannot leak through a printed or logged project address.
    """
    path = sqlite_path(url)
    if passphrase is None:
        if is_encrypted(url):
            raise PassphraseNeeded(f"{path} is encrypted: give its passphrase")
        engine = create_engine(engine_url(url))
    else:
        if path is None:
            raise StorageError("only SQLite project files can be encrypted; a database server has its own protection")
        import sqlcipher3.dbapi2 as sqlcipher

        engine = create_engine(engine_url(url), module=sqlcipher)
        event.listen(engine, "connect", partial(_unlock, passphrase, path))
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _tune_sqlite)
    return engine


def _unlock(passphrase: str, path: Path, dbapi_connection: Any, _record: Any) -> None:
    from sqlcipher3.dbapi2 import DatabaseError

    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA cipher_log_level = NONE")  # a wrong key is our error to report, not stderr noise
    cur.execute("PRAGMA key = '" + passphrase.replace("'", "''") + "'")  # PRAGMA takes no parameters
    try:
        cur.execute("SELECT count(*) FROM sqlite_master")  # the first read is where a wrong key shows
    except DatabaseError as exc:  # "file is not a database"
        raise WrongPassphrase(f"wrong passphrase for {path}") from exc
    finally:
        cur.close()


def _tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA busy_timeout = 5000")  # first: switching to WAL waits for another writer too
    cur.execute("PRAGMA foreign_keys = ON")  # off by default in SQLite
    cur.execute("PRAGMA journal_mode = WAL")  # the UI reads while a judge run writes
    cur.execute("PRAGMA synchronous = NORMAL")  # durable across a killed process in WAL mode
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
        where = engine.url.database if engine.dialect.name == "sqlite" else "this project"
        raise ProjectTooNew(f"{where} was saved by a newer Assay (schema {current}); update Assay to open it")
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


def open_project(url: str, passphrase: str | None = None) -> sessionmaker[Session]:
    """Connect, migrate, and return the one session factory the process uses."""
    from sqlalchemy.exc import DatabaseError

    from storage import integrity

    if (path := sqlite_path(url)) is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if passphrase is None:
            integrity.inspect_file(path)  # cut short, or not a project: said before SQLite says it worse
    engine = connect(url, passphrase)
    try:
        if path is not None:
            integrity.check_structure(engine, path)
        migrate(engine)
    except (StorageError, DatabaseError) as exc:
        engine.dispose()
        if isinstance(exc, DatabaseError) and path is not None:
            raise integrity.as_storage_error(path, exc) from exc
        raise
    return sessionmaker(engine, expire_on_commit=False)


def counts(session: Session) -> dict[str, int]:
    """How many of each thing the project holds (what `assay info` prints)."""
    tables = {
        "documents": DocumentRow,
        "passages": PassageRow,
        "questions": QuestionRow,
        "answers": AnswerRow,
        "data_points": DataPointRow,
        "labels": LabelRow,
        "raters": RaterRow,
    }
    return {name: session.scalar(select(func.count()).select_from(table)) or 0 for name, table in tables.items()}
