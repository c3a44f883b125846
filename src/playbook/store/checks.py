"""What a well-formed row is: one definition for the database's own checks (schema step 3),
for `playbook doctor`'s report and for the readers that meet an older row anyway.

One bad row in an append-only table is there for good (it can be neither fixed nor
removed), so the database refuses it on the way in, whoever writes it: a timestamp in the
store's own form (`2026-03-01T12:00:00.000000Z`, a real date from 1970 to 2999), a weight
from 0 to `MAX_WEIGHT`, finite numbers in the evidence cache, JSON where the store keeps
JSON. SQLite gets one `BEFORE INSERT` (and `UPDATE`) trigger per rule, PostgreSQL one
`CHECK` constraint per rule (added `NOT VALID`: rows already there are not re-read at the
upgrade; `doctor` names them). A reader that meets a row written before the checks
existed skips it and says so (`note_malformed`), instead of failing on it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import TypeGuard

from ..core.policy import MAX_WEIGHT
from ..core.record import FrozenRecord

FIRST_YEAR, LAST_YEAR = 1970, 2999  # the years a stored timestamp may name
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
_SQLITE_TIME_GLOB = (
    "[12][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-5][0-9]."
    "[0-9][0-9][0-9][0-9][0-9][0-9]Z"
)
_FINITE = "1.0e308"  # every finite double of interest is within +- this


def is_time(value: object) -> TypeGuard[str]:
    """Whether `value` is a timestamp as the store writes it (`records.ISO`), of a real
    date from FIRST_YEAR to LAST_YEAR."""
    return parsed_time(value) is not None


def parsed_time(value: object) -> datetime | None:
    """`value` read as a time when it is one as the store writes it (`is_time`), else None:
    the check and the reading at once (the evidence fold reads ten million of them in a
    team's year)."""
    if type(value) is not str or not _TIME.fullmatch(value):
        return None
    try:
        t = datetime.fromisoformat(value)  # a real date and time (no February 30)
    except ValueError:
        return None
    return t if FIRST_YEAR <= t.year <= LAST_YEAR else None


def is_number(value: object, low: float = -math.inf, high: float = math.inf) -> TypeGuard[float]:
    """A finite number (not a bool, not text, no subclass) from `low` to `high`."""
    if type(value) is not int and type(value) is not float:
        return False
    return math.isfinite(value) and low <= value <= high


def is_weight(value: object) -> TypeGuard[float]:
    return is_number(value, 0.0, MAX_WEIGHT)


_JSON_TYPES: dict[type, str] = {dict: "object", list: "array"}


def _json_type(value: object) -> str | None:
    if type(value) is not str:
        return None
    try:
        doc = json.loads(value)
    except ValueError:
        return None
    return _JSON_TYPES.get(type(doc), "scalar")


class Rule(FrozenRecord):
    """One column's rule: `kind` is time, weight, finite, positive, nonnegative, object
    (a JSON object), array (a JSON array) or json (any JSON)."""

    table: str
    column: str
    kind: str
    nullable: bool

    def __init__(self, table: str, column: str, kind: str, nullable: bool = False) -> None:
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "column", column)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "nullable", nullable)

    @property
    def name(self) -> str:
        return f"{self.table}_{self.column}_ok"

    def says(self) -> str:
        """What the rule asks, in words (the refusal's message, doctor's report)."""
        what = {
            "time": f"a timestamp YYYY-MM-DDTHH:MM:SS.ffffffZ from {FIRST_YEAR} to {LAST_YEAR}",
            "weight": f"a number from 0 to {MAX_WEIGHT:g}",
            "finite": "a finite number",
            "positive": "a finite number above 0",
            "nonnegative": "a finite number, 0 or more",
            "object": "a JSON object",
            "array": "a JSON array",
            "json": "JSON text",
        }[self.kind]
        return f"{self.table}.{self.column} must be {what}" + (" or NULL" if self.nullable else "")

    def ok(self, value: object) -> bool:
        """The rule, in Python (for rows read back)."""
        if value is None:
            return self.nullable
        if self.kind == "time":
            return is_time(value)
        if self.kind == "weight":
            return is_weight(value)
        if self.kind in ("finite", "positive", "nonnegative"):
            low = 0.0 if self.kind != "finite" else -math.inf
            return is_number(value, low) and (self.kind != "positive" or value != 0)
        kind = _json_type(value)
        return kind is not None and (self.kind == "json" or kind == self.kind)

    def sqlite(self, row: str = "NEW.") -> str:
        """The rule as a SQLite condition on the `row` being written (true for a good row)."""
        c = row + self.column
        if self.kind == "time":
            cond = (
                f"typeof({c}) = 'text' AND {c} GLOB '{_SQLITE_TIME_GLOB}' "
                f"AND {c} >= '{FIRST_YEAR}' AND {c} < '{LAST_YEAR + 1}' "
                f"AND substr({c}, 12, 2) < '24' "
                f"AND date(substr({c}, 1, 10), '+0 days') = substr({c}, 1, 10)"
            )
        elif self.kind in ("weight", "finite", "positive", "nonnegative"):
            low, high = {
                "weight": ("0", f"{MAX_WEIGHT:g}"),
                "finite": (f"-{_FINITE}", _FINITE),
                "positive": ("0", _FINITE),
                "nonnegative": ("0", _FINITE),
            }[self.kind]
            cond = f"typeof({c}) IN ('integer', 'real') AND {c} >= {low} AND {c} <= {high}"
            if self.kind == "positive":
                cond += f" AND {c} > 0"
        else:
            cond = f"typeof({c}) = 'text' AND json_valid({c})"
            if self.kind in ("object", "array"):
                cond += f" AND json_type({c}) = '{self.kind}'"
        return f"({c} IS NULL OR ({cond}))" if self.nullable else f"({cond})"

    def postgres(self) -> str:
        """The rule as a PostgreSQL condition (functions of schema step 3)."""
        c = self.column
        if self.kind == "time":
            cond = f"playbook_is_time({c})"
        elif self.kind == "weight":
            cond = f"{c} >= 0 AND {c} <= {MAX_WEIGHT:g}"  # NaN sorts above every number
        elif self.kind == "finite":
            cond = f"{c} >= -{_FINITE} AND {c} <= {_FINITE}"
        elif self.kind == "positive":
            cond = f"{c} > 0 AND {c} <= {_FINITE}"
        elif self.kind == "nonnegative":
            cond = f"{c} >= 0 AND {c} <= {_FINITE}"
        elif self.kind == "json":
            cond = f"playbook_json_type({c}) IS NOT NULL"
        else:  # (a function's NULL would pass a CHECK: compared so that it cannot)
            cond = f"playbook_json_type({c}) IS NOT DISTINCT FROM '{self.kind}'"
        return f"({c} IS NULL OR ({cond}))" if self.nullable else f"({c} IS NOT NULL AND {cond})"


