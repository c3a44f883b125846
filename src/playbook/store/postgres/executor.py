"""The PostgreSQL executor: the store's only handle on a psycopg connection.

The store's SQL is written once, with `?` parameters; each statement text is turned into
psycopg's `%s` form once and cached. The connection runs in autocommit, as the SQLite one
does: a read outside a transaction is one statement's snapshot, and `transaction()` is

    BEGIN; SELECT pg_advisory_xact_lock(<this playbook>)   -- one round trip
    ... the store's statements ...
    UPDATE _playbook_changes SET n = n + 1; SELECT pg_notify(<channel>, ''); COMMIT

so write transactions on one playbook run one at a time, from any number of machines,
exactly as SQLite's write lock makes them (see `store/executor.py` for why the store relies
on that). A write statement met outside `transaction()` runs in one of its own.

Every statement is a round trip to the server. Inside a transaction, writes whose result
nobody reads (`later`: the decision log, postings, the evidence upsert) wait and go in one
pipeline with the next statement that needs an answer, or with the commit's three
statements; reads that do not depend on each other go together too (`all_of`).

`change_token()` reads the commit counter (`_playbook_changes`), so it moves with every
commit of anyone, strictly (the recall cache is keyed by it); a listening executor
(`listen()`, the workbench's watcher) counts the notifications instead, without a query.
Through a transaction-mode pool (`pooling.py`) each transaction sets the session's settings
in its first round trip (`settings`), and nothing listens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from ...core import errors
from ..dialect import POSTGRESQL
from ..executor import ExecutorBase
from .light import IDLE
from .statements import (
    LOCK_CLASS,
    Connection,
    PgRows,
    channel_of,
    driver_errors,
    failure,
    lock_key,
    one_statement,
    only_appends,
    prepare,
    quoted,
    send_many,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["LOCK_CLASS", "PostgresExecutor", "channel_of", "lock_key", "prepare"]


class PostgresExecutor(ExecutorBase):
    """See the module's docstring. `schema` is the playbook's schema (its tables)."""

    dialect = POSTGRESQL
    # The connection's role may not write what is derived from the log (the evidence
    # cache, maturity): the database's own functions do (`roles.py`, the agent role).
    derived_by_database = False

    def __init__(
        self,
        conn: Connection,
        *,
        schema: str,
        label: str = "",
        read_only: bool = False,
        settings: str = "",
    ) -> None:
        self._conn = conn
        self._errors = driver_errors(conn)  # what the connection raises (psycopg's or light's)
        self.schema = schema
        self.label = label
        self.read_only = read_only
        self._depth = 0
        self._later: list[tuple[str, list[Sequence[Any]]]] = []  # writes not sent yet
        self._appended: dict[str, list[Sequence[Any]]] = {}  # plain INSERTs among them
        self._wrote = False
        self._writes = 0  # write statements run on this connection (the token's own part)
        self._counter: bool | None = None  # the commit-counter table exists
        self._listening = False
        self._notified = 0
        channel = channel_of(schema).replace("'", "''")
        # Through a transaction-mode pool (`pooling.py`): the statement that sets the
        # session's settings, sent first in every transaction ("" straight to a server).
        self.settings = settings
        then = f"; {settings}" if settings else ""
        self._begin = f"BEGIN{then}; SELECT pg_advisory_xact_lock({LOCK_CLASS}, {lock_key(schema)})"
        self._snapshot = f"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY{then}"
        self._bump = (
            "UPDATE _playbook_changes SET n = n + 1",
            f"SELECT pg_notify('{channel}', '')",
            "COMMIT",
        )
        self._listen = f"LISTEN {quoted(channel_of(schema))}"
        # How to connect again after the connection broke (`opening.open_postgres` sets it).
        self.reopen: Callable[[], Connection] | None = None

    # -------------------------------------------------------------- running SQL
    def _run(self, sql: str, params: Sequence[Any] | None) -> Any:
        text, params = one_statement(sql, params)
        writes = prepare(sql)[1]
        if writes and not self._depth:  # a lone write takes the write lock like any other
            with self.transaction():
                return self._run(sql, params)
        if self._depth:
            return self._attempt(text, params, writes)
        self._connected()
        try:
            return self._attempt(text, params, writes)
        except errors.ConnectionLost:  # a read on its own: asked again, once, anew
            self._connected()
            return self._attempt(text, params, writes)

    def _attempt(self, text: str, params: Sequence[Any] | None, writes: bool) -> Any:
        try:
            if self._later or self._pooled_alone():
                cur = self._send_later([(text, params)])[0]
            else:
                cur = self._conn.execute(text, params)
        except self._errors as exc:
            raise self._error(exc) from exc
        if writes:
            self._wrote = True
            self._writes += 1
        return cur

    def _error(self, exc: Exception, *, committing: bool = False) -> BaseException:
        return failure(exc, self._conn, self.label, committing=committing)

    def _connected(self) -> bool:
        """Outside a transaction, a connection that broke is opened again (the server came
        back; a refused login raises `CannotOpen`); False when it was fine."""
        if self._depth or not (self._conn.broken or self._conn.closed) or self.reopen is None:
            return False
        fresh = self.reopen()
        with suppress(*self._errors):
            self._conn.close()
        self._conn = fresh
        self._later, self._appended = [], {}
        if self._listening:  # notifications sent meanwhile are lost: count one
            self._listening = False
            self._notified += 1
            self.listen()
        return True

    def execute(self, sql: str, params: Sequence[Any] = ()) -> PgRows:
        return PgRows(self._run(sql, params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        rows = list(rows)
        if not rows:
            return 0
        text, writes = prepare(sql)
        if not self._depth and (writes or self._pooled_alone()):
            with self.transaction() if writes else self.snapshot():
                return self.executemany(sql, rows)
        self._connected()
        try:
            if self._later:
                self._send_later()
            with self._conn.cursor() as cur:
                cur.executemany(text, rows)
                count = int(cur.rowcount)
        except self._errors as exc:
            raise self._error(exc) from exc
        if writes:
            self._wrote = True
            self._writes += 1
        return count

    def later(self, sql: str, rows: Iterable[Sequence[Any]] = ((),)) -> None:
        """`Executor.later`: inside a write transaction the writes wait, and go with the
        next statement, or the commit, in one pipeline (one round trip for all of them),
        in the order they were asked for, but for one thing: the rows of a plain INSERT
        (no ON CONFLICT; the decision, maturity and feedback logs) asked for again while
        the first still waits join it, as one multi-row INSERT (`only_appends`), so such a
        row must not need a row that another waiting write adds. Outside a transaction:
        at once, all the rows in one transaction of their own (`executemany`)."""
        rows = list(rows)
        if not self._depth:
            self.executemany(sql, rows)
            return
        waiting = self._appended.get(sql)
        if waiting is not None:
            waiting += rows
        else:
            self._later.append((sql, rows))
            if only_appends(sql, rows):
                self._appended[sql] = rows
        self._wrote = True
        self._writes += 1

    def _send_later(self, queries: Sequence[tuple[str, Sequence[Any] | None]] = ()) -> list[Any]:
        """Send the waiting writes, then `queries` (statements as `one_statement` gives them),
        in one pipeline; the queries' cursors, whose rows are there once it is through."""
        waiting, self._later, self._appended = self._later, [], {}
        alone = self._pooled_alone()
        with self._conn.pipeline():
            if alone:  # the settings, then the rest: one implicit transaction
                self._conn.execute(self.settings)
            for sql, rows in waiting:
                send_many(self._conn, sql, rows)
            return [self._conn.execute(text, params) for text, params in queries]

    def _pooled_alone(self) -> bool:
        """Through a pool, outside any transaction: a statement needs the settings first."""
        return bool(self.settings) and self._conn.info.transaction_status == IDLE

    def all_of(self, queries: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """`Executor.all_of`: one pipeline, after any writes still waiting."""
        self._connected()
        try:
            cursors = self._send_later([one_statement(sql, params) for sql, params in queries])
        except self._errors as exc:
            raise self._error(exc) from exc
        return [cur.fetchall() for cur in cursors]

    def call(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """`Executor.call`: the rows, and the transaction marked as one that wrote."""
        rows = self.all(sql, params)
        self._wrote = True
        self._writes += 1
        return rows

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first row, or None."""
        return self.execute(sql, params).fetchone()

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.execute(sql, params).fetchall()

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run an INSERT into a table with an integer key `id`; return the new row's key."""
        return int(self.execute(sql + " RETURNING id", params).fetchone()[0])

    def insert_row(self, table: str, sql: str, params: Sequence[Any], returning: str) -> Any:
        """`Executor.insert_row`, in the same round trip (RETURNING)."""
        return self.execute(f"{sql} RETURNING {returning}", params).fetchone()

    def keys_written(self, table: str, column: str) -> None:
        """Rows with explicit integer keys were inserted into `table`: move its identity
        past the largest, so the next generated key follows them (as SQLite's does)."""
        self.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
            f"COALESCE(MAX({column}), 0) + 1, false) FROM {table}"
        )

    @contextmanager
    def bulk(self) -> Iterator[None]:
        """One bulk write (an import, a copy): once it is through, the playbook's tables are
        ANALYZEd, so the planner knows their new sizes at once rather than when autovacuum
        next passes (until then the evidence fold's `feedback.id > ?` scans the whole log:
        13 ms instead of 0.1 ms per mark at 10k rules)."""
        yield
        self.analyze()

    def analyze(self) -> None:
        """Refresh the planner's statistics of the playbook's tables (a role that does not
        own them gets a warning from the server, and nothing changes)."""
        names = self._conn.execute(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = %s ORDER BY 1",
            (self.schema,),
        ).fetchall()
        if not names:
            return
        tables = ", ".join(f"{quoted(self.schema)}.{quoted(n)}" for (n,) in names)
        try:
            self._conn.execute(f"ANALYZE {tables}")
        except self._errors as exc:
            raise self._error(exc) from exc

    # -------------------------------------------------------------- transactions
    def _begin_write(self) -> None:
        """BEGIN and this playbook's write lock, in one round trip."""
        self._connected()
        self._later, self._appended = [], {}
        try:
            self._conn.execute(self._begin)
        except self._errors as exc:
            self._rollback()
            raise self._error(exc) from exc
        self._wrote = False

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Many reads that see one state of the playbook (a REPEATABLE READ transaction that
        only reads: writers go on meanwhile and are not seen)."""
        if self._depth:
            yield
            return
        self._connected()
        try:
            self._conn.execute(self._snapshot)
        except self._errors as exc:
            raise self._error(exc) from exc
        try:
            yield
        finally:
            self._rollback()

    def _commit(self) -> None:
        try:
            ending = self._bump if self._wrote and self._has_counter() else ("COMMIT",)
            if self._later:  # the waiting writes and the commit: one round trip
                self._later += [(sql, [()]) for sql in ending]
                self._send_later()
            else:
                self._conn.execute("; ".join(ending))
        except self._errors as exc:
            self._rollback()
            raise self._error(exc, committing=True) from exc

    def counter_found(self, found: bool) -> None:
        """The opening found the commit-counter table (`opening.playbook_schema`): no
        commit asks again. Not found, the first commit that wrote asks (a migration of this
        process may make it)."""
        if found:
            self._counter = True

    def _has_counter(self) -> bool:
        """Whether the commit-counter table exists (it does once step 1 has run)."""
        if not self._counter:
            found = self._conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (f"{quoted(self.schema)}._playbook_changes",)
            ).fetchone()
            self._counter = bool(found and found[0])
        return self._counter

    def _rollback(self) -> None:
        self._later, self._appended = [], {}
        with suppress(*self._errors):
            if self._conn.info.transaction_status != IDLE:
                self._conn.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    # -------------------------------------------------------------- live refresh
    def change_token(self) -> tuple[int, int]:
        """Changes whenever anyone commits to this playbook (or this connection writes)."""
        self._connected()
        if self._listening:
            self._drain()
            return (self._notified, self._writes)
        if not self._has_counter():
            return (0, self._writes)
        return (int(self.scalar("SELECT n FROM _playbook_changes", default=0)), self._writes)

    def listen(self) -> None:
        """Follow other connections' commits by notification: from now on `change_token()`
        counts the NOTIFYs of this playbook's writers and asks the server nothing. Through
        a pool (no server connection of one's own to listen on) it keeps asking."""
        if self._listening or self.settings or not hasattr(self._conn, "add_notify_handler"):
            return  # a light connection (`light.py`) does not listen either
        self._conn.add_notify_handler(self._notice)
        try:
            self._conn.execute(self._listen)
        except self._errors as exc:
            raise self._error(exc) from exc
        self._listening = True

    def _notice(self, _: psycopg.Notify) -> None:
        self._notified += 1

    def _drain(self) -> None:
        """Count the notifications that arrived (reads the socket; never blocks)."""
        pgconn = self._conn.pgconn
        try:
            # Twice: a server that cut the connection sent its last message, then EOF; the
            # first read takes the message, the second meets the end (and raises).
            pgconn.consume_input()
            pgconn.consume_input()
        except self._errors as exc:
            raise self._error(exc) from exc
        while pgconn.notifies() is not None:
            self._notified += 1

    # -------------------------------------------------------------- the database
    def integrity_problems(self, limit: int = 100, *, full: bool = True) -> list[str]:
        """PostgreSQL checks its pages itself (checksums, amcheck): nothing to report here."""
        return []

    def damaged_tables(self) -> list[str]:
        return []

    def foreign_key_problems(self) -> list[tuple[Any, ...]]:
        return []  # enforced by the server on every write

    def close(self) -> None:
        self._conn.close()
