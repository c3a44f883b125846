"""Reading one loosely typed YAML value: timestamps, text, lists, and how to show them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from .records import CassImportError

Note = Callable[..., None]  # note(text, kind=None)


class Budget:
    """Counts the items a walk visits, so a document whose YAML aliases repeat one node many
    times cannot make the walk explode. Without aliases a document of N bytes holds fewer
    than N / 2 items (each takes at least two characters), which is the budget's floor."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit

    def take(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise CassImportError(
                f"the YAML aliases (*name) in this file expand to more than {self.limit:,} "
                "items, more than its size can hold without them; refusing it"
            )


def parse_time(value: Any) -> datetime | None:
    """Aware UTC datetime from an ISO string, a YAML timestamp or a YAML date; else None."""
    try:
        if isinstance(value, datetime):
            dt = value
        elif isinstance(value, date):
            dt = datetime(value.year, value.month, value.day)
        elif isinstance(value, str) and 0 < len(value) <= 64:
            dt = datetime.fromisoformat(value.strip())
        else:
            return None
        if dt.tzinfo is None or dt.utcoffset() is None:
            return dt.replace(tzinfo=UTC)
        return dt.astimezone(UTC)
    except (ValueError, OverflowError, TypeError):
        return None


def string_list(raw: dict[Any, Any], key: str, note: Note, budget: Budget) -> list[str]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        note(f"'{key}' is {type_name(value)}, not a list; dropped", f"'{key}' is not a list")
        return []
    budget.take(len(value))
    kept = [v for v in value if isinstance(v, str) and v.strip()]
    if len(kept) != len(value):
        note(
            f"{len(value) - len(kept)} entr(ies) of '{key}' are not text; dropped",
            f"entries of '{key}' that are not text dropped",
        )
    return kept


def opt_str(raw: dict[Any, Any], key: str, note: Note) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        note(f"'{key}' is {type_name(value)}, not text; dropped", f"'{key}' is not text")
        return None
    return value if value.strip() else None


def member(value: Any, allowed: frozenset[str]) -> bool:
    """``value in allowed`` that is safe for unhashable YAML values (lists, mappings)."""
    return isinstance(value, str) and value in allowed


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def type_name(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "text", bool: "a boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    if isinstance(value, int | float):
        return "a number"
    return f"a {type(value).__name__}"


def describe(raw: dict[Any, Any], key: str) -> str:
    if key not in raw or raw[key] is None:
        return "missing"
    value = raw[key]
    return "empty" if isinstance(value, str) else f"{type_name(value)}, not text"


def show(value: Any, limit: int = 60) -> str:
    """A short, single-line rendering of a value for a human note."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, dict | list):
        text = f"<{type_name(value)}>"
    elif isinstance(value, datetime):
        text = fmt(value)
    else:
        text = str(value)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"'{text}'" if isinstance(value, str) else text


def fmt(value: datetime | None) -> str:
    return "none" if value is None else value.isoformat()