# Every rule, by table: (the key that names a row in doctor's report, "column:kind" for
# each rule, "column:kind?" where NULL is allowed).
_SPEC = {
    "bullets": ("id", "tags:array half_life_days:positive? created_at:time valid_from:time "
                "valid_to:time? maturity_due:finite?"),
    "feedback": ("id", "at:time recorded_at:time weight:weight"),
    "receipts": ("receipt", "recorded_at:time"),
    "evidence": ("bullet_id", "half_life:positive ref:finite helpful:nonnegative "
                 "harmful:nonnegative last_at:finite"),
    "edges": ("id", "at:time"),
    "maturity_log": ("id", "at:time"),
    "watermarks": ("session_ref", "byte_offset:nonnegative updated_at:time"),
    "blocked_patterns": ("id", "created_at:time unblocked_at:time?"),
    "proposals": ("id", "delta:object created_at:time decided_at:time? edited_delta:object? "
                  "result:json?"),
    "conflicts": ("id", "created_at:time resolved_at:time?"),
    "decisions": ("id", "at:time detail:object"),
}  # fmt: skip
RULES: dict[str, tuple[tuple[Rule, ...], str]] = {
    table: (
        tuple(
            Rule(table, column, kind.rstrip("?"), kind.endswith("?"))
            for column, kind in (item.split(":") for item in spec.split())
        ),
        key,
    )
    for table, (key, spec) in _SPEC.items()
}
APPEND_ONLY = ("feedback", "receipts", "edges", "maturity_log", "decisions")


