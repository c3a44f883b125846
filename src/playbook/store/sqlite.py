"""The SQLite backend: opening a file, the executor, and every SQLite-only piece of SQL.

Everything that is particular to SQLite lives here, so that a PostgreSQL module can sit
beside it: the PRAGMAs, the WAL switch, `data_version` for live refresh, `BEGIN IMMEDIATE`,
binding a list as one JSON parameter (`json_each`), `instr`, `lastrowid`, and the
translation of `sqlite3` errors into Playbook's own (`playbook.errors`). No module outside
the store package imports `sqlite3`; outside this module the store speaks to its database
only through the `Executor` protocol (`store/executor.py`).

Three ways to open a file (`open_sqlite(path, mode)`):

* `read`   — an existing playbook, read only: never creates, never migrates, never
             switches the journal mode; works on a read-only file, folder or mount.
* `write`  — an existing playbook, read and write: upgrades an older schema; a file that
             holds no playbook (another program's database) is refused untouched.
* `create` — creates the folder and the file, switches to WAL, migrates.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from .. import errors

Mode = Literal["read", "write", "create"]
MODES: tuple[Mode, ...] = ("read", "write", "create")
_URI_MODE = {"read": "ro", "write": "rw", "create": "rwc"}
BUSY_TIMEOUT_MS = 30_000

# ------------------------------------------------------------------ dialect fragments
# A list bound as one parameter: `x IN {IN_LIST}` with `list_param(items)`.
IN_LIST = "(SELECT value FROM json_each(?))"
TABLE_EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
# `token` contains the parameter as a substring.
CONTAINS = "instr({column}, ?) > 0"


def list_param(items: Iterable[Any]) -> str:
    """The parameter for `IN_LIST`."""
    return json.dumps(list(items))


# ------------------------------------------------------------------ errors
_FOLLOW_UP = {  # primary result code -> the Playbook error for it
    sqlite3.SQLITE_BUSY: errors.DatabaseBusy,
    sqlite3.SQLITE_LOCKED: errors.DatabaseBusy,
    sqlite3.SQLITE_READONLY: errors.ReadOnlyPlaybook,
    sqlite3.SQLITE_CORRUPT: errors.DatabaseDamaged,
    sqlite3.SQLITE_FULL: errors.DiskFull,
    sqlite3.SQLITE_CANTOPEN: errors.CannotOpen,
    sqlite3.SQLITE_NOTADB: errors.DatabaseOpenError,
    sqlite3.SQLITE_CONSTRAINT: errors.ConstraintError,
}


def translate(exc: sqlite3.Error, label: str) -> errors.PlaybookError | None:
    """The Playbook error for a sqlite3 error met on `label` (a path), or None for a bug
    (misuse of the driver: a closed connection, a wrong parameter count)."""
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.ProgrammingError):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    kind = _FOLLOW_UP.get(code & 0xFF) if isinstance(code, int) else None
    detail = str(exc)
    where = label or "the database"
    if kind is errors.DatabaseBusy:
        return errors.DatabaseBusy(f"{where}: {detail}")
    if kind is errors.ReadOnlyPlaybook:
        return errors.ReadOnlyPlaybook(f"the playbook at {where} is read-only ({detail})")
    if kind is errors.DatabaseDamaged:
        return errors.DatabaseDamaged(f"the playbook at {where} is damaged ({detail})")
    if kind is errors.DiskFull:
        return errors.DiskFull(f"the disk is full: could not write {where} ({detail})")
    if kind is errors.CannotOpen:
        return errors.CannotOpen(_cannot_open(label, detail))
    if kind is errors.DatabaseOpenError:
        return errors.DatabaseOpenError(f"{where}: not a usable SQLite database ({detail})")
    if kind is errors.ConstraintError:
        return errors.ConstraintError(detail)
    if code is None and isinstance(exc, sqlite3.IntegrityError):
        return errors.ConstraintError(detail)
    return errors.DatabaseError(f"database error: {detail}")


def driver_error(exc: BaseException) -> errors.PlaybookError | None:
    """The Playbook error for a driver exception that escaped the store, or None."""
    return translate(exc, "") if isinstance(exc, sqlite3.Error) else None


def _cannot_open(label: str, detail: str) -> str:
    """Say what stands in the way of opening `label`, as far as the file system tells."""
    if not label or label == ":memory:":
        return f"cannot open the database ({detail})"
    path = Path(label)
    if not path.parent.exists():
        return f"cannot open {path}: the folder {path.parent} does not exist"
    if path.is_dir():
        return f"cannot open {path}: it is a directory, not a playbook file"
    if not path.exists() and not os.access(path.parent, os.W_OK):
        return f"cannot create {path}: the folder {path.parent} is not writable"
    return f"cannot open {path} ({detail})"


# ------------------------------------------------------------------ the executor
class Rows:
    """A cursor's results, with driver errors translated (what `Executor.execute` returns)."""

    __slots__ = ("_cur", "_label")

    def __init__(self, cur: sqlite3.Cursor, label: str) -> None:
        self._cur = cur
        self._label = label

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def lastrowid(self) -> int:
        return int(self._cur.lastrowid or 0)

    def fetchone(self) -> Any:
        try:
            return self._cur.fetchone()
        except sqlite3.Error as exc:
            raise _translated(exc, self._label) from exc

    def fetchall(self) -> list[Any]:
        try:
            return self._cur.fetchall()
        except sqlite3.Error as exc:
            raise _translated(exc, self._label) from exc

    def __iter__(self) -> Iterator[Any]:
        cur = self._cur
        while True:
            try:
                batch = cur.fetchmany(512)
            except sqlite3.Error as exc:
                raise _translated(exc, self._label) from exc
            if not batch:
                return
            yield from batch


