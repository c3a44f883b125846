"""A light connection: libpq itself, through ctypes, for the one-shot commands.

An agent runs `playbook hook prompt`, `mark` and `recall` as processes of their own, many
times a session, and waits for each. Importing psycopg costs such a process about 100 ms
(its adapters, `asyncio`, `logging`, `typing_extensions`...), as much as everything else
`hook prompt` does on the team-year, while the process sends a dozen statements through
a handful of its features. This module is those features on the libpq that psycopg's
binary wheel brings (`psycopg_binary.libs`; else the system's `libpq.so.5`), about 5 ms to
load: `connect` (libpq reads the URL, the environment, the password file, exactly as under
psycopg), `execute` with `%s` parameters (sent apart from the text, as psycopg 3 does,
typed as psycopg types them: `values.py`), `pipeline()` (libpq's pipeline mode: one round
trip, one implicit transaction), `cursor().executemany`, and the connection's state.

The executor (`executor.py`) drives it as it drives a psycopg connection; `opening.py`
chooses it only when asked (`prefer_light`, by the launcher for its one-shot commands),
for a playbook opened to read or write (not to create), straight to a server (not through
a transaction-mode pool), and falls back to psycopg when no libpq is found. Errors are
`LightError`s carrying the SQLSTATE, which `dialect.translate` reads as it reads
psycopg's. `$PLAYBOOK_PG_DRIVER=psycopg` turns it off.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from ctypes import c_char_p, c_uint, c_void_p
from functools import lru_cache
from typing import Any

from .libpq import SILENT, library
from .values import Unsupported, dump_all, loader

_TUPLES_OK, _COMMAND_OK, _EMPTY, _SYNC = 2, 1, 0, 10
_DIAG_SQLSTATE = ord("C")
_CONNECTION_OK = 0
IDLE = 0  # PQtransactionStatus: no transaction open (psycopg's TransactionStatus.IDLE)


class LightError(Exception):
    """A libpq error. `sqlstate`: the server's code ("" for one met before or without the
    server); `kind`: "data" (a value refused before sending, psycopg's DataError),
    "operational" (the connection), "interface" (misuse), or "database"."""

    def __init__(self, message: str, sqlstate: str = "", kind: str = "database") -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.kind = kind


def _strip(message: bytes | None) -> str:
    """A libpq message without its severity (psycopg's `strip_severity`)."""
    text = (message or b"").decode("utf-8", "replace").strip()
    for prefix in ("ERROR:", "FATAL:", "PANIC:"):
        if text.startswith(prefix):
            return text[len(prefix) :].strip()
    return text or "no error details available"


def _array(kind: Any, items: Sequence[Any]) -> Any:
    return (kind * len(items))(*items)


def connect(keywords: dict[str, str]) -> LightConnection:
    """A connection with these libpq keywords (`dbname` may be a whole URL, read by libpq
    as psycopg has it read: what the other keywords say wins over the URL's)."""
    pq = library()
    keys = [k.encode() for k in keywords] + [None]
    vals = [str(v).encode() for v in keywords.values()] + [None]
    handle = pq.PQconnectdbParams(_array(c_char_p, keys), _array(c_char_p, vals), 1)
    if not handle:
        raise LightError("connection failed: out of memory", kind="operational")
    pq.PQsetNoticeProcessor(handle, ctypes.cast(SILENT, c_void_p), None)
    if pq.PQstatus(handle) != _CONNECTION_OK:
        message = (pq.PQerrorMessage(handle) or b"").decode("utf-8", "replace").strip()
        pq.PQfinish(handle)
        raise LightError(f"connection failed: {message}", kind="operational")
    return LightConnection(pq, handle)


class LightCursor:
    """One statement's results, read as psycopg reads them; filled at once, or when the
    pipeline it was sent in is through."""

    __slots__ = ("_rows", "description", "rowcount")

    def __init__(self) -> None:
        self._rows: list[tuple[Any, ...]] = []
        self.description: list[int] | None = None  # the columns' types, when it has rows
        self.rowcount = -1

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)


class _Many:
    """What `cursor()` gives: `executemany`, and the rows it wrote."""

    def __init__(self, conn: LightConnection) -> None:
        self._conn = conn
        self.rowcount = 0

    def __enter__(self) -> _Many:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def executemany(self, query: str, rows: Sequence[Sequence[Any]]) -> None:
        with self._conn.pipeline():
            cursors = [self._conn.execute(query, row) for row in rows]
        self.rowcount = sum(max(c.rowcount, 0) for c in cursors)


class LightConnection:
    """See the module's docstring. Autocommit, as the executor keeps psycopg's."""

    def __init__(self, pq: Any, handle: int) -> None:
        self._pq = pq
        self._handle: int | None = handle
        self._queued: list[LightCursor] | None = None  # in a pipeline

    # ---------------------------------------------------------------- state
    @property
    def closed(self) -> bool:
        return self._handle is None

    @property
    def broken(self) -> bool:
        return self._handle is not None and self._pq.PQstatus(self._handle) != _CONNECTION_OK

    @property
    def info(self) -> LightConnection:  # psycopg's `conn.info.transaction_status`
        return self

    @property
    def transaction_status(self) -> int:
        return self._pq.PQtransactionStatus(self._handle) if self._handle else 4

    def close(self) -> None:
        if self._handle is not None:
            self._pq.PQfinish(self._handle)
            self._handle = None

    def cursor(self) -> _Many:
        return _Many(self)

    # ---------------------------------------------------------------- statements
    def execute(self, query: str, params: Sequence[Any] | None = None) -> LightCursor:
        """Run `query` (`%s` parameters and `%%`, as psycopg takes them; a `Numbered`
        statement's `$n` as they are), or queue it in the open pipeline."""
        if self._handle is None:
            raise LightError("the connection is closed", kind="interface")
        cur = LightCursor()
        if params is None and self._queued is None:
            self._finish(cur, self._pq.PQexec(self._handle, query.encode()))
            return cur
        raw = params is None or getattr(query, "numbered", False)  # as psycopg: no parsing
        text = query if raw else _numbered(query)
        try:
            oids, texts = dump_all(params or ())
        except (Unsupported, ValueError) as exc:
            raise LightError(
                str(exc), kind="data" if isinstance(exc, ValueError) else "interface"
            ) from None
        n = len(texts)
        args = (
            self._handle,
            text.encode(),
            n,
            _array(c_uint, oids),
            _array(c_char_p, texts),
            None,
            None,
            0,
        )
        if self._queued is None:
            self._finish(cur, self._pq.PQexecParams(*args))
            return cur
        if not self._pq.PQsendQueryParams(*args):
            raise self._conn_error()
        self._queued.append(cur)
        return cur

    @contextmanager
    def pipeline(self) -> Iterator[None]:
        """Statements executed inside go in one round trip, in one implicit transaction
        when none is open; their cursors are filled on the way out, and the first error
        among them is raised there (those after it did not run)."""
        if self._queued is not None:  # nested: the outer one sends them
            yield
            return
        if not self._pq.PQenterPipelineMode(self._handle):
            raise self._conn_error()
        self._queued = []
        try:
            yield
        finally:
            queued, self._queued = self._queued, None
            self._sync(queued)

    def _sync(self, queued: list[LightCursor]) -> None:
        pq, handle = self._pq, self._handle
        failed: Exception | None = None
        if not pq.PQpipelineSync(handle):
            failed = self._conn_error()
        else:
            for cur in queued:
                res = pq.PQgetResult(handle)
                try:
                    self._finish(cur, res)
                except Exception as exc:  # the first is raised, once the pipeline is read
                    failed = failed or exc
                while extra := pq.PQgetResult(handle):  # the NULL that ends each one
                    pq.PQclear(extra)
            nulls = 0
            while True:  # to the sync's own result
                res = pq.PQgetResult(handle)
                if not res:
                    nulls += 1
                    if pq.PQstatus(handle) != _CONNECTION_OK or nulls > 2:
                        failed = failed or self._conn_error()
                        break
                    continue
                status = pq.PQresultStatus(res)
                pq.PQclear(res)
                if status == _SYNC:
                    break
        pq.PQexitPipelineMode(handle)
        if failed is not None:
            raise failed

    def _finish(self, cur: LightCursor, res: int | None) -> None:
        """Read `res` into `cur` and free it; raise its error."""
        pq = self._pq
        if not res:
            raise self._conn_error()
        try:
            status = pq.PQresultStatus(res)
            if status == _TUPLES_OK:
                cur._rows, cur.description = _rows(pq, res)
                cur.rowcount = len(cur._rows)
            elif status in (_COMMAND_OK, _EMPTY):
                counted = pq.PQcmdTuples(res)
                cur.rowcount = int(counted) if counted else -1
            else:
                state = (pq.PQresultErrorField(res, _DIAG_SQLSTATE) or b"").decode()
                message = _strip(pq.PQresultErrorMessage(res))
                broken = pq.PQstatus(self._handle) != _CONNECTION_OK
                raise LightError(
                    message, state, "operational" if broken and not state else "database"
                )
        finally:
            pq.PQclear(res)

    def _conn_error(self) -> LightError:
        message = _strip(self._pq.PQerrorMessage(self._handle)) if self._handle else "closed"
        return LightError(message, kind="operational")


def _rows(pq: Any, res: int) -> tuple[list[tuple[Any, ...]], list[int]]:
    ntuples, nfields = pq.PQntuples(res), pq.PQnfields(res)
    types = [pq.PQftype(res, c) for c in range(nfields)]
    columns = list(enumerate(loader(t) for t in types))
    cell, is_null, ptr = pq.cell, pq.is_null, c_void_p(res)
    rows = []
    for r in range(ntuples):
        row = []
        for c, load in columns:
            raw = cell(ptr, r, c)
            row.append(None if not raw and is_null(ptr, r, c) else load(raw))
        rows.append(tuple(row))
    return rows, types


@lru_cache(maxsize=1024)
def _numbered(query: str) -> str:
    """psycopg's `%s` placeholders as `$1, $2, ...`, and `%%` as `%`."""
    out, n, i = [], 0, 0
    while True:
        j = query.find("%", i)
        if j == -1:
            out.append(query[i:])
            return "".join(out)
        out.append(query[i:j])
        nxt = query[j + 1 : j + 2]
        if nxt == "s":
            n += 1
            out.append(f"${n}")
        elif nxt == "%":
            out.append("%")
        else:
            raise LightError(f"only %s placeholders are sent, not %{nxt}", kind="interface")
        i = j + 2
