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


def wide_vectors(store: PlaybookStore, embedder_id: str, dims: int) -> list[tuple[str, str]]:
    """(content hash, content) of every vector cached for `embedder_id` at `dims` as float32
    (`4 × dims` bytes) whose content some bullet still holds: what `playbook index` can
    rewrite as int8 counts."""
    rows = store.sql.all(
        "SELECT c.content_hash, MIN(b.content) FROM cache_blob c "
        "JOIN bullets b ON b.content_hash = c.content_hash "
        "WHERE c.embedder_id = ? AND c.dims = ? AND length(c.value) = ? "
        "GROUP BY c.content_hash ORDER BY c.content_hash",
        (embedder_id, dims, 4 * dims),
    )
    return [(r[0], r[1]) for r in rows]


def rewrite_vectors(
    store: PlaybookStore, embedder_id: str, dims: int, items: dict[str, bytes]
) -> None:
    """Replace cached vectors by another form of the same vectors, in one transaction. The
    old rows are deleted and new ones appended rather than updated in place: SQLite keeps
    an updated row where it was, so rows that shrink from 2 KB to 512 bytes would each keep
    a page to themselves and a scan would read as many pages as before."""
    keys = [f"{embedder_id}:{h}" for h in items]
    d = store.sql.dialect
    with store.transaction():
        store.sql.execute(f"DELETE FROM cache_blob WHERE {d.in_list('key')}", (d.list_param(keys),))
        store.cache_put(embedder_id, dims, items)


def other_embedders(store: PlaybookStore, embedder_id: str) -> dict[str, int]:
    """Embedder identities other than `embedder_id` present in the cache, with how many
    vectors each. Two ranges of the embedder index, so that the many vectors of
    `embedder_id` itself are not counted one by one on every first recall."""
    rows = store.sql.execute(
        "SELECT embedder_id, COUNT(*) FROM cache_blob WHERE embedder_id < ? GROUP BY 1 "
        "UNION ALL SELECT embedder_id, COUNT(*) FROM cache_blob WHERE embedder_id > ? GROUP BY 1",
        (embedder_id, embedder_id),
    )
    return {r[0]: r[1] for r in rows}
