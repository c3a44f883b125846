"""`diagnose(target)`: is a playbook file sound, and if not, what can still be saved.

It runs SQLite's page check and foreign-key check, counts what each table still gives up,
names the rows that break a rule of `store/checks.py`, and says how to recover. It only
reads: the file is opened read-only, never migrated, never switched to another journal
mode (a damaged file must not be written to before it is copied). `playbook doctor` is the
command for it. On PostgreSQL (which checks its own pages and keys) it connects read-only,
reads the schema version, counts every table and looks for rows that break a rule (in
the tables whose rules it has not validated as constraints).
Rows the database vouches for are not read again (`store/vouch.py`); `--full` reads all.

The page check is `PRAGMA quick_check`: one pass over the file reading each page once
(O(N)), finding what `integrity_check` finds (out-of-order records, missing or doubly used
pages, malformed records, NOT NULL and CHECK failures, an index with the wrong number of
entries) except that it does not look every row up in its indexes (a UNIQUE index's
duplicates, an index entry that names another row). That lookup is O(N log N) with random
seeks: on a 1M-event file at a load of 9, 23.5 s against the quick check's 4.4 s.
`full=True` (`doctor --full`) runs it. Rows are counted and checked by the database
(`COUNT(*)`; a `WHERE` that is the negation of the rules), so only the bad rows travel; a
file whose pages do not check is read row by row instead, to say where each table stops.
"""

from __future__ import annotations

import os
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..core import errors
from .checks import RULES
from .doctor_days import days_problems, half_life_notes, latest_checkpoints
from .interchange import ORDER
from .schema import MEMORY_LATEST, schema_version
from .target import open_executor, resolve_target
from .vouch import postgres_vouched, sqlite_guarded_in

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .executor import Executor

MAX_PROBLEMS = 50
RULES_STEP = 3  # the schema step that gave the database the rules of store/checks.py


@dataclass
class Diagnosis:
    path: str
    healthy: bool = True
    sqlite: bool = True  # the file is a SQLite database at all
    playbook: bool = True  # it holds a playbook (Playbook's schema)
    schema_version: int | None = None
    problems: list[str] = field(default_factory=list)
    readable: dict[str, int | str] = field(default_factory=dict)  # table -> rows, or why not
    recovery: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # sound, but worth doing something about

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def diagnose(
    target: str | os.PathLike[str], *, full: bool = False, policy: Policy | None = None
) -> Diagnosis:
    """Check the playbook at `target` (a path). Raises `NoDatabase` when there is no file;
    every other finding is in the returned `Diagnosis`. `full`: SQLite's whole integrity
    check (every index entry looked up) instead of its quick one. `policy`: the one the
    playbook is read with (None: the defaults); the rules whose evidence is kept at another
    half-life than it gives them are noted (`doctor --fix` folds them again)."""
    where = resolve_target(target)
    report = Diagnosis(path=str(where))
    malformed: list[str] = []
    days: list[str] = []
    try:
        ex = open_executor(where, "read")
    except errors.DatabaseDamaged as exc:
        report.problems.append(f"its schema cannot be read: {exc}")
        return _damaged(report)
    except errors.DatabaseOpenError as exc:
        report.healthy = report.sqlite = report.playbook = False
        report.problems.append(str(exc))
        report.recovery.append(
            "this file is not a SQLite database: check --db / $PLAYBOOK_DB, or restore the "
            "playbook from a copy"
        )
        return report
    try:
        try:
            report.schema_version = schema_version(ex)
        except errors.DatabaseDamaged as exc:
            report.problems.append(f"its schema cannot be read: {exc}")
            return _damaged(report)
        report.playbook = report.schema_version > 0
        try:
            report.problems += ex.integrity_problems(MAX_PROBLEMS, full=full)
        except errors.DatabaseError as exc:  # the check itself stopped at the damage:
            report.problems.append(str(exc))  # say which tables it is in
            report.problems += ex.damaged_tables()
        with suppress(errors.DatabaseError):  # damage that stops it is reported above
            report.problems += [
                f"row {row[1]} of {row[0]} refers to a missing row of {row[2]}"
                for row in ex.foreign_key_problems()[:MAX_PROBLEMS]
            ]
        if report.playbook:
            sound = not report.problems  # every page checked: a count is what a read gets
            for table in ORDER:
                report.readable[table] = _counted(ex, table) if sound else _read(ex, table)
            malformed = _malformed_rows(ex, report.schema_version, full=full)
            if sound and not malformed:
                latest = latest_checkpoints(ex, report.schema_version)
                days = days_problems(
                    ex, report.schema_version, MAX_PROBLEMS, full=full, latest=latest
                )
                report.notes += half_life_notes(ex, policy, latest)
    finally:
        ex.close()
    if report.problems:
        return _damaged(report)
    if report.playbook and malformed:
        report.healthy = False
        report.problems += malformed
        report.recovery.append(
            "every reader skips these rows (as if they were not there) and says so; they were "
            "written before the database refused such rows, or behind its back. To be rid of "
            "them: export (they are left out, with a note) and import into a new playbook"
        )
    if days:
        report.healthy = False
        report.problems += days
        report.recovery.append(
            "the evidence cache's days (what time travel reads) disagree with the feedback "
            "log, which is intact: export and import into a new playbook rebuilds them"
        )
    if not report.playbook:
        report.healthy = False
        report.recovery.append(
            "the file is a sound SQLite database but holds no playbook: 'playbook init' adds one"
        )
    elif report.schema_version is not None and report.schema_version > MEMORY_LATEST:
        report.recovery.append(
            f"written by a newer Playbook; to use it, {errors.SchemaTooNewError.hint}"
        )
    return report


