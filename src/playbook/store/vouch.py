"""What the database vouches for: the rows `doctor` need not read again (schema step 5).

Step 3 gave the database the rules of `store/checks.py`: SQLite a trigger per rule,
PostgreSQL a `CHECK` constraint per rule, added `NOT VALID` (the rows already there were
not read). A row written since keeps every rule; a row from before may not. Step 5 reads
each table once, at the upgrade, and records what it found:

- SQLite: `meta` gets, per table, the last rowid that may break a rule (`RULES_FROM`):
  "0" when none does (every row read and found good; a new playbook's tables are empty),
  else the table's last rowid at the upgrade (those rows are read by every `doctor`,
  which names the bad ones). Rows after it were written under the triggers, while every
  trigger is there as step 3 made it (`sqlite_guarded`): one dropped or changed makes
  `doctor` read its table whole, as `doctor --full` reads every table.
- PostgreSQL: each rule constraint is validated (the server reads the table and marks
  the constraint valid); one a stored row breaks stays `NOT VALID`, and `doctor` reads
  its table (`postgres_vouched`).

On a team's year that is 10M events `doctor` no longer reads at every run (117 s of its
180 s on SQLite, most of its 197 s on PostgreSQL, at a load of 20).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .checks import RULES, Rule, all_rules, sqlite_triggers

if TYPE_CHECKING:
    from .executor import Executor

RULES_FROM = "rules_from:"  # meta key prefix: a table's last rowid that may break a rule


def sqlite_step() -> tuple[str, ...]:
    """Schema step 5 for SQLite: each table read once; where it holds no row that breaks a
    rule, "0", else its last rowid (kept if a mark is there already)."""
    return tuple(
        f"INSERT OR IGNORE INTO meta (key, value) SELECT '{RULES_FROM}{table}', "
        f"CASE WHEN EXISTS (SELECT 1 FROM {table} WHERE {sqlite_broken(rules)}) "
        f"THEN CAST(COALESCE(MAX(rowid), 0) AS TEXT) ELSE '0' END FROM {table}"
        for table, (rules, _) in RULES.items()
    )


def sqlite_broken(rules: tuple[Rule, ...]) -> str:
    """SQL: a row breaks one of `rules` (a condition on the row's own columns)."""
    return " OR ".join(f"({r.sqlite(row='')}) IS NOT 1" for r in rules)


def postgres_step() -> tuple[str, ...]:
    """Schema step 5 for PostgreSQL: each rule constraint validated; one that a stored row
    breaks (or that is gone) is left as it is."""
    return tuple(
        f"DO $$ BEGIN ALTER TABLE {rule.table} VALIDATE CONSTRAINT {rule.name}; "
        "EXCEPTION WHEN check_violation OR undefined_object THEN NULL; END $$"
        for rule in all_rules()
    )


def postgres_vouched() -> str:
    """SQL: the names of the rule constraints of the connection's schema that PostgreSQL
    has validated (every row keeps them: it checked the rows there when it validated, and
    checks every row written since)."""
    return (
        "SELECT conname FROM pg_constraint WHERE contype = 'c' AND convalidated "
        "AND connamespace = to_regnamespace(current_schema())"
    )


def sqlite_guarded(triggers: dict[str, str], marks: dict[str, str]) -> dict[str, int]:
    """Per table, the last rowid that may break a rule: the rows after it were written under
    the rules' triggers. From the triggers the file has now (name -> SQL, as
    `sqlite_master` holds them) and the meta keys `RULES_FROM*` (key -> value). A table
    missing from the answer must be read whole: step 5 has not run, or one of its
    triggers is gone or is not ours."""
    ours: dict[str, list[tuple[str, str]]] = {}
    for statement in sqlite_triggers():
        name, table = statement.split()[2], statement.split(" ON ", 1)[1].split()[0]
        ours.setdefault(table, []).append((name, statement))
    out: dict[str, int] = {}
    for table, made in ours.items():
        mark = marks.get(RULES_FROM + table)
        if mark is None or not mark.isdigit():
            continue
        if all(triggers.get(name) == statement for name, statement in made):
            out[table] = int(mark)
    return out


def vouched_tables(ex: Executor) -> set[str]:
    """The tables of which the database vouches for every row (each keeps every rule of
    `store/checks.py`): on SQLite, step 5 found none that broke one and every trigger is
    there since; on PostgreSQL, it has validated each of the table's constraints. A
    reader that passes rows on whole (a copy) need not check those again."""
    if str(ex.dialect) == "sqlite":
        return {table for table, last in sqlite_guarded_in(ex).items() if last == 0}
    valid = set(ex.column(postgres_vouched()))
    return {table for table, (rules, _) in RULES.items() if all(r.name in valid for r in rules)}


def sqlite_guarded_in(ex: Executor) -> dict[str, int]:
    """`sqlite_guarded` for the file `ex` is open on."""
    triggers = dict(ex.all("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))
    marks = dict(ex.all("SELECT key, value FROM meta WHERE key LIKE ?", (RULES_FROM + "%",)))
    return sqlite_guarded(triggers, marks)