def _translated(exc: sqlite3.Error, label: str) -> BaseException:
    return translate(exc, label) or exc


class SqliteExecutor:
    """The store's only handle on a SQLite connection (which it keeps private).

    `execute` / `executemany` / `one` / `all` / `scalar` / `column` / `insert` run SQL with
    `?` parameters; `transaction()` is one write transaction (re-entrant: an inner block
    joins the outer one); `change_token()` changes whenever anyone commits.
    """

    dialect = "sqlite"

    def __init__(
        self, conn: sqlite3.Connection, *, label: str = "", read_only: bool = False
    ) -> None:
        self._conn = conn
        self.label = label
        self.read_only = read_only
        self._depth = 0

    # -------------------------------------------------------------- running SQL
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        try:
            return Rows(self._conn.execute(sql, params), self.label)
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        try:
            return self._conn.executemany(sql, rows).rowcount
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first row, or None."""
        try:
            return self._conn.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def scalar(self, sql: str, params: Sequence[Any] = (), default: Any = None) -> Any:
        """The first column of the first row (`default` when there is no row or it is NULL)."""
        row = self.one(sql, params)
        return default if row is None or row[0] is None else row[0]

    def column(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The first column of every row."""
        return [r[0] for r in self.all(sql, params)]

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run an INSERT into a table with an integer key; return the new row's key."""
        return self.execute(sql, params).lastrowid

    # -------------------------------------------------------------- transactions
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (re-entrant: an inner block joins the outer one)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        if self.read_only:
            raise errors.ReadOnlyPlaybook(
                f"the playbook at {self.label or 'the database'} was opened read-only"
            )
        self.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._rollback()
            raise
        self._depth = 0
        self.execute("COMMIT")

    def _rollback(self) -> None:
        # SQLite may have rolled back already (a full disk, an I/O error).
        with suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    # -------------------------------------------------------------- live refresh
    def data_version(self) -> int:
        """Moves when another connection commits (PRAGMA data_version)."""
        return int(self.scalar("PRAGMA data_version", default=0))

    def change_token(self) -> tuple[int, int]:
        """A value that changes whenever anyone commits: another connection (data_version)
        or this one (total_changes). Cheap: microseconds, for polling."""
        return (self.data_version(), self._conn.total_changes)

    # -------------------------------------------------------------- the file
    def integrity_problems(self, limit: int = 100) -> list[str]:
        """SQLite's integrity check: [] when the file is sound."""
        rows = self.column(f"PRAGMA integrity_check({int(limit)})")
        return [] if rows == ["ok"] else [str(r) for r in rows]

    def damaged_tables(self) -> list[str]:
        """Each table (with its indexes) whose pages SQLite cannot read, one line each: for
        when the whole-file check stops at the first damage."""
        out: list[str] = []
        for name in self.column("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1"):
            try:
                found = self.column(f"PRAGMA quick_check('{name}')")
            except errors.DatabaseError:
                out.append(f"table {name}: damaged")
                continue
            if found != ["ok"]:
                out.append(f"table {name}: " + "; ".join(str(f) for f in found[:3]))
        return out

    def foreign_key_problems(self) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in self.all("PRAGMA foreign_key_check")]

    def close(self) -> None:
        self._conn.close()


# ------------------------------------------------------------------ opening a file
def configure(conn: sqlite3.Connection) -> None:
    """The PRAGMAs every connection gets: busy timeout, foreign keys, synchronous."""
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.absolute()), safe='/')}" + (f"?{query}" if query else "")


