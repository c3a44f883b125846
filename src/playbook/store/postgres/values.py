"""Python values to PostgreSQL's text form and back, as psycopg 3 does it by default, for the
light connection (`light.py`), so that the store reads the same rows through either.

Parameters go with the type psycopg gives them (its `%s` "auto" dumpers): `str` as
unknown (the server casts it to what the statement needs), `int` as the smallest of
int2 / int4 / int8 / numeric that holds it, `float` as float8, `bool` as bool, `bytes` as
bytea, a `list` as an array of its items' type (of the largest `int` among them; of
unknown for strings, or when empty). Results come back in text form and are read by the
column's type: integers as `int`, float4 / float8 as `float`, numeric as `Decimal`, bool,
the text types as `str`, bytea as `bytes`, json / jsonb parsed, and one-dimensional arrays
of those as lists. Any other type, or parameter, is refused (`Unsupported`): the light
connection serves a known set of statements (`mark`, `recall`, the hooks), and a type
read differently from psycopg would be a silent difference in what the store computes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

INT2, INT4, INT8, NUMERIC, FLOAT8 = 21, 23, 20, 1700, 701
BOOL, BYTEA = 16, 17
ARRAY_OF = {INT2: 1005, INT4: 1007, INT8: 1016, NUMERIC: 1231, FLOAT8: 1022, BOOL: 1000}


class Unsupported(TypeError):
    """A parameter or a column type the light connection does not read as psycopg does."""


def _int_type(n: int) -> int:
    if -(2**15) <= n < 2**15:
        return INT2
    if -(2**31) <= n < 2**31:
        return INT4
    return INT8 if -(2**63) <= n < 2**63 else NUMERIC


def _float_text(x: float) -> bytes:
    if math.isnan(x):
        return b"NaN"
    if math.isinf(x):
        return b"Infinity" if x > 0 else b"-Infinity"
    return repr(x).encode()


def _text(s: str) -> bytes:
    if "\x00" in s:  # psycopg's own refusal, in its words (`dialect.translate` reads them)
        raise ValueError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
    return s.encode()


def dump(value: Any) -> tuple[int, bytes | None]:
    """(the parameter's type OID, 0 for unknown; its text form, None for NULL)."""
    if value is None:
        return 0, None
    kind = type(value)
    if kind is str:
        return 0, _text(value)
    if kind is bool:
        return BOOL, b"t" if value else b"f"
    if kind is int:
        return _int_type(value), str(value).encode()
    if kind is float:
        return FLOAT8, _float_text(value)
    if kind in (bytes, bytearray, memoryview):
        return BYTEA, b"\\x" + bytes(value).hex().encode()
    if kind is list:
        return _dump_list(value)
    raise Unsupported(f"the light connection does not send {kind.__name__} values")


def _dump_list(items: list[Any]) -> tuple[int, bytes]:
    present = [v for v in items if v is not None]
    kinds = {type(v) for v in present}
    if len(kinds) > 1 or kinds - {str, int, float, bool}:
        raise Unsupported(f"the light connection does not send a list of {sorted(map(str, kinds))}")
    if not kinds or kinds == {str}:
        oid = 0
    elif kinds == {int}:
        top, low = max(present), min(present)
        oid = ARRAY_OF[_int_type(top if low >= 0 else max(top, -low - 1))]
    else:
        oid = ARRAY_OF[dump(present[0])[0]]
    parts = []
    for v in items:
        if v is None:
            parts.append(b"NULL")
        elif type(v) is str:
            parts.append(b'"' + _text(v).replace(b"\\", b"\\\\").replace(b'"', b'\\"') + b'"')
        else:
            parts.append(dump(v)[1] or b"NULL")
    return oid, b"{" + b",".join(parts) + b"}"


def dump_all(params: Sequence[Any]) -> tuple[list[int], list[bytes | None]]:
    oids, texts = [], []
    for value in params:
        oid, text = dump(value)
        oids.append(oid)
        texts.append(text)
    return oids, texts


# ------------------------------------------------------------------- results
def _bool(b: bytes) -> bool:
    return b == b"t"


def _str(b: bytes) -> str:
    return b.decode()


def _bytea(b: bytes) -> bytes:
    if b.startswith(b"\\x"):
        return bytes.fromhex(b[2:].decode())
    raise Unsupported("bytea in escape format (the server's bytea_output is not 'hex')")


def _json(b: bytes) -> Any:
    return json.loads(b)


def _float(b: bytes) -> float:
    return float(b)


def _decimal(b: bytes) -> Decimal:
    return Decimal(b.decode())


_SCALAR: dict[int, Callable[[bytes], Any]] = {
    INT2: int, INT4: int, INT8: int, 26: int,  # oid
    700: _float, FLOAT8: _float, NUMERIC: _decimal, BOOL: _bool,
    25: _str, 1043: _str, 1042: _str, 19: _str, 18: _str, 705: _str, 0: _str,  # the text types
    2278: _str, 2205: _str,  # void, regclass: psycopg has no loader for them: text
    BYTEA: _bytea, 114: _json, 3802: _json,
}  # fmt: skip
_ARRAYS = {1005: INT2, 1007: INT4, 1016: INT8, 1231: NUMERIC, 1021: 700, 1022: FLOAT8,
           1000: BOOL, 1009: 25, 1015: 1043, 1014: 1042, 1003: 19}  # fmt: skip


def loader(oid: int) -> Callable[[bytes], Any]:
    """How a column of type `oid` is read from its text form."""
    scalar = _SCALAR.get(oid)
    if scalar is not None:
        return scalar
    item = _ARRAYS.get(oid)
    if item is not None:
        load = _SCALAR[item]
        return lambda b: parse_array(b, load)
    raise Unsupported(f"the light connection does not read values of type OID {oid}")


def parse_array(text: bytes, load: Callable[[bytes], Any]) -> list[Any]:
    """A one-dimensional array's text form (`{1,2,NULL}`, `{"a b","c\\"d"}`) as a list."""
    s = text.decode()
    if not (s.startswith("{") and s.endswith("}")) or s.startswith("{{"):
        raise Unsupported(f"an array the light connection does not read: {s[:40]!r}")
    out: list[Any] = []
    i, n = 1, len(s) - 1
    while i < n:
        if s[i] == '"':
            j, chars = i + 1, []
            while s[j] != '"':
                if s[j] == "\\":
                    j += 1
                chars.append(s[j])
                j += 1
            out.append(load("".join(chars).encode()))
            i = j + 1
        else:
            j = s.find(",", i)
            j = n if j == -1 else j
            word = s[i:j].strip()
            out.append(None if word == "NULL" else load(word.encode()))
            i = j
        i += 1  # the comma
    return out
