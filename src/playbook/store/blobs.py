"""Keyed blobs and progress marks: the embedding cache (`cache_blob`, keyed by embedder id
and content hash), per-session reflection watermarks (byte offset per session ref), and the
transcript records a reflection read up to (rows of the same table, keyed ``record:<id>``:
a copy of the session in another file is read from past them)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice

from .base import Part
from .records import iso
from .schema import next_seq

RECORD_MARK = "record:"  # the watermarks row of a transcript record a reflection read up to
_MARK_CHUNK = 500  # record ids looked up per statement


class BlobRepo(Part):
    """The embedding cache, reflection watermarks and record marks."""

    # ---------------------------------------------------------------- cache_blob
    def cache_get(self, embedder_id: str, hashes: Iterable[str]) -> dict[str, bytes]:
        keys = [f"{embedder_id}:{h}" for h in hashes]
        d = self.sql.dialect
        rows = self.sql.execute(
            f"SELECT content_hash, value FROM cache_blob WHERE {d.in_list('key')}",
            (d.list_param(keys),),
        )
        return {digest: value for digest, value in rows}

    def cache_put(self, embedder_id: str, dims: int, items: dict[str, bytes]) -> None:
        at = iso(self.now())
        with self.transaction():
            self.sql.executemany(
                "INSERT INTO cache_blob (key, embedder_id, content_hash, dims, value, "
                "created_at) VALUES (?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                "embedder_id = excluded.embedder_id, content_hash = excluded.content_hash, "
                "dims = excluded.dims, value = excluded.value, created_at = excluded.created_at",
                [(f"{embedder_id}:{h}", embedder_id, h, dims, v, at) for h, v in items.items()],
            )

    def cache_embedders(self) -> dict[str, int]:
        """Embedder identities present in the cache, with how many vectors each."""
        rows = self.sql.execute("SELECT embedder_id, COUNT(*) FROM cache_blob GROUP BY 1")
        return {r[0]: r[1] for r in rows}

    # ---------------------------------------------------------------- watermarks
    def watermark(self, session_ref: str) -> int:
        return int(
            self.sql.scalar(
                "SELECT byte_offset FROM watermarks WHERE session_ref = ?", (session_ref,), 0
            )
        )

    def set_watermark(self, session_ref: str, byte_offset: int) -> None:
        self.sql.execute(
            "INSERT INTO watermarks (session_ref, byte_offset, updated_at, seq) "
            f"VALUES (?,?,?, {next_seq('watermarks')}) "
            "ON CONFLICT(session_ref) DO UPDATE SET byte_offset = excluded.byte_offset, "
            "updated_at = excluded.updated_at",
            (session_ref, byte_offset, iso(self.now())),
        )

    # ---------------------------------------------------------------- record marks
    def mark_record(self, record: str, byte_offset: int) -> None:
        """Remember that a reflection read a session up to and including `record` (at
        `byte_offset` of its own file)."""
        self.set_watermark(RECORD_MARK + record, byte_offset)

    def marked_records(self, records: Iterable[str]) -> set[str]:
        """Which of `records` a reflection has read up to (`mark_record`)."""
        keys = list(dict.fromkeys(RECORD_MARK + r for r in records))
        d = self.sql.dialect
        found: set[str] = set()
        for i in range(0, len(keys), _MARK_CHUNK):
            rows = self.sql.execute(
                f"SELECT session_ref FROM watermarks WHERE {d.in_list('session_ref')}",
                (d.list_param(keys[i : i + _MARK_CHUNK]),),
            )
            found.update(str(r[0])[len(RECORD_MARK) :] for r in rows)
        return found

    # ---------------------------------------------------------------- bulk reads of vectors
    # `cache_get` fetches vectors by content hash, which suits a few; these read them by
    # embedder, in one pass, which is what a first semantic recall over a whole playbook
    # needs (100k keys looked up one by one cost more than the scan).

    def cached_vectors(
        self, embedder_id: str, dims: int, *, chunk: int = 4096
    ) -> Iterator[list[tuple[str, bytes]]]:
        """(content hash, vector bytes) of every vector cached for `embedder_id` at `dims`, a
        chunk of rows at a time."""
        rows = iter(
            self.sql.execute(
                "SELECT content_hash, value FROM cache_blob WHERE embedder_id = ? AND dims = ?",
                (embedder_id, dims),
            )
        )
        while batch := list(islice(rows, chunk)):
            yield batch

    def unembedded(self, embedder_id: str) -> list[tuple[str, str]]:
        """(content hash, content) of every recallable bullet (not retired) whose content has
        no vector from `embedder_id` yet; one row per distinct content."""
        rows = self.sql.all(
            "SELECT b.content_hash, MIN(b.content) FROM bullets b WHERE b.state != 'retired' "
            "AND NOT EXISTS (SELECT 1 FROM cache_blob c WHERE c.key = ? || ':' || b.content_hash) "
            "GROUP BY b.content_hash ORDER BY MIN(b.seq)",
            (embedder_id,),
        )
        return [(r[0], r[1]) for r in rows]

    def wide_vectors(self, embedder_id: str, dims: int) -> list[tuple[str, str]]:
        """(content hash, content) of every vector cached for `embedder_id` at `dims` as float32
        (`4 × dims` bytes) whose content some bullet still holds: what `playbook index` can
        rewrite as int8 counts."""
        rows = self.sql.all(
            "SELECT c.content_hash, MIN(b.content) FROM cache_blob c "
            "JOIN bullets b ON b.content_hash = c.content_hash "
            "WHERE c.embedder_id = ? AND c.dims = ? AND length(c.value) = ? "
            "GROUP BY c.content_hash ORDER BY c.content_hash",
            (embedder_id, dims, 4 * dims),
        )
        return [(r[0], r[1]) for r in rows]

    def rewrite_vectors(self, embedder_id: str, dims: int, items: dict[str, bytes]) -> None:
        """Replace cached vectors by another form of the same vectors, in one transaction. The
        old rows are deleted and new ones appended rather than updated in place: SQLite keeps
        an updated row where it was, so rows that shrink from 2 KB to 512 bytes would each keep
        a page to themselves and a scan would read as many pages as before."""
        keys = [f"{embedder_id}:{h}" for h in items]
        d = self.sql.dialect
        with self.transaction():
            self.sql.execute(
                f"DELETE FROM cache_blob WHERE {d.in_list('key')}", (d.list_param(keys),)
            )
            self.cache_put(embedder_id, dims, items)

    def other_embedders(self, embedder_id: str) -> dict[str, int]:
        """Embedder identities other than `embedder_id` present in the cache, with how many
        vectors each. Two ranges of the embedder index, so that the many vectors of
        `embedder_id` itself are not counted one by one on every first recall."""
        rows = self.sql.execute(
            "SELECT embedder_id, COUNT(*) FROM cache_blob WHERE embedder_id < ? GROUP BY 1 "
            "UNION ALL "
            "SELECT embedder_id, COUNT(*) FROM cache_blob WHERE embedder_id > ? GROUP BY 1",
            (embedder_id, embedder_id),
        )
        return {r[0]: r[1] for r in rows}
