"""Helpful and harmful deltas read without pydantic: the hot path of `playbook mark`.

A vote given as a plain dict of plain strings, naming only the fields its member of the
`PlaybookDelta` union has, with text UTF-8 can store and a known harm reason, is exactly
what the union would accept unchanged: validating it through pydantic would build the same
values at the cost of loading pydantic (tens of milliseconds for a one-shot command).
Anything else (an unknown or extra field, a value of another type, a model instance) goes
through the union, which stays the one contract for what a delta is and how a bad one is
reported. `Vote.key` and `Vote.as_dict` are what `model_dump_json()` and `delta_dict()`
give for the same delta, so a vote read either way is deduplicated and logged alike.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.origin import plain_text
from ..core.record import FrozenRecord
from ..core.terms import HARM_REASONS, DeltaType

# The fields of each evidence type (`core.terms.EVIDENCE`), as its model declares them.
_FIELDS = {
    DeltaType.HELPFUL: ("type", "bullet_id", "context"),
    DeltaType.HARMFUL: ("type", "bullet_id", "reason", "context"),
}


class Vote(FrozenRecord):
    """A helpful or harmful delta: the fields of `HelpfulDelta` / `HarmfulDelta`."""

    __slots__ = ("bullet_id", "context", "reason", "type")
    type: str
    bullet_id: str
    reason: str | None  # harmful only: one of HARM_REASONS
    context: str | None

    def __init__(
        self, type: str, bullet_id: str, reason: str | None = None, context: str | None = None
    ) -> None:
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "bullet_id", bullet_id)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "context", context)

    def _fields(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _FIELDS[self.type]}

    def key(self) -> str:
        """The delta as `model_dump_json()` writes it (compact JSON, fields in order)."""
        return json.dumps(self._fields(), ensure_ascii=False, separators=(",", ":"))

    def as_dict(self) -> dict[str, Any]:
        """The delta as `delta_dict()` gives it (None fields left out)."""
        return {k: v for k, v in self._fields().items() if v is not None}


def vote_of(item: object) -> Vote | None:
    """The vote `item` is, when the union would accept it unchanged; else None (validate
    it with `playbook.core.deltas.parse_delta`)."""
    if type(item) is not dict:
        return None
    kind = item.get("type")
    if type(kind) is not str:
        return None
    fields = _FIELDS.get(kind)
    if fields is None or not item.keys() <= set(fields):
        return None
    bullet_id = item.get("bullet_id")
    context = item.get("context")
    reason = item.get("reason")
    if not plain_text(bullet_id) or (context is not None and not plain_text(context)):
        return None
    if reason is not None and (type(reason) is not str or reason not in HARM_REASONS):
        return None
    return Vote(kind, bullet_id, reason, context)
