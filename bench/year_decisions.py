"""The turns' decisions of a generated year (`year_world.py`): eight million in a team's
year, each with the id the decision log's sequence gives it.

    log = DecisionLog(store, target)   # the store the year is written with, and its target
    log.write(rows)                    # rows of DECISION_COLUMNS; ids taken now
    log.wait(); log.check(); log.close()

SQLite: into the store, at once. PostgreSQL: the `COPY` the store's bulk path sends, on a
connection of its own, in a thread, each day's rows in a transaction of their own while
the day goes on on the store's: the server then checks and indexes them on the core the
generator leaves free (in the day's transaction, a sixth of the year's time went on
waiting for it: a 10 % year took 64 s, now 52). That connection does not take the store's
write lock (it would hold the next day back): nothing the engine does reads or writes
those rows while the year is written, and their ids are taken from the store's sequence
when they are handed over, so the engine's own decisions after them get the ids that
follow, and the same year comes out, id for id, on both backends
(tests/test_team_year.py). `wait` is called before the year's end makes its keys again,
and `check` finds every id the year gave in the log.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from playbook.store import PlaybookStore

DECISION_COLUMNS = ("at", "batch_id", "actor", "action", "bullet_id", "status", "reason", "detail")
COLUMNS = ("id", *DECISION_COLUMNS)


def with_ids(store: PlaybookStore, rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """`rows` (DECISION_COLUMNS) with the decision log's next ids, taken now: the engine's
    own decisions after them get the ids that follow, wherever the rows are written, as
    had they been written here."""
    if not rows:
        return []
    sql = store.sql
    if str(sql.dialect) == "postgresql":
        seq = "pg_get_serial_sequence('decisions', 'id')"
        first = int(sql.scalar(f"SELECT nextval({seq})"))
        if len(rows) > 1:
            sql.execute(f"SELECT setval({seq}, ?)", (first + len(rows) - 1,))
    else:  # (AUTOINCREMENT: the next id follows the largest ever given)
        given = sql.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'decisions'", default=0)
        first = 1 + int(given or 0)
    return [(first + k, *row) for k, row in enumerate(rows)]


class DecisionLog:
    """Where the turns' decisions go (the module's docstring)."""

    def __init__(self, store: PlaybookStore, target: str | Path) -> None:
        self.store = store
        self.target = str(target)
        self.thread: ThreadPoolExecutor | None = None
        self.pending: Future[None] | None = None
        self.conn: Any = None

    def write(self, rows: list[tuple[Any, ...]]) -> None:
        """Write `rows` (DECISION_COLUMNS) with their ids, taken now (`with_ids`)."""
        if not rows:
            return
        rows = with_ids(self.store, rows)
        if str(self.store.sql.dialect) != "postgresql":
            self.store.tables.append_rows("decisions", COLUMNS, rows)
            return
        self.wait()  # (a day at a time: the rows of one day are held, no more)
        if self.thread is None:
            self.thread = ThreadPoolExecutor(1, thread_name_prefix="decisions")
        self.pending = self.thread.submit(self._copy, rows)

    def _copy(self, rows: list[tuple[Any, ...]]) -> None:
        import psycopg  # lazy: PostgreSQL's years only
        from psycopg import sql

        if self.conn is None:  # (autocommit: each day's rows in the transaction below)
            self.conn = psycopg.connect(self.target, autocommit=True)
        statement = sql.SQL("COPY decisions ({}) FROM STDIN").format(
            sql.SQL(", ").join(map(sql.Identifier, COLUMNS))
        )
        with self.conn.transaction(), self.conn.cursor() as cur, cur.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)

    def wait(self) -> None:
        """Every row handed over is written (an error of the thread is raised here)."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.result()

    def check(self) -> None:
        """Every decision the year gave an id is in the log, the thread's included (the
        ids are the log's from 1 on, none skipped)."""
        count, top = self.store.sql.one("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM decisions")
        if count != top:
            raise SystemExit(f"the decision log holds {count:,} rows for ids 1 to {top:,}")

    def close(self) -> None:
        try:
            self.wait()
        finally:
            if self.thread is not None:
                if self.conn is not None:
                    self.thread.submit(self.conn.close).result()
                self.thread.shutdown()
