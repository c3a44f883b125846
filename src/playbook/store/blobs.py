"""Keyed blobs and progress marks: the embedding cache (`cache_blob`, keyed by embedder id
and content hash) and per-session reflection watermarks (byte offset per session ref)."""

from __future__ import annotations

from collections.abc import Iterable

from .base import StoreBase
from .records import iso
from .schema import next_seq


class BlobsMixin(StoreBase):
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
