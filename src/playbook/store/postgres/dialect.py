"""PostgreSQL's errors in Playbook's terms: psycopg exceptions, by SQLSTATE, as the
`playbook.core.errors` types the SQLite backend raises for the same situations. (The SQL
fragments that differ are `store.dialect.POSTGRESQL`.)"""

from __future__ import annotations

import sys
from typing import Any

from ...core import errors

# SQLSTATE (or its class, the first two characters) -> the Playbook error for it.
_BUSY = {"40001", "40P01", "55P03", "57014"}  # serialization, deadlock, lock timeout, cancel
_READ_ONLY = {"25006"}  # read_only_sql_transaction
_DENIED = {"42501"}  # insufficient_privilege (grants, and the agent guard's refusals)
_DAMAGED = {"XX001", "XX002"}  # data_corrupted, index_corrupted
_FULL = {"53100"}  # disk_full
_CONSTRAINT_CLASS = "23"  # integrity_constraint_violation, and the append-only trigger
_NO_DATABASE = {"3D000"}  # invalid_catalog_name: the database does not exist
_TOO_LARGE = {"22003"}  # numeric_value_out_of_range: a parameter beyond a bigint
_CANNOT_CONNECT_CLASSES = {"08", "28"}  # connection exceptions, invalid authorization


def translate(exc: BaseException, label: str) -> errors.PlaybookError | None:
    """The Playbook error for a psycopg error met on `label` (a URL without its password),
    or None when it is not a database error (a bug in the caller)."""
    kind = _kind(exc)
    if kind is None or kind == "interface":
        return None
    state = getattr(exc, "sqlstate", None) or ""
    detail = _first_line(exc)
    where = label or "the database"
    if state in _BUSY:
        return errors.DatabaseBusy(f"{where}: {detail}")
    if state in _READ_ONLY:
        return errors.ReadOnlyPlaybook(f"the playbook at {where} is read-only ({detail})")
    if state in _DENIED:
        return errors.PermissionDenied(f"the database refused: {detail}")
    if state in _DAMAGED:
        return errors.DatabaseDamaged(f"the playbook at {where} is damaged ({detail})")
    if state in _FULL:
        return errors.DiskFull(f"the database server's disk is full ({detail})")
    if state.startswith(_CONSTRAINT_CLASS):
        return errors.ConstraintError(detail)
    if state in _TOO_LARGE:
        return errors.InvalidInput(f"a number too large to use ({detail})")
    if state in _NO_DATABASE:
        return errors.NoDatabase(f"no database at {where} ({detail})")
    if not state and kind == "data":  # refused before it was sent
        if "NUL" in detail:  # the words SQLite's executor uses for the same refusal
            return errors.InvalidInput("text with a NUL character (\\x00) cannot be stored")
        return errors.InvalidInput(f"PostgreSQL cannot store this value: {detail}")
    if state[:2] in _CANNOT_CONNECT_CLASSES or (not state and kind == "operational"):
        return errors.CannotOpen(f"cannot connect to {where}: {detail}")
    return errors.DatabaseError(f"database error: {detail}")


def driver_error(exc: BaseException) -> errors.PlaybookError | None:
    """The Playbook error for a psycopg (or light connection's) exception that escaped the
    store, or None (neither is imported for this: if it is not loaded, the exception is
    not one of its)."""
    return translate(exc, "")


def _kind(exc: BaseException) -> str | None:
    """ "data", "operational", "interface" or "database" for a driver's error (psycopg's
    classes, or a light connection's `kind`: `light.py`); None for anything else."""
    light = sys.modules.get(f"{__package__}.light")  # not imported: not one of its errors
    if light is not None and isinstance(exc, light.LightError):
        return str(exc.kind)
    psycopg = sys.modules.get("psycopg")  # not imported: not one of its errors
    if psycopg is None or not isinstance(exc, psycopg.Error):
        return None
    for name in ("DataError", "OperationalError", "InterfaceError"):
        if isinstance(exc, getattr(psycopg, name)):
            return name[: -len("Error")].lower()
    return "database"


def _first_line(exc: Any) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