def _raw(target: str, *, uri: bool) -> sqlite3.Connection:
    return sqlite3.connect(
        target,
        uri=uri,
        isolation_level=None,
        timeout=BUSY_TIMEOUT_MS / 1000,
        check_same_thread=False,
    )


def _touch(conn: sqlite3.Connection) -> str:
    """Read the header and the schema, so that a file that is not SQLite fails here, and
    return the journal mode."""
    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()


def _cannot_lock(exc: sqlite3.Error) -> bool:
    """A WAL file in a folder we cannot write: readable only as an immutable file."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_READONLY_DIRECTORY, sqlite3.SQLITE_CANTOPEN)


def open_sqlite(path: str | Path, mode: Mode = "create") -> SqliteExecutor:
    """Open `path` as the store expects it (see the module's docstring for the modes).

    Raises the `playbook.errors` type for what went wrong: `NoDatabase` (read/write of a
    missing file), `CannotOpen`, `DatabaseOpenError` (not SQLite), `DiskFull`, ...
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    label = str(path)
    memory = label == ":memory:" or label.startswith("file::memory:")
    p = Path(path)
    if not memory:
        if mode != "create" and not p.exists():
            raise errors.NoDatabase(f"no playbook at {p}")
        if p.is_dir():
            raise errors.CannotOpen(f"cannot open {p}: it is a directory, not a playbook file")
    read_only = mode == "read"
    try:
        if memory:
            conn = _raw(label, uri=label.startswith("file:"))
        else:
            conn = _raw(_uri(p, mode=_URI_MODE[mode]), uri=True)
        try:
            configure(conn)
            journal = _touch(conn)
        except sqlite3.Error as exc:
            conn.close()
            if memory or mode == "create" or not _cannot_lock(exc):
                raise
            # A WAL playbook in a folder we cannot write: SQLite cannot make its lock files,
            # so read it as an immutable file (nobody can change it there anyway).
            conn = _raw(_uri(p, mode="ro", immutable="1"), uri=True)
            configure(conn)
            journal = _touch(conn)
            read_only = True
        if mode == "create" and journal not in ("wal", "memory"):
            journal = _switch_to_wal(conn)
            if journal not in ("wal", "memory", ""):
                conn.close()
                raise errors.DatabaseOpenError(
                    f"{label}: could not switch to WAL journal mode ({journal})"
                )
    except sqlite3.Error as exc:
        err = translate(exc, label)
        if err is None:
            raise
        if type(err) is errors.DatabaseError:  # at open, an unknown failure: say where
            err = errors.DatabaseOpenError(f"{label}: not a usable SQLite database ({exc})")
        raise err from None
    return SqliteExecutor(conn, label=label, read_only=read_only)


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """`PRAGMA journal_mode=WAL`, waiting out other processes that switch at the same time.

    On a new file the switch needs an exclusive lock, and SQLite reports "database is
    locked" at once, without its busy handler, when several processes open the file
    together; so retry (for up to the busy timeout) instead of calling the file unusable.
    A file written by a newer Playbook is left as it is (the journal mode is written into
    the file): the store refuses to use it. Returns the journal mode now ("" if left).
    """
    from .schema import MEMORY_LATEST, schema_version

    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if mode == "wal":
                return mode
            if schema_version(SqliteExecutor(conn)) > MEMORY_LATEST:
                return ""
            return str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorcode", 0) & 0xFF in (
                sqlite3.SQLITE_BUSY,
                sqlite3.SQLITE_LOCKED,
            )
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def connect(path: str | Path) -> sqlite3.Connection:
    """A raw connection configured as the store expects (WAL, busy timeout, foreign keys),
    for the SPEC §2 API (`open_database`) and for tests; creates the file."""
    return open_sqlite(path, "create")._conn


def executor_of(db: Any) -> SqliteExecutor:
    """An executor for what the SPEC §2 API hands the store: a `sqlite_utils.Database`, a
    `sqlite3.Connection`, or an executor already."""
    if isinstance(db, SqliteExecutor):
        return db
    conn = db if isinstance(db, sqlite3.Connection) else getattr(db, "conn", None)
    if not isinstance(conn, sqlite3.Connection):
        raise TypeError(f"expected a playbook database, not {type(db).__name__}")
    label = ""
    try:
        row = conn.execute("PRAGMA database_list").fetchone()
        label = row[2] if row and row[2] else ""
    except sqlite3.Error:
        pass
    return SqliteExecutor(conn, label=label)
