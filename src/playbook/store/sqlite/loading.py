"""Loading millions of rows into a SQLite playbook that nobody else writes meanwhile (a
generated year, built under a name of its own): the rules of `store/checks.py` checked
once over every row when the rows are in, instead of by a trigger at each row.

    remake = set_aside(ex)     # the rules' triggers dropped; the statements that make them
    ... the rows ...
    make_again(ex, remake)     # every row of every table checked, then the triggers made

A trigger is a program SQLite runs for each row it guards (and for each update of an
evidence row): a fifth of the time a generated year takes on SQLite. The same rules asked
of every row in one scan a table once the rows are in cost about half as much. Between
the two calls the tables are unguarded: only for a file whose one writer is the caller.

`make_again` refuses the load (`InvalidInput`, naming the rule and the row) when a row
breaks a rule, as the trigger would have refused its insertion; otherwise it makes each
trigger again as it was (the same statement), so the file keeps what the database vouches
for (`store/vouch.py`): its rules, and the rows written under them. Both run in the
caller's write transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import errors
from ..checks import RULES, sqlite_triggers
from ..vouch import sqlite_broken

if TYPE_CHECKING:
    from ..executor import Executor


def set_aside(ex: Executor) -> list[str]:
    """Drop the rules' triggers the file has; the statements that make them again."""
    ours = {statement.split()[2] for statement in sqlite_triggers()}
    remake = []
    for name, sql in ex.all("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"):
        if name in ours:
            remake.append(sql)
            ex.execute(f'DROP TRIGGER "{name}"')
    return remake


def make_again(ex: Executor, remake: list[str]) -> None:
    """Check every row of every table against the rules (a table read once), then make
    the triggers again."""
    for table, (rules, _) in RULES.items():
        flags = ", ".join(f"({r.sqlite(row='')}) IS NOT 1" for r in rules)
        row = ex.one(f"SELECT rowid, {flags} FROM {table} WHERE {sqlite_broken(rules)} LIMIT 1")
        if row is not None:
            rule = next(r for r, broken in zip(rules, row[1:], strict=True) if broken)
            raise errors.InvalidInput(
                f"malformed row: {rule.says()} (row {row[0]} of {table}); nothing was kept"
            )
    for statement in remake:
        ex.execute(statement)
