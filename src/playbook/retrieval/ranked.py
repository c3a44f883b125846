"""What every ranking path of recall shares: the `Ranked` row, the top of a list, and the
caller's scope (`parse_scope`, `scope_matches`). A leaf of `retrieval/`: `rank` and
`first_cut` both build on it, and neither imports the other for it.
"""

from __future__ import annotations

import heapq

from ..core.record import FrozenRecord

Scope = dict[str, str | None] | list[str] | str | None


def parse_scope(scope: Scope) -> dict[str, set[str | None]] | None:
    """The caller's scope as {kind: {keys}}; "language:python" strings or a mapping."""
    if scope is None:
        return None
    items: list[tuple[str, str | None]] = []
    if isinstance(scope, dict):
        items = [(k, v) for k, v in scope.items()]
    else:
        for text in [scope] if isinstance(scope, str) else scope:
            kind, _, key = text.partition(":")
            items.append((kind.strip(), key.strip() or None))
    out: dict[str, set[str | None]] = {}
    for name, value in items:
        out.setdefault(name.lower(), set()).add(value.lower() if value else None)
    return out


def scope_matches(
    bullet_scope: str, bullet_key: str | None, caller: dict[str, set[str | None]] | None
) -> bool:
    """Global bullets always match; scoped ones only when the caller's scope matches."""
    if caller is None or bullet_scope == "global":
        return True
    keys = caller.get(bullet_scope)
    if keys is None:
        return False
    return bullet_key is None or None in keys or bullet_key.lower() in keys


class Ranked(FrozenRecord):
    __slots__ = (
        "bullet_id",
        "effective",
        "final",
        "keyword",
        "maturity",
        "relevance",
        "similarity",
    )
    bullet_id: str
    maturity: str
    keyword: float
    similarity: float | None
    relevance: float
    effective: float
    final: float

    def __init__(
        self,
        bullet_id: str,
        maturity: str,
        keyword: float,
        similarity: float | None,
        relevance: float,
        effective: float,
        final: float,
    ) -> None:
        object.__setattr__(self, "bullet_id", bullet_id)
        object.__setattr__(self, "maturity", maturity)
        object.__setattr__(self, "keyword", keyword)
        object.__setattr__(self, "similarity", similarity)
        object.__setattr__(self, "relevance", relevance)
        object.__setattr__(self, "effective", effective)
        object.__setattr__(self, "final", final)

    def order(self) -> tuple[float, float, str]:
        return (-self.final, -self.relevance, self.bullet_id)


def top(rows: list[Ranked], limit: int) -> list[Ranked]:
    return heapq.nsmallest(max(0, limit), rows, key=Ranked.order)
