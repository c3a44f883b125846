"""Loading millions of rows into a PostgreSQL playbook's tables (a copy, a generated year):
what the tables keep up row by row is made again once the rows are in.

    remake = set_aside(ex, tables)   # in the write transaction, before the rows
    ... COPY the rows ...
    make_again(ex, remake)           # in the same transaction, after them

A row `COPY`ed into a table with its indexes and foreign keys in place costs the server an
insertion into every index (the log's `(bullet_id, id)` index at a random place) and a
lookup of each key it references (a query per row): 25-35 µs a row against 2.5 without
them. Made after the rows are in, an index is one sort, a foreign key one join.

The checks stay in place. A check costs the same per row during the `COPY` as in a scan
afterwards (the timestamp rule's regular expression is 3 µs a value, 30M values in a
team's year), but during the `COPY` the server checks rows while the client reads and
sends the next ones, on the other core; made again afterwards, every check is one more
read of the table while the client waits (in a copy of the team-year, 135 s of 313).

`set_aside` drops the tables' indexes that back no constraint (a primary key or unique
constraint stays: foreign keys point at them, and an identity's next value follows
them) and their foreign keys, and returns the statements that make each again as the
catalog defined it (`pg_get_indexdef`, `pg_get_constraintdef`: the same names,
definitions and validity). Everything happens inside the caller's transaction: rolled
back, the tables are as they were, indexes and constraints included; committed, the
foreign keys were made again over every row, so a row that breaks one fails the load,
as it would have failed its insertion.

Only the tables' owner may drop and make them (`may_set_aside`); a role that does not own
them loads the rows with everything in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .statements import quoted

MAINTENANCE_MEMORY = "512MB"  # for the sorts that build the indexes (the default is 64 MB)

_OWNED = """
SELECT COALESCE(bool_and(pg_has_role(current_user, c.relowner, 'USAGE')), false)
FROM pg_catalog.pg_class c
WHERE c.relnamespace = to_regnamespace(?) AND c.relkind = 'r' AND c.relname = ANY(?)
"""
# The tables' indexes that back no constraint of their own table.
_INDEXES = """
SELECT c.relname, i.relname, pg_catalog.pg_get_indexdef(x.indexrelid)
FROM pg_catalog.pg_index x
JOIN pg_catalog.pg_class c ON c.oid = x.indrelid
JOIN pg_catalog.pg_class i ON i.oid = x.indexrelid
WHERE c.relnamespace = to_regnamespace(?) AND c.relname = ANY(?)
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k
                  WHERE k.conrelid = x.indrelid AND k.conindid = x.indexrelid)
ORDER BY c.relname, i.relname
"""
# The tables' foreign keys.
_FOREIGN_KEYS = """
SELECT c.relname, k.conname, pg_catalog.pg_get_constraintdef(k.oid)
FROM pg_catalog.pg_constraint k
JOIN pg_catalog.pg_class c ON c.oid = k.conrelid
WHERE c.relnamespace = to_regnamespace(?) AND c.relname = ANY(?) AND k.contype = 'f'
ORDER BY c.relname, k.conname
"""


def may_set_aside(ex: Any, tables: Sequence[str]) -> bool:
    """Whether the connection's role owns every one of `tables` (and so may drop and make
    their indexes and constraints)."""
    return bool(ex.scalar(_OWNED, (ex.schema, list(tables)), default=False))


def set_aside(ex: Any, tables: Sequence[str], *, indexes: bool = True) -> list[str]:
    """Drop the indexes and foreign keys of `tables` that a row written costs the server
    (see the module's docstring); the statements that make them again, in the order to
    run them. Inside the caller's write transaction. `indexes=False` keeps the indexes
    (for a writer that reads the tables while it loads them)."""
    names = list(tables)
    dropped = ex.all(_INDEXES, (ex.schema, names)) if indexes else []
    keys = ex.all(_FOREIGN_KEYS, (ex.schema, names))
    remake = [definition for _, _, definition in dropped]
    added: dict[str, list[str]] = {}
    for table, name, definition in keys:
        added.setdefault(table, []).append(f"ADD CONSTRAINT {quoted(name)} {definition}")
    schema = quoted(ex.schema)
    remake += [f"ALTER TABLE {schema}.{quoted(t)} {', '.join(a)}" for t, a in added.items()]
    # Foreign keys first (one may rest on an index that is not a constraint), then indexes.
    for table, name, _ in keys:
        ex.execute(f"ALTER TABLE {schema}.{quoted(table)} DROP CONSTRAINT {quoted(name)}")
    for _, name, _ in dropped:
        ex.execute(f"DROP INDEX {schema}.{quoted(name)}")
    return remake


def make_again(ex: Any, remake: Sequence[str]) -> None:
    """Run what `set_aside` returned: the indexes built with room for their sorts, then
    the foreign keys (each checked by one join)."""
    if not remake:
        return
    ex.execute(f"SET LOCAL maintenance_work_mem = '{MAINTENANCE_MEMORY}'")
    for statement in remake:
        ex.execute(statement)
