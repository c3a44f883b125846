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
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import lru_cache
from typing import Any

import psycopg

from ..dialect import POSTGRESQL
from ..executor import ExecutorBase
from .dialect import translate

LOCK_CLASS = 0x706C6179  # "play": the first key of the playbook's advisory lock
_WRITES = frozenset(("INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "DROP", "TRUNCATE"))


@lru_cache(maxsize=4096)
def prepare(sql: str) -> tuple[str, bool]:
    """(`sql` with `?` as `%s` and `%` as `%%`, whether it writes). Question marks inside
    quotes (strings, identifiers, dollar-quoted bodies) are left as they are."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"":
            end = sql.find(c, i + 1)
            while end != -1 and end + 1 < n and sql[end + 1] == c:  # doubled quote
                end = sql.find(c, end + 2)
            end = n - 1 if end == -1 else end
            out.append(sql[i : end + 1].replace("%", "%%"))
            i = end + 1
            continue
        if c == "$" and (tag_end := sql.find("$", i + 1)) != -1 and _is_tag(sql[i + 1 : tag_end]):
            tag = sql[i : tag_end + 1]
            end = sql.find(tag, tag_end + 1)
            end = n if end == -1 else end + len(tag)
            out.append(sql[i:end].replace("%", "%%"))
            i = end
            continue
        out.append("%s" if c == "?" else "%%" if c == "%" else c)
        i += 1
    first = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
    return "".join(out), first in _WRITES


def _statement(sql: str, params: Sequence[Any] | None) -> tuple[str, Sequence[Any] | None]:
    """What psycopg is sent for `sql`: the `%s` form with parameters; without any, the text
    as it is (psycopg then reads no placeholders in it)."""
    return (prepare(sql)[0], params) if params else (sql, None)


# An INSERT of one row of parameters: what comes before its VALUES tuple, the tuple, what
# comes after (an ON CONFLICT clause).
_ONE_ROW = re.compile(r"(?is)^(INSERT\s.*?\bVALUES\s*)(\([^()'\"]*\))([^'\"]*)$")
MANY_ROWS = 500  # rows one multi-row INSERT carries at most


def _statements(sql: str, rows: list[Sequence[Any]]) -> list[tuple[str, Sequence[Any] | None]]:
    """The statements that write `rows` with `sql`: a one-row INSERT is sent as multi-row
    INSERTs (a statement costs the client about as much as its rows together), so an
    upsert's rows must not repeat a key (PostgreSQL refuses to update a row twice in one
    statement); anything else, once per row."""
    one = _ONE_ROW.match(sql) if len(rows) > 1 and all(rows) else None
    if one is None:
        return [_statement(sql, row) for row in rows]
    head, values, tail = one.groups()
    out: list[tuple[str, Sequence[Any] | None]] = []
    for start in range(0, len(rows), MANY_ROWS):
        chunk = rows[start : start + MANY_ROWS]
        text = head + ", ".join([values] * len(chunk)) + tail
        out.append(_statement(text, [v for row in chunk for v in row]))
    return out


def _appends(sql: str, rows: list[Sequence[Any]]) -> bool:
    """Whether `sql` only appends rows (a one-row INSERT with no ON CONFLICT clause): its
    waiting writes are then sent together, where the first of them waited."""
    one = _ONE_ROW.match(sql) if all(rows) else None
    return one is not None and "CONFLICT" not in one.group(3).upper()


def _is_tag(text: str) -> bool:
    return text == "" or (text.replace("_", "a").isalnum() and not text[0].isdigit())


class PgRows:
    """A cursor's results (what `Executor.execute` returns)."""

    __slots__ = ("_cur",)

    def __init__(self, cur: psycopg.Cursor[Any]) -> None:
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def lastrowid(self) -> int:
        raise NotImplementedError("PostgreSQL has no lastrowid: use Executor.insert")

    def fetchone(self) -> Any:
        return self._cur.fetchone() if self._cur.description else None

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall() if self._cur.description else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cur) if self._cur.description else iter(())


def lock_key(schema: str) -> int:
    """The second key of a playbook's advisory lock: its schema's name, hashed to int4."""
    h = zlib.crc32(schema.encode())
    return h - (1 << 32) if h >= 1 << 31 else h


def channel_of(schema: str) -> str:
    """The NOTIFY channel of the playbook in `schema`."""
    return f"playbook:{schema}"[:63]


