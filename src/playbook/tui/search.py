"""Find a bullet for the palette's "jump to": by id prefix first, then by words."""

from __future__ import annotations

from collections.abc import Mapping

from ..store.views import BulletRow

HEX = frozenset("0123456789abcdef-")


def find_bullets(
    rows: Mapping[str, BulletRow], query: str, limit: int = 12
) -> list[tuple[BulletRow, float]]:
    """Bullets whose id starts with the query (score 1.0), then live bullets whose content
    contains it (0.6), at most `limit`."""
    q = query.strip().lower()
    if len(q) < 2:
        return []
    hits: list[tuple[BulletRow, float]] = []
    if q.startswith("b-") or set(q) <= HEX:
        for row in rows.values():
            if row.id.startswith(q) or row.id.removeprefix("b-").startswith(q):
                hits.append((row, 1.0))
                if len(hits) >= limit:
                    return hits
    for row in rows.values():
        if row.state != "retired" and q in row.content.lower():
            hits.append((row, 0.6))
            if len(hits) >= limit:
                break
    return hits
