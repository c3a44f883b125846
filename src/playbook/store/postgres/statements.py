"""The statements the PostgreSQL executor sends: the store's `?` SQL in psycopg's `%s` form,
one-row INSERTs joined into multi-row ones, results as the `Executor` protocol's rows, and
the names of a playbook's write lock and notification channel."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from ...core import errors
from .dialect import translate
from .light import LightConnection, LightError

# A psycopg connection or a `LightConnection`: the executor uses the same members of each.
Connection = Any

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


def one_statement(sql: str, params: Sequence[Any] | None) -> tuple[str, Sequence[Any] | None]:
    """What psycopg is sent for `sql`: the `%s` form with parameters; without any, the text
    as it is (psycopg then reads no placeholders in it)."""
    return (prepare(sql)[0], params) if params else (sql, None)


# An INSERT of one row of parameters: what comes before its VALUES tuple, the tuple, what
# comes after (an ON CONFLICT clause).
_ONE_ROW = re.compile(r"(?is)^(INSERT\s.*?\bVALUES\s*)(\([^()'\"]*\))([^'\"]*)$")
MANY_ROWS = 500  # rows one multi-row INSERT carries at most


def many_statements(sql: str, rows: list[Sequence[Any]]) -> list[tuple[str, Sequence[Any] | None]]:
    """The statements that write `rows` with `sql`: a one-row INSERT is sent as multi-row
    INSERTs (a statement costs the client about as much as its rows together), so an
    upsert's rows must not repeat a key (PostgreSQL refuses to update a row twice in one
    statement); anything else, once per row."""
    one = _ONE_ROW.match(sql) if len(rows) > 1 and all(rows) else None
    if one is None:
        return [one_statement(sql, row) for row in rows]
    head, values, tail = one.groups()
    raw = "?" not in head + tail and "$" not in head + tail
    out: list[tuple[str, Sequence[Any] | None]] = []
    for start in range(0, len(rows), MANY_ROWS):
        chunk = rows[start : start + MANY_ROWS]
        params = [v for row in chunk for v in row]
        if raw:
            out.append((numbered(head, values, tail, len(chunk)), params))
        else:
            text = head + ", ".join([values] * len(chunk)) + tail
            out.append(one_statement(text, params))
    return out


def driver_errors(conn: Connection) -> tuple[type[Exception], ...]:
    """What `conn`'s driver raises for a database's error."""
    if isinstance(conn, LightConnection):
        return (LightError,)
    import psycopg  # lazy: a psycopg connection is open: imported already

    return (psycopg.Error,)


def send_many(conn: Connection, sql: str, rows: list[Sequence[Any]]) -> None:
    """Send the statements that write `rows` with `sql` (`many_statements`) on `conn`, in
    its pipeline; the numbered ones by a `RawCursor` (its results are the pipeline's; a
    light connection sends a `Numbered` statement as it is)."""
    raw: Any
    if isinstance(conn, LightConnection):
        raw = conn
    else:
        import psycopg  # lazy: a psycopg connection is open: imported already

        raw = psycopg.RawCursor(conn)
    for text, params in many_statements(sql, rows):
        (raw if isinstance(text, Numbered) else conn).execute(text, params)


class Numbered(str):
    """A statement whose parameters are PostgreSQL's own `$1, $2, ...`: sent as it is (a
    `psycopg.RawCursor`), where psycopg would parse a `%s` text again at every execution
    (it keeps the parse only of statements up to 50 parameters): a 500-row INSERT costs
    the client 20-30 ms to parse, more than its rows."""


@lru_cache(maxsize=256)
def numbered(head: str, values: str, tail: str, n: int) -> Numbered:
    """`head` + `n` copies of the one-row `values` tuple (its `?` numbered on) + `tail`."""
    parts = values.split("?")
    width = len(parts) - 1
    rows = (
        "".join(p + (f"${r * width + i + 1}" if i < width else "") for i, p in enumerate(parts))
        for r in range(n)
    )
    return Numbered(head + ", ".join(rows) + tail)


def only_appends(sql: str, rows: list[Sequence[Any]]) -> bool:
    """Whether `sql` only appends rows (a one-row INSERT with no ON CONFLICT clause): its
    waiting writes are then sent together, where the first of them waited."""
    one = _ONE_ROW.match(sql) if all(rows) else None
    return one is not None and "CONFLICT" not in one.group(3).upper()


def _is_tag(text: str) -> bool:
    return text == "" or (text.replace("_", "a").isalnum() and not text[0].isdigit())


class PgRows:
    """A cursor's results (what `Executor.execute` returns)."""

    __slots__ = ("_cur",)

    def __init__(self, cur: Any) -> None:  # a psycopg cursor or a `LightCursor`
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return int(self._cur.rowcount)

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


def quoted(name: str) -> str:
    """An SQL identifier, double-quoted (a quote in it doubled): a schema named `Team A`,
    `a,b` or `we"ird` is one name."""
    return '"' + name.replace('"', '""') + '"'


def channel_of(schema: str) -> str:
    """The NOTIFY channel of the playbook in `schema`."""
    return f"playbook:{schema}"[:63]


def failure(
    exc: Exception, conn: Connection, label: str, *, committing: bool = False
) -> BaseException:
    """What the store raises for a driver's error: `ConnectionLost` when the connection
    broke (what became of the work said), else the dialect's translation, else `exc`."""
    if conn.broken or conn.closed:
        where = label or "the database server"
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else "closed"
        if committing:
            return errors.ConnectionLost(
                f"lost the connection to {where} while committing ({detail}): the batch "
                "was applied whole or not at all; look before repeating it"
            )
        return errors.ConnectionLost(
            f"lost the connection to {where} ({detail}); what was under way was not "
            "applied, and the next request connects again"
        )
    return translate(exc, label) or exc
