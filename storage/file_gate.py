"""Who holds a project file, so that a backup takes its place with nothing reading it.

A connection opened on the file while it is swapped would go on reading the file moved aside, and on closing SQLite
would delete the write-ahead log by name: the restored file's, with its committed work. Any thread may read the
project (the claim check, the dashboard, an export preview, a judge run), so the gate is the engine's own: every
connection the pool hands out is counted from checkout to checkin, and a reader that needs one file for a whole task
holds it with `reading()`. `replacing()` waits until nothing is held, empties the pool and holds off every new
connection until the swap is done; a reader asking meanwhile then opens the new file.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, event
from sqlalchemy.exc import DisconnectionError

from storage.errors import FileBusy

WAIT_S = 30.0  # how long a restore waits for readers to finish before it says the project is busy


class FileGate:
    """The holds on one engine's file: connections checked out and `reading()` blocks, each with its thread."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._changed = threading.Condition()
        self._holders: dict[int, int] = {}  # id of a connection record or of a reading() block -> its thread
        self._tasks: dict[int, str] = {}  # the reading() blocks of long tasks, which a restore does not wait for
        self._replacer: int | None = None  # the thread swapping the file, while it does
        event.listen(engine, "do_connect", self._connecting)
        event.listen(engine, "checkout", self._checked_out)
        event.listen(engine, "checkin", self._checked_in)

    @contextmanager
    def reading(self, task: str = "") -> Iterator[None]:
        """Hold the file for a task of several queries: a restore waits until the block ends. A long task that
        writes as it goes (`task` names it: "a judge run") is not waited for: a restore is refused at once."""
        token = object()  # alive until the block ends, so no connection record can share its id
        with self._changed:
            self._wait_unless_holding()
            self._holders[id(token)] = threading.get_ident()
            if task:
                self._tasks[id(token)] = task
        try:
            yield
        finally:
            self._release(id(token))

    @contextmanager
    def replacing(self) -> Iterator[None]:
        """The file with every connection returned and closed; none is opened until the block ends. FileBusy when
        a reader still holds it after WAIT_S seconds: then nothing is replaced. Readers asking meanwhile wait
        (so that a stream of them cannot put a restore off for ever)."""
        me = threading.get_ident()
        with self._changed:
            if me in self._holders.values():
                raise RuntimeError("a thread that holds the project file cannot replace it")
            self._wait_unless_holding()  # one replacement at a time
            if self._tasks:
                task = next(iter(self._tasks.values()))
                raise FileBusy(
                    f"{task} is using the project: it was not replaced; let it end or stop it, then try again"
                )
            self._replacer = me
            if not self._changed.wait_for(lambda: not self._holders, WAIT_S):
                self._replacer = None
                self._changed.notify_all()
                raise FileBusy(
                    f"the project is still being read after {WAIT_S:.0f} s: it was not replaced; try again later"
                )
        try:
            self._engine.dispose()  # the pool's connections close: none keeps the old file open
            yield
        finally:
            self._engine.dispose()  # none opened by mistake inside the block outlives it
            with self._changed:
                self._replacer = None
                self._changed.notify_all()

    @property
    def waiting_to_replace(self) -> bool:
        """Whether a replacement is under way: waiting for readers, or swapping the file."""
        with self._changed:
            return self._replacer is not None

    def _wait_unless_holding(self) -> None:
        """Wait, the condition held, while another thread replaces the file; a thread that already holds it goes
        on (the replacement waits for it)."""
        me = threading.get_ident()
        if self._replacer == me:
            raise RuntimeError("the project file is read while this thread replaces it")
        if me not in self._holders.values():
            self._changed.wait_for(lambda: self._replacer is None)

    def _release(self, key: int) -> None:
        with self._changed:
            self._tasks.pop(key, None)
            if self._holders.pop(key, None) is not None:
                self._changed.notify_all()

    def _connecting(self, *_args: Any) -> None:
        """A new connection opens the file: never while it is swapped."""
        with self._changed:
            self._wait_unless_holding()

    def _checked_out(self, _dbapi: Any, record: Any, _proxy: Any) -> None:
        with self._changed:
            me = threading.get_ident()
            if self._replacer is not None and me not in self._holders.values():
                # a pooled connection of the old file: the pool drops it and opens another, after the swap
                raise DisconnectionError("the project file is being replaced")
            self._holders[id(record)] = me

    def _checked_in(self, _dbapi: Any, record: Any) -> None:
        self._release(id(record))
