"""A statement's rows as the database driver hands them over: plain tuples, without SQLAlchemy's Row
objects, which cost about a microsecond each (0.1 s of CPU for 100,000 answers' rows)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler


def plain_rows(connection: Connection, statement: ClauseElement) -> list[tuple[Any, ...]]:
    """Every row of `statement`, read on the connection's own cursor (in its transaction). Its parameters
    must be plain values (numbers, strings, no list for an IN) and its columns need no conversion:
    neither is passed through SQLAlchemy's types."""
    compiled = statement.compile(dialect=connection.dialect)
    assert isinstance(compiled, SQLCompiler)  # a statement, not DDL
    params: Any = compiled.construct_params()
    if compiled.positional:
        params = tuple(params[name] for name in compiled.positiontup or ())
    cursor = connection.connection.cursor()
    try:
        cursor.execute(compiled.string, params)
        return list(cursor.fetchall())
    finally:
        cursor.close()
