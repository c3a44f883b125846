"""libpq itself, for the light connection (`light.py`): where it is, its functions typed
for ctypes, and its reading of a connection string.

The libpq psycopg's binary wheel brings (`psycopg_binary.libs`, found without importing
psycopg) is preferred, since it is the one psycopg itself would use; else the system's
`libpq.so.5`. A libpq older than 14 (no pipeline mode) is not used.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from contextlib import suppress
from ctypes import POINTER, c_char_p, c_int, c_uint, c_void_p
from functools import lru_cache
from typing import Any


def _library_paths() -> list[str]:
    """psycopg-binary's own libpq first (the one psycopg would use), then the system's."""
    found = []
    try:
        spec = importlib.util.find_spec("psycopg_binary")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        site = os.path.dirname(next(iter(spec.submodule_search_locations)))
        libs = os.path.join(site, "psycopg_binary.libs")
        with suppress(OSError):
            found += sorted(
                os.path.join(libs, n) for n in os.listdir(libs) if n.startswith("libpq")
            )
    return [*found, "libpq.so.5"]


@lru_cache(maxsize=1)
def library() -> Any:
    """libpq, its functions typed; None when none loads (or lacks pipeline mode: < 14)."""
    for path in _library_paths():
        try:
            pq = ctypes.CDLL(path)
            pq.PQenterPipelineMode  # noqa: B018  (libpq 14 or later)
        except (OSError, AttributeError):
            continue
        conn, res, text, strings = c_void_p, c_void_p, c_char_p, POINTER(c_char_p)
        params = [
            conn,
            text,
            c_int,
            POINTER(c_uint),
            strings,
            POINTER(c_int),
            POINTER(c_int),
            c_int,
        ]
        for name, args, result in (
            ("PQconnectdbParams", [strings, strings, c_int], conn),
            ("PQstatus", [conn], c_int),
            ("PQerrorMessage", [conn], text),
            ("PQfinish", [conn], None),
            ("PQtransactionStatus", [conn], c_int),
            ("PQexec", [conn, text], res),
            ("PQexecParams", params, res),
            ("PQsendQueryParams", params, c_int),
            ("PQenterPipelineMode", [conn], c_int),
            ("PQexitPipelineMode", [conn], c_int),
            ("PQpipelineSync", [conn], c_int),
            ("PQgetResult", [conn], res),
            ("PQresultStatus", [res], c_int),
            ("PQresultErrorMessage", [res], text),
            ("PQresultErrorField", [res, c_int], text),
            ("PQntuples", [res], c_int),
            ("PQnfields", [res], c_int),
            ("PQftype", [res, c_int], c_uint),
            ("PQgetvalue", [res, c_int, c_int], text),
            ("PQgetisnull", [res, c_int, c_int], c_int),
            ("PQcmdTuples", [res], text),
            ("PQclear", [res], None),
            ("PQsetNoticeProcessor", [conn, c_void_p, c_void_p], c_void_p),
            ("PQconninfoParse", [text, POINTER(c_char_p)], POINTER(_Option)),
            ("PQconninfoFree", [POINTER(_Option)], None),
            ("PQfreemem", [c_void_p], None),
        ):
            fn = getattr(pq, name)
            fn.argtypes, fn.restype = args, result
        # A result's cells are read one call each: these two without `argtypes`, which
        # ctypes would apply at every call (a third of the call's cost), given a
        # `c_void_p` for the result and plain ints.
        for attr, name, result in (
            ("cell", "PQgetvalue", c_char_p),
            ("is_null", "PQgetisnull", c_int),
        ):
            fn = pq._FuncPtr((name, pq))
            fn.restype = result
            setattr(pq, attr, fn)
        return pq
    return None


# The server's notices (a NOTICE or WARNING a statement raised): libpq prints them on
# stderr unless told otherwise; psycopg passes them to handlers a program adds, and with
# none (Playbook adds none) they go nowhere. So here.
_NOTICE = ctypes.CFUNCTYPE(None, c_void_p, c_char_p)
SILENT = _NOTICE(lambda _arg, _message: None)


def available() -> bool:
    """Whether a libpq loads (and is recent enough) for the light connection."""
    return library() is not None


def parse_conninfo(url: str) -> dict[str, str]:
    """The keywords a connection string or URL sets (libpq's `PQconninfoParse`), as
    psycopg's `conninfo_to_dict`; ValueError with libpq's reason when it is not one.
    (An opening asks twice of one URL: the second is the first's answer.)"""
    return dict(_parsed(url))


class _Option(ctypes.Structure):
    """libpq's `PQconninfoOption`."""

    _fields_ = [
        ("keyword", c_char_p), ("envvar", c_char_p), ("compiled", c_char_p),
        ("val", c_char_p), ("label", c_char_p), ("dispchar", c_char_p), ("dispsize", c_int),
    ]  # fmt: skip


@lru_cache(maxsize=16)
def _parsed(url: str) -> tuple[tuple[str, str], ...]:
    pq = library()
    error = c_char_p()
    options = pq.PQconninfoParse(url.encode(), ctypes.byref(error))
    if not options:
        reason = (error.value or b"").decode("utf-8", "replace").strip()
        if error:
            pq.PQfreemem(ctypes.cast(error, c_void_p))
        raise ValueError(reason or "not a connection string")
    found = []
    i = 0
    while options[i].keyword:
        if options[i].val is not None:
            found.append((options[i].keyword.decode(), options[i].val.decode()))
        i += 1
    pq.PQconninfoFree(options)
    return tuple(found)
