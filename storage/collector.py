"""Python's cycle collector held off while many objects are made at once.

The collector runs each time 700 more container objects (tuples, dicts, rows) have been made than freed,
and now and then walks every object the process holds. Making 100,000 rows of the queue, or 130,000
disagreements of the judge-human alignment, it ran hundreds of times over a heap of a million objects:
the queue took 0.16 s of CPU with it and 0.08 s without, the alignment 0.90 s and 0.67 s. The
objects made there hold no reference cycles, so reference counting frees them all the same; the
collector runs again when the last block ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holding = 0  # blocks inside `held_off`, on any thread
_was_enabled = False  # whether the collector ran before the first of them


@contextmanager
def held_off() -> Iterator[None]:
    """The collector off for the block (on every thread: it is the process's), back as it was once the
    last block that held it off ends."""
    global _holding, _was_enabled
    with _lock:
        if _holding == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holding += 1
    try:
        yield
    finally:
        with _lock:
            _holding -= 1
            if _holding == 0 and _was_enabled:
                gc.enable()