def _malformed_rows(ex: Executor, version: int, *, full: bool = False) -> list[str]:
    """One line per row that breaks a rule of `store/checks.py` (its key, the rule and the
    value), at most MAX_PROBLEMS. The database finds the rows (a row whose rule is not
    true: false or NULL), the rule in Python says which value and why. A PostgreSQL
    playbook older than the rules (schema step 3) has not their functions: its rows are
    read and checked in Python."""

    def preview(value: object) -> str:
        text = repr(value)
        return text if len(text) <= 40 else f"{text[:40]}… ({len(text):,} characters)"

    sqlite = str(ex.dialect) == "sqlite"
    in_sql = sqlite or version >= RULES_STEP
    # The database keeps the rules: PostgreSQL as CHECK constraints (a table whose every
    # rule it has validated holds no row that breaks one), SQLite as triggers (the rows
    # written since they were made keep them). A team's year: 10M events not read again.
    # (`full`: every row read again, whatever the database vouches for)
    vouched = set() if sqlite or not in_sql or full else set(ex.column(postgres_vouched()))
    before = sqlite_guarded_in(ex) if sqlite and not full else {}
    out: list[str] = []
    for table, (rules, key) in RULES.items():
        if all(r.name in vouched for r in rules):
            continue
        columns = ", ".join(r.column for r in rules)
        broken = " OR ".join(
            f"({r.sqlite(row='')}) IS NOT 1" if sqlite else f"({r.postgres()}) IS NOT TRUE"
            for r in rules
        )
        if table in before:
            broken = f"rowid <= {before[table]} AND ({broken})"
        where = f" WHERE {broken}" if in_sql else ""
        limit = f" LIMIT {MAX_PROBLEMS}" if in_sql else ""
        try:
            for row in ex.execute(f"SELECT {key}, {columns} FROM {table}{where} ORDER BY 1{limit}"):
                for rule, value in zip(rules, row[1:], strict=True):
                    if not rule.ok(value):
                        out.append(
                            f"{table} row {preview(row[0])}: {rule.says()}, not {preview(value)}"
                        )
                if len(out) >= MAX_PROBLEMS:
                    return out[:MAX_PROBLEMS]
        except errors.DatabaseError:  # a damaged table: reported by the checks above
            continue
    return out


def _counted(ex: Executor, table: str) -> int | str:
    """How many rows `table` holds, counted by the database (its pages checked already)."""
    try:
        return int(ex.all(f"SELECT COUNT(*) FROM {table}")[0][0])
    except errors.DatabaseError:
        return _read(ex, table)


def _read(ex: Executor, table: str) -> int | str:
    """How many rows of `table` a full read (what export does) gets, or where it stops."""
    n = 0
    try:
        for _ in ex.execute(f"SELECT * FROM {table}"):
            n += 1
    except errors.DatabaseError:
        return f"{n} rows, then a damaged page"
    return n


def _damaged(report: Diagnosis) -> Diagnosis:
    path = report.path
    report.healthy = False
    report.recovery = [
        f"copy the file first, with its -wal and -shm files if they exist (cp {path}* SOMEWHERE/)"
        ", and write nothing more to it",
        f"export what can still be read: playbook --db {path} export > rescue.json "
        "(it stops at the first damaged page it needs; the counts above show which tables "
        "still read)",
        "restore the playbook from a copy (a backup), or import the export into a new file: "
        "playbook --db NEW.sqlite3 import rescue.json",
        f"if the sqlite3 command is installed, 'sqlite3 {path} .recover' salvages the rows "
        "of damaged pages as SQL, for an expert to load into a new file",
    ]
    return report
