"""Keyed blobs and progress marks: the embedding cache (`cache_blob`, keyed by embedder id
and content hash), per-session reflection watermarks (byte offset per session ref), and the
transcript records a reflection read up to (rows of the same table, keyed ``record:<id>``:
a copy of the session in another file is read from past them)."""

from __future__ import annotations

from collections.abc import Iterable

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
