"""The catalog of a PostgreSQL playbook (its indexes, constraints and triggers), to compare
one written in bulk with one made anew."""

from __future__ import annotations

from playbook.store import open_store
from playbook.store import testing as raw

from . import pg as pg_support

# Every index, constraint (with its validity) and trigger of the playbook's schema.
CATALOG = """
SELECT 'index', c.relname, i.relname, pg_get_indexdef(x.indexrelid)
FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
WHERE c.relnamespace = to_regnamespace(current_schema())
UNION ALL
SELECT 'constraint', c.relname, k.conname,
       pg_get_constraintdef(k.oid) || CASE WHEN k.convalidated THEN '' ELSE ' (not valid)' END
FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
WHERE c.relnamespace = to_regnamespace(current_schema())
UNION ALL
SELECT 'trigger', c.relname, t.tgname, pg_get_triggerdef(t.oid) || ' ' || t.tgenabled::text
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
WHERE c.relnamespace = to_regnamespace(current_schema()) AND NOT t.tgisinternal
ORDER BY 1, 2, 3
"""


def catalog(target: str) -> list[tuple[str, ...]]:
    """`CATALOG` of the playbook at `target`, its schema's name taken out of the text."""
    with open_store(target, mode="read") as store:
        schema = raw.value(store, "SELECT current_schema()")
        return [
            tuple(str(v).replace(f"{schema}.", "") for v in row) for row in raw.rows(store, CATALOG)
        ]


def fresh(pg_server: str, worker_id: str) -> str:
    """A playbook made anew on the test server (what a copy's destination must equal)."""
    url = pg_support.fresh_target(pg_server, worker_id)
    with open_store(url):
        pass
    return url
