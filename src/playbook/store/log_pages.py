"""The history `playbook policy eval` replays, read a bounded page at a time (`store.log`).

`Past.read_history` reads the whole feedback log into memory at once: at a team's year (ten
million marks) that is gigabytes of Python objects, and on PostgreSQL the client library
holds the whole result as well. The replay needs the log once, in order, so it reads it
here instead, everything in one snapshot (`LogPages.snapshot()`, as one state of the
database while writers go on):

- `heads()`: the bullets, the maturity log and the lineage edges (a row per rule or change,
  the `log_replay` shapes, in the order `read_history` gives them);
- `event_pages(size)`: the feedback log in (recorded_at, id) order, `size` rows at a time as
  column tuples (`EVENT_COLUMNS`). SQLite runs one query and fetches its rows a page at a
  time (its sorter spills to disk, not to memory); PostgreSQL declares a cursor in the
  snapshot's transaction and fetches from it a page at a time;
- `event_count()`, `event_range()`, `events_at(t)`, `event_end(last)`: how many rows the
  log holds, the first and last recording times, the rows of one, and the first or last
  rows in order (the caller skips the malformed ones, as `read_history` does);
- `vocab()`, `postings(table)`: the recall index whole (the vocabulary, the token and tag
  postings), so the replay answers `ranking.token_matches` for every token from memory
  instead of by three queries each.

Rows come as stored: the caller decides what a malformed row is (`records.event_point`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .log_replay import Edge, LogBullet, MaturityEntry
from .tables import PAGE

if TYPE_CHECKING:
    from .executor import Executor

EVENT_COLUMNS = "id, bullet_id, kind, at, recorded_at, weight, context, session_ref, batch_id"
_EVENTS = f"SELECT {EVENT_COLUMNS} FROM feedback ORDER BY recorded_at, id"
_CURSOR = "playbook_replay_log"
_POSTINGS = {"bullet_tokens": "token", "bullet_tags": "tag"}
LAST = 64  # rows read from the end of the log at a time, until one is well formed


class LogPages:
    """The replay's reads of the whole history, a page at a time (`store.log`)."""

    def __init__(self, sql: Executor) -> None:
        self.sql = sql

    def snapshot(self) -> AbstractContextManager[None]:
        """Every read inside sees one state of the playbook."""
        return self.sql.snapshot()

    def heads(self) -> tuple[list[LogBullet], list[MaturityEntry], list[Edge]]:
        """(bullets in seq order, maturity log in (at, id) order, supersedes edges in
        (at, id) order)."""
        ex = self.sql
        bullets = list(
            map(
                LogBullet._make,
                ex.execute(
                    "SELECT seq, id, type, maturity, half_life_days, valid_from, valid_to "
                    "FROM bullets ORDER BY seq"
                ),
            )
        )
        maturity = list(
            map(
                MaturityEntry._make,
                ex.execute("SELECT id, bullet_id, at, maturity FROM maturity_log ORDER BY at, id"),
            )
        )
        edges = list(
            map(
                Edge._make,
                ex.execute(
                    "SELECT id, src, dst, at FROM edges WHERE kind = 'supersedes' ORDER BY at, id"
                ),
            )
        )
        return bullets, maturity, edges

    def event_count(self) -> int:
        """Rows in the feedback log (malformed ones included)."""
        return int(self.sql.scalar("SELECT COUNT(*) FROM feedback", default=0))

    def event_range(self) -> tuple[Any, Any]:
        """(least, greatest) recorded_at of the log's rows (malformed ones included)."""
        got = self.sql.one("SELECT MIN(recorded_at), MAX(recorded_at) FROM feedback")
        return (got[0], got[1]) if got is not None else (None, None)

    def events_at(self, recorded_at: str, last: bool) -> list[Any]:
        """Up to `LAST` rows (id, at, weight, recorded_at) recorded at `recorded_at`."""
        way = "DESC" if last else "ASC"
        return self.sql.all(
            "SELECT id, at, weight, recorded_at FROM feedback WHERE recorded_at = ? "
            f"ORDER BY id {way} LIMIT {LAST}",
            (recorded_at,),
        )

    def event_end(self, last: bool, after: tuple[str, int] | None = None) -> list[Any]:
        """Up to `LAST` rows (id, at, weight, recorded_at) from the start of the log in
        (recorded_at, id) order, or from its end backwards (`last`), past `after`."""
        way, past = ("DESC", "<") if last else ("ASC", ">")
        where = f" WHERE (recorded_at, id) {past} (?, ?)" if after is not None else ""
        return self.sql.all(
            f"SELECT id, at, weight, recorded_at FROM feedback{where} "
            f"ORDER BY recorded_at {way}, id {way} LIMIT {LAST}",
            after or (),
        )

    def event_pages(self, size: int) -> Iterator[tuple[tuple[Any, ...], ...]]:
        """The feedback log in (recorded_at, id) order, `size` rows at a time, each page as
        columns (`EVENT_COLUMNS`). Read inside `snapshot()`."""
        if str(self.sql.dialect) == "postgresql":
            yield from self._cursor_pages(size)
            return
        rows = iter(self.sql.execute(_EVENTS))
        while True:
            page = [row for _, row in zip(range(size), rows, strict=False)]
            if not page:
                return
            yield tuple(zip(*page, strict=True))

    def _cursor_pages(self, size: int) -> Iterator[tuple[tuple[Any, ...], ...]]:
        ex = self.sql
        ex.execute(f"DECLARE {_CURSOR} NO SCROLL CURSOR FOR {_EVENTS}")
        try:
            while True:
                page = ex.all(f"FETCH FORWARD {int(size)} FROM {_CURSOR}")
                if not page:
                    return
                yield tuple(zip(*page, strict=True))
        finally:
            ex.execute(f"CLOSE {_CURSOR}")

    def vocab(self) -> list[str]:
        """Every token of the recall vocabulary."""
        return [str(t) for t in self.sql.column("SELECT token FROM vocab ORDER BY token")]

    def postings(self, table: str, size: int = PAGE) -> Iterator[list[tuple[str, int]]]:
        """(token, seq) of `bullet_tokens` or (tag, seq) of `bullet_tags`, in that order, a
        page at a time (keyset paging on the table's key)."""
        key = _POSTINGS[table]
        select = f"SELECT {key}, seq FROM {table}"
        order = f" ORDER BY {key}, seq LIMIT {int(size)}"
        page = self.sql.all(select + order)
        while page:
            yield [(str(t), int(s)) for t, s in page]
            last = page[-1]
            page = self.sql.all(f"{select} WHERE ({key}, seq) > (?, ?){order}", tuple(last))
