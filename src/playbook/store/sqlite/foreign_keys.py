"""`PRAGMA foreign_key_check`'s answer, found from each key's distinct values.

The pragma looks every child row's parent up: on a team's year, 10M feedback events each
looked up among the rules (22 s at a load of 20, most of `doctor`'s check). A child key
that has an index (every one of Playbook's has) gives its distinct values by skipping
through it (SQLite's skip-ahead DISTINCT): a few hundred thousand at most, each looked up
once; only the rows of a key that has no parent are then read. A key of several columns
is left to the pragma, table by table.
"""

from __future__ import annotations

import sqlite3
from typing import Any


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def foreign_key_problems(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """(table, rowid, parent table, foreign key id) of every row whose key names no parent
    row: the rows of `PRAGMA foreign_key_check`, in its order (table, then rowid)."""
    out: list[tuple[Any, ...]] = []
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for child in tables:
        keys: dict[int, list[tuple[str, str, str | None]]] = {}
        for fk_id, _seq, parent, column, to, *_ in conn.execute(
            f"PRAGMA foreign_key_list({_quoted(child)})"
        ):
            keys.setdefault(fk_id, []).append((parent, column, to))
        found: list[tuple[Any, ...]] = []
        for fk_id, columns in keys.items():
            if len(columns) != 1:  # several columns: the pragma, for this table
                found += [
                    tuple(r)
                    for r in conn.execute(f"PRAGMA foreign_key_check({_quoted(child)})")
                    if r[3] == fk_id
                ]
                continue
            parent, column, to = columns[0]
            target = to or _primary_key(conn, parent)
            if target is None:  # a parent without a key: the pragma says what it says
                found += [
                    tuple(r)
                    for r in conn.execute(f"PRAGMA foreign_key_check({_quoted(child)})")
                    if r[3] == fk_id
                ]
                continue
            c, p, t = _quoted(column), _quoted(parent), _quoted(target)
            orphans = [
                r[0]
                for r in conn.execute(
                    f"SELECT k FROM (SELECT DISTINCT {c} AS k FROM {_quoted(child)}) "
                    f"WHERE k IS NOT NULL AND k NOT IN (SELECT {t} FROM {p})"
                )
            ]
            row = "rowid" if _has_rowid(conn, child) else "NULL"  # as the pragma says
            for key in orphans:
                found += [
                    (child, r[0], parent, fk_id)
                    for r in conn.execute(
                        f"SELECT {row} FROM {_quoted(child)} WHERE {c} = ?", (key,)
                    )
                ]
        out += sorted(found, key=lambda r: (r[1] or 0, r[3]))
    return out


def _has_rowid(conn: sqlite3.Connection, table: str) -> bool:
    try:
        conn.execute(f"SELECT rowid FROM {_quoted(table)} LIMIT 0")
    except sqlite3.OperationalError:  # a WITHOUT ROWID table
        return False
    return True


def _primary_key(conn: sqlite3.Connection, table: str) -> str | None:
    pk = [r[1] for r in conn.execute(f"PRAGMA table_info({_quoted(table)})") if r[5]]
    return pk[0] if len(pk) == 1 else None
