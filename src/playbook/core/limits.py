"""Bounds on every field a caller supplies (SPEC: agents are untrusted), from `Policy`.

A value over its bound is refused with a reason that names the field, its length, the
limit and the policy setting; it is never cut silently. Bad input is echoed back only as a
short prefix (`preview`), so an unknown 5 MB id costs a line, not 5 MB.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .errors import InvalidInput
from .policy import Policy

PREVIEW = 40  # characters of bad input echoed back

# What each kind of field is bounded by (the Policy setting).
SETTINGS = {
    "content": "max_content_length",
    "text": "max_text_length",
    "id": "max_id_length",
    "ref": "max_ref_length",
    "label": "max_label_length",
    "query": "max_query_length",
}


class TooLong(InvalidInput):
    """A supplied value over its bound in Policy."""


def preview(value: object, width: int = PREVIEW) -> str:
    """`value` quoted, cut to `width` characters with its full length said when longer."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= width:
        return repr(text)
    return f"{text[:width]!r}… ({len(text):,} characters)"


def problem(policy: Policy, name: str, value: Any, kind: str) -> str | None:
    """Why `value` (field `name`, of kind `kind`) is over its bound, or None."""
    if not isinstance(value, str):
        return None
    setting = SETTINGS[kind]
    limit = int(getattr(policy, setting))
    if len(value) <= limit:
        return None
    return f"{name} is {len(value):,} characters; the maximum is {limit:,} (Policy.{setting})"


def count_problem(
    policy: Policy, name: str, items: Iterable[Any] | None, setting: str
) -> str | None:
    if items is None:
        return None
    n = len(list(items))
    limit = int(getattr(policy, setting))
    if n <= limit:
        return None
    return f"{name} has {n:,} items; the maximum is {limit:,} (Policy.{setting})"


def check(policy: Policy, fields: Iterable[tuple[str, Any, str]]) -> None:
    """Raise TooLong for the first (name, value, kind) over its bound; a list value is
    checked item by item."""
    for name, value, kind in fields:
        values = value if isinstance(value, list | tuple) else [value]
        for v in values:
            reason = problem(policy, name, v, kind)
            if reason:
                raise TooLong(reason)


# The kind of bound on each text field of a delta (a list's bound holds for each item);
# `tags` also has a count, Policy.max_tags.
DELTA_FIELDS = {
    "content": "content",
    "context": "text",
    "reason": "text",
    "bullet_id": "id",
    "bullet_ids": "id",
    "tags": "label",
    "category": "label",
    "kind": "label",
    "scope_key": "label",
}


def delta_problem(policy: Policy, delta: Any) -> str | None:
    """Why a delta (parsed) has a field over its bound, or None."""
    fields = [(name, getattr(delta, name, None), kind) for name, kind in DELTA_FIELDS.items()]
    try:
        check(policy, fields)
    except TooLong as exc:
        return str(exc)
    return count_problem(policy, "tags", getattr(delta, "tags", None), "max_tags")
