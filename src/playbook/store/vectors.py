"""Bulk reads of the vector cache (`cache_blob`) for semantic recall and `playbook index`.

`PlaybookStore.cache_get` fetches vectors by content hash, which suits a few; these read
them by embedder, in one pass, which is what a first semantic recall over a whole playbook
needs (100k keys looked up one by one cost more than the scan).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .store import PlaybookStore


def cached_vectors(
    store: PlaybookStore, embedder_id: str, dims: int, *, chunk: int = 4096
) -> Iterator[list[tuple[str, bytes]]]:
    """(content hash, vector bytes) of every vector cached for `embedder_id` at `dims`, a
    chunk of rows at a time."""
    rows = iter(
        store.sql.execute(
            "SELECT content_hash, value FROM cache_blob WHERE embedder_id = ? AND dims = ?",
            (embedder_id, dims),
        )
    )
    while batch := list(islice(rows, chunk)):
        yield batch


def unembedded(store: PlaybookStore, embedder_id: str) -> list[tuple[str, str]]:
    """(content hash, content) of every recallable bullet (not retired) whose content has
    no vector from `embedder_id` yet; one row per distinct content."""
    rows = store.sql.all(
        "SELECT b.content_hash, MIN(b.content) FROM bullets b WHERE b.state != 'retired' "
        "AND NOT EXISTS (SELECT 1 FROM cache_blob c WHERE c.key = ? || ':' || b.content_hash) "
        "GROUP BY b.content_hash ORDER BY MIN(b.seq)",
        (embedder_id,),
    )
    return [(r[0], r[1]) for r in rows]
