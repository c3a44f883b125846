"""Starting worker processes cheaply.

Every worker runs in a child forked from a `forkserver` that has already imported Playbook,
so starting one costs milliseconds instead of a fresh interpreter's import time, and a
child can be SIGKILLed like any process. The forkserver itself opens no database, so no
connection (SQLite or PostgreSQL) ever crosses a fork.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.context import ForkServerContext

PRELOAD = [
    "playbook.curation",
    "playbook.curation.outcomes",
    "playbook.review.queue",
    "playbook.reflection.session",
    "playbook.reflection.reflectors",
    "playbook.retrieval.query",
    "playbook.store",
    "playbook.store.postgres.executor",  # psycopg: the PostgreSQL variants' workers
    "playbook.retrieval.vectors",
    "tests.workers.load",
    "tests.workers.crash",
]


def context() -> ForkServerContext:
    ctx = multiprocessing.get_context("forkserver")
    assert isinstance(ctx, ForkServerContext)
    ctx.set_forkserver_preload(PRELOAD)  # ignored once the server runs; same list anyway
    return ctx
