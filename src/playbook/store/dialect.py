"""The SQL that differs between the two backends, as one small object per backend.

The store writes plain SQL with `?` parameters that both SQLite and PostgreSQL accept; the
few places where they disagree read a fragment from the executor's dialect
(`store.sql.dialect`), so that no module of the store asks which database it is on:

* `in_list(column)`  — `column` is one of a list bound as a single parameter
                       (`list_param(items)`): SQLite's `json_each`, PostgreSQL's `= ANY`;
* `contains(column)` — `column` contains the parameter as a substring (`instr`/`strpos`);
* `same`             — equality that also matches NULL to NULL (`IS` / `IS NOT DISTINCT FROM`);
* `table_exists`     — a row when the table named by the parameter exists (in the playbook's
                       schema, on PostgreSQL).

Upserts (`INSERT ... ON CONFLICT`), `RETURNING`-free inserts (`Executor.insert`) and the
order columns (`seq`) are written once for both.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ..core.record import FrozenRecord


class Dialect(FrozenRecord):
    name: str  # "sqlite" or "postgresql"
    table_exists: str
    same: str
    _in_list: str  # formatted with {column}
    _contains: str  # formatted with {column}
    list_param: Callable[[Iterable[Any]], Any]

    def __init__(
        self,
        name: str,
        table_exists: str,
        same: str,
        _in_list: str,
        _contains: str,
        list_param: Callable[[Iterable[Any]], Any],
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "table_exists", table_exists)
        object.__setattr__(self, "same", same)
        object.__setattr__(self, "_in_list", _in_list)
        object.__setattr__(self, "_contains", _contains)
        object.__setattr__(self, "list_param", list_param)

    def in_list(self, column: str) -> str:
        """`column` is one of the list bound (with `list_param`) to this one parameter."""
        return self._in_list.format(column=column)

    def contains(self, column: str) -> str:
        """`column` contains the parameter as a substring."""
        return self._contains.format(column=column)

    def __eq__(self, other: object) -> bool:  # `store.sql.dialect == "sqlite"` reads well
        if isinstance(other, str):
            return self.name == other
        return isinstance(other, Dialect) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def __str__(self) -> str:
        return self.name


def _json_list(items: Iterable[Any]) -> str:
    return json.dumps(list(items))


SQLITE = Dialect(
    name="sqlite",
    table_exists="SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
    same="IS",
    _in_list="{column} IN (SELECT value FROM json_each(?))",
    _contains="instr({column}, ?) > 0",
    list_param=_json_list,
)

POSTGRESQL = Dialect(
    name="postgresql",
    table_exists=(
        "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = current_schema() AND tablename = ?"
    ),
    same="IS NOT DISTINCT FROM",
    # An array parameter: an empty list needs no type (`= ANY` takes it from the column).
    _in_list="{column} = ANY(?)",
    _contains="strpos({column}, ?) > 0",
    list_param=list,
)