class PostgresExecutor(ExecutorBase):
    """See the module's docstring. `schema` is the playbook's schema (its tables)."""

    dialect = POSTGRESQL
    # The connection's role may not write what is derived from the log (the evidence
    # cache, maturity): the database's own functions do (`roles.py`, the agent role).
    derived_by_database = False

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        *,
        schema: str,
        label: str = "",
        read_only: bool = False,
    ) -> None:
        self._conn = conn
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
        self._begin = f"BEGIN; SELECT pg_advisory_xact_lock({LOCK_CLASS}, {lock_key(schema)})"
        self._bump = (
            "UPDATE _playbook_changes SET n = n + 1",
            f"SELECT pg_notify('{channel}', '')",
            "COMMIT",
        )
        self._listen = 'LISTEN "{}"'.format(channel_of(schema).replace('"', '""'))

    # -------------------------------------------------------------- running SQL
    def _run(self, sql: str, params: Sequence[Any] | None) -> psycopg.Cursor[Any]:
        text, params = _statement(sql, params)
        writes = prepare(sql)[1]
        if writes and not self._depth:  # a lone write takes the write lock like any other
            with self.transaction():
                return self._run(sql, params)
        try:
            if self._later:
                cur = self._send_later([(text, params)])[0]
            else:
                cur = self._conn.execute(text, params)  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise self._error(exc) from exc
        if writes:
            self._wrote = True
            self._writes += 1
        return cur

    def _error(self, exc: psycopg.Error) -> BaseException:
        return translate(exc, self.label) or exc

    def execute(self, sql: str, params: Sequence[Any] = ()) -> PgRows:
        return PgRows(self._run(sql, params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        rows = list(rows)
        if not rows:
            return 0
        text, writes = prepare(sql)
        if writes and not self._depth:
            with self.transaction():
                return self.executemany(sql, rows)
        try:
            if self._later:
                self._send_later()
            with self._conn.cursor() as cur:
                cur.executemany(text, rows)
                count = cur.rowcount
        except psycopg.Error as exc:
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
        the first still waits join it, as one multi-row INSERT (`_appends`), so such a
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
            if _appends(sql, rows):
                self._appended[sql] = rows
        self._wrote = True
        self._writes += 1

    def _send_later(
        self, queries: Sequence[tuple[str, Sequence[Any] | None]] = ()
    ) -> list[psycopg.Cursor[Any]]:
        """Send the waiting writes, then `queries` (statements as `_statement` gives them),
        in one pipeline; the queries' cursors, whose rows are there once it is through."""
        waiting, self._later, self._appended = self._later, [], {}
        with self._conn.pipeline():
            for sql, rows in waiting:
                for text, params in _statements(sql, rows):
                    self._conn.execute(text, params)  # type: ignore[arg-type]
            return [self._conn.execute(text, params) for text, params in queries]  # type: ignore[arg-type]

    def all_of(self, queries: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """`Executor.all_of`: one pipeline, after any writes still waiting."""
        try:
            cursors = self._send_later([_statement(sql, params) for sql, params in queries])
        except psycopg.Error as exc:
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
        from psycopg import sql

        names = self._conn.execute(
            "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = %s ORDER BY 1",
            (self.schema,),
        ).fetchall()
        if not names:
            return
        tables = sql.SQL(", ").join(sql.Identifier(self.schema, n) for (n,) in names)
        try:
            self._conn.execute(sql.SQL("ANALYZE {}").format(tables))
        except psycopg.Error as exc:
            raise self._error(exc) from exc

    # -------------------------------------------------------------- transactions
    def _begin_write(self) -> None:
        """BEGIN and this playbook's write lock, in one round trip."""
        self._later, self._appended = [], {}
        try:
            self._conn.execute(self._begin)
        except psycopg.Error as exc:
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
        try:
            self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        except psycopg.Error as exc:
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
        except psycopg.Error as exc:
            self._rollback()
            raise self._error(exc) from exc

    def _has_counter(self) -> bool:
        """Whether the commit-counter table exists (it does once step 1 has run)."""
        if not self._counter:
            found = self._conn.execute(
                "SELECT to_regclass(%s) IS NOT NULL", (f'"{self.schema}"._playbook_changes',)
            ).fetchone()
            self._counter = bool(found and found[0])
        return self._counter

    def _rollback(self) -> None:
        self._later, self._appended = [], {}
        with suppress(psycopg.Error):
            if self._conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                self._conn.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    # -------------------------------------------------------------- live refresh
    def change_token(self) -> tuple[int, int]:
        """Changes whenever anyone commits to this playbook (or this connection writes)."""
        if self._listening:
            self._drain()
            return (self._notified, self._writes)
        if not self._has_counter():
            return (0, self._writes)
        return (int(self.scalar("SELECT n FROM _playbook_changes", default=0)), self._writes)

    def listen(self) -> None:
        """Follow other connections' commits by notification: from now on `change_token()`
        counts the NOTIFYs of this playbook's writers and asks the server nothing."""
        if self._listening:
            return
        self._conn.add_notify_handler(self._notice)
        try:
            self._conn.execute(self._listen)
        except psycopg.Error as exc:
            raise self._error(exc) from exc
        self._listening = True

    def _notice(self, _: psycopg.Notify) -> None:
        self._notified += 1

    def _drain(self) -> None:
        """Count the notifications that arrived (reads the socket; never blocks)."""
        pgconn = self._conn.pgconn
        try:
            pgconn.consume_input()
        except psycopg.Error as exc:
            raise self._error(exc) from exc
        while pgconn.notifies() is not None:
            self._notified += 1

    # -------------------------------------------------------------- the database
    def integrity_problems(self, limit: int = 100) -> list[str]:
        """PostgreSQL checks its pages itself (checksums, amcheck): nothing to report here."""
        return []

    def damaged_tables(self) -> list[str]:
        return []

    def foreign_key_problems(self) -> list[tuple[Any, ...]]:
        return []  # enforced by the server on every write

    def close(self) -> None:
        self._conn.close()
