"""Rows the database's checks refuse, written as a file from before the checks could hold
them: the checks dropped, the rows written, the checks back NOT VALID (as an upgraded
database has them)."""

from __future__ import annotations

from typing import Any

from playbook.store import PlaybookStore, vouch
from playbook.store import testing as raw
from playbook.store.checks import RULES, sqlite_step

GOOD_TIME = "2026-03-01T12:00:00.000000Z"


def bad_feedback(store: PlaybookStore, bid: str, **over: Any) -> None:
    row = {"bullet_id": bid, "kind": "helpful", "at": GOOD_TIME, "recorded_at": GOOD_TIME,
           "weight": 1.0} | over  # fmt: skip
    raw.run(
        store,
        f"INSERT INTO feedback ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )


def drop_checks(store: PlaybookStore, table: str) -> None:
    """What another tool could do to a file: the checks gone (PostgreSQL: as a superuser
    could); they come back NOT VALID, as an upgraded database has them."""
    rules, _ = RULES[table]
    for rule in rules:
        if store.sql.dialect == "sqlite":
            raw.run(store, f"DROP TRIGGER IF EXISTS {rule.name}")
        else:
            raw.run(store, f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {rule.name}")


def restore_checks(store: PlaybookStore, table: str) -> None:
    if store.sql.dialect == "sqlite":
        for statement in sqlite_step():
            if f" ON {table} " in statement:
                raw.run(store, statement)
        # and what an upgrade through step 5 finds there (`store/vouch.py`)
        raw.run(store, "DELETE FROM meta WHERE key = ?", (f"rules_from:{table}",))
        for statement in vouch.sqlite_step():
            if f"'rules_from:{table}'" in statement:
                raw.run(store, statement)
    else:
        for rule in RULES[table][0]:
            raw.run(
                store,
                f"ALTER TABLE {table} ADD CONSTRAINT {rule.name} CHECK {rule.postgres()} NOT VALID",
            )
