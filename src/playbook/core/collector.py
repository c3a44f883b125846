"""The cyclic garbage collector paused while a read builds a whole playbook's rows.

A read of 100k rules makes hundreds of thousands of tuples that live until the read ends
and hold no cycles. Each batch of new objects sets the collector off, and its older
generations walk everything the process holds (a workbench holds millions of objects):
on a team's year that was four fifths of building a time-travel table. `paused()` keeps
it off for the read; reads in several threads nest (the collector comes back when the
last one ends, as it was before the first)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_was_enabled = True


@contextmanager
def paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