def well_formed(table: str, columns: Sequence[str], row: Sequence[object]) -> bool:
    """Whether a row of `table` read as `columns` keeps every rule on those columns; a row
    that does not is noted (`note_malformed`). For readers that pass rows on whole (an
    export, a copy): the result must be a playbook the checks accept."""
    rules, key = RULES.get(table, ((), ""))
    for rule in rules:
        if rule.column in columns and not rule.ok(row[columns.index(rule.column)]):
            note_malformed(table, row[columns.index(key)] if key in columns else None)
            return False
    return True


def all_rules() -> Iterator[Rule]:
    for rules, _ in RULES.values():
        yield from rules


def _refold(bad_event: str) -> tuple[str, ...]:
    """When the log holds a malformed event already, the evidence cache may have folded it
    (an infinite sum): empty the cache, so the next write folds the log again, without it."""
    exists = f"EXISTS (SELECT 1 FROM feedback WHERE {bad_event})"
    return (
        f"DELETE FROM evidence WHERE {exists}",
        f"UPDATE meta SET value = '0' WHERE key = 'evidence_watermark' AND {exists}",
    )


def _bad_event(condition: dict[str, str]) -> str:
    return " OR ".join(f"NOT {condition[c]}" for c in ("at", "weight"))


def sqlite_step() -> tuple[str, ...]:
    """Schema step 3 for SQLite: a trigger per rule, refusing a malformed row."""
    rules = {r.column: r.sqlite(row="") for r in RULES["feedback"][0]}
    return (*_refold(_bad_event(rules)), *sqlite_triggers())


def sqlite_triggers() -> list[str]:
    """The statements that make the rules' triggers (as SQLite keeps them in its schema)."""
    out: list[str] = []
    for rule in all_rules():
        message = f"malformed row: {rule.says()}".replace("'", "''")
        events = ["INSERT"] + ([] if rule.table in APPEND_ONLY else [f"UPDATE OF {rule.column}"])
        for event in events:
            suffix = "" if event == "INSERT" else "_update"
            out.append(
                f"CREATE TRIGGER {rule.name}{suffix} BEFORE {event} ON {rule.table} "
                f"WHEN NOT {rule.sqlite()} "
                f"BEGIN SELECT RAISE(ABORT, '{message}'); END"
            )
    return out


# The functions the PostgreSQL rules call (immutable: the same answer for the same text).
POSTGRES_FUNCTIONS = (
    f"""CREATE FUNCTION playbook_is_time(t text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN t ~ ('^[0-9]{{4}}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])'
        'T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\\.[0-9]{{6}}Z$')
    AND substr(t, 1, 4)::int BETWEEN {FIRST_YEAR} AND {LAST_YEAR}
THEN substr(t, 9, 2)::int <= CASE WHEN substr(t, 6, 2) IN ('04', '06', '09', '11') THEN 30
    WHEN substr(t, 6, 2) <> '02' THEN 31
    WHEN substr(t, 1, 4)::int % 4 = 0 AND (substr(t, 1, 4)::int % 100 <> 0
        OR substr(t, 1, 4)::int % 400 = 0) THEN 29
    ELSE 28 END
ELSE false END
$$""",
    """CREATE FUNCTION playbook_json_type(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    RETURN CASE json_typeof(t::json) WHEN 'object' THEN 'object' WHEN 'array' THEN 'array'
        ELSE 'scalar' END;
EXCEPTION WHEN others THEN
    RETURN NULL;
END
$$""",
)


def postgres_step() -> tuple[str, ...]:
    """Schema step 3 for PostgreSQL: the functions, and a CHECK per rule (NOT VALID: rows
    already stored are not re-read; `doctor` names any that break a rule)."""
    rules = {r.column: r.postgres() for r in RULES["feedback"][0]}
    return (
        POSTGRES_FUNCTIONS
        + _refold(_bad_event(rules))
        + tuple(
            f"ALTER TABLE {rule.table} ADD CONSTRAINT {rule.name} CHECK {rule.postgres()} NOT VALID"
            for rule in all_rules()
        )
    )


# ------------------------------------------------------------------ rows read anyway
_seen: dict[str, set[object]] = {}


def note_malformed(table: str, key: object) -> None:
    """A reader skipped a row of `table` that breaks a rule (written before the checks
    existed, or behind the database's back): remembered, so the command can say so."""
    _seen.setdefault(table, set()).add(key)


def malformed_seen() -> dict[str, set[object]]:
    """The rows readers skipped in this process, by table."""
    return _seen
