"""Vectors for semantic recall (SPEC §6): MemoryVectors, which keeps vectors in `cache_blob`
keyed by embedder identity and content hash and embeds only what is missing. The embedders
themselves (the protocol, the offline hashed-trigram one) are in `playbook.retrieval.embedders`, and
re-exported here.

Similarity is a true cosine whatever an embedder returns: every vector is compared by its
direction only (a zero or non-finite vector has similarity 0 with everything).

How a vector is kept in `cache_blob` (the row's length tells which, so caches written by
older versions read as they are):

- `dims` bytes: the int8 counts of a `CountingEmbedder` (the hashed-trigram embedder sums
  ±1 per trigram: its raw vectors are small integers). Exact, and a quarter of the size,
  which is what a first semantic recall over a whole playbook spends its time reading.
- `4 × dims` bytes: float32, scaled to unit length: any other embedder, and the rare row
  of counts that does not fit in int8.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from .embedders import CountingEmbedder, Embedder, HashTrigramEmbedder, unit_rows

__all__ = [
    "CountingEmbedder",
    "Embedder",
    "HashTrigramEmbedder",
    "MemoryVectors",
    "Similarities",
    "encode_counts",
    "unit_rows",
]

if TYPE_CHECKING:
    from ..store import PlaybookStore

Progress = Callable[[int, int], None]  # (done, total)
# (key, content hash) of each bullet asked about: the key is the caller's name for the bullet
# (its id, or its seq), and `Contents` gives the text of bullets by key.
Items = Sequence[tuple[Any, str]]
Contents = Callable[[list[Any]], dict[Any, str]]


def encode_counts(counts: np.ndarray) -> list[bytes]:
    """The cache form of each row of integer counts: its int8 bytes (`dims` bytes) when
    every count of the row fits, else its float32 unit vector (`4 × dims` bytes)."""
    fits = ((counts >= -128) & (counts <= 127)).all(axis=1)
    small = counts.astype(np.int8)  # wrapped where a count does not fit: those rows are wide
    rows = [row.tobytes() for row in small]
    for i in np.flatnonzero(~fits):
        rows[i] = unit_rows(counts[i : i + 1].astype(np.float32))[0].tobytes()
    return rows


def _inverse(squares: np.ndarray) -> np.ndarray:
    """1 / sqrt of each sum of squares, 0 for a zero row (float32)."""
    inverse = np.zeros(len(squares), dtype=np.float32)
    np.divide(1.0, np.sqrt(squares), out=inverse, where=squares > 0)
    return inverse


@dataclass
class Similarities:
    """Similarity (max(0, cos) × scale) per bullet, and why it may be incomplete.

    `array` holds the figures in the order of the items asked about (NaN where an item
    has no vector); `values` maps the key of each bullet with a vector to its figure."""

    items: Items = ()  # the (key, content hash) pairs asked about
    array: np.ndarray | None = None
    degraded: list[str] = field(default_factory=list)
    ok: bool = True  # False when the embedder failed: rank by keywords only

    @functools.cached_property
    def values(self) -> dict[Any, float]:
        if self.array is None:
            return {}
        have = np.flatnonzero(~np.isnan(self.array))
        return {self.items[j][0]: float(self.array[j]) for j in have.tolist()}


class MemoryVectors:
    """A semantic index over the playbook, backed by `cache_blob`.

    Vectors are stored per (embedder id, content hash), as int8 counts or unit float32
    rows (see the module's docstring): a bullet whose content was seen before (even under
    another id) costs nothing, and vectors of another embedder are never ranked against
    this one. They are kept in memory between queries, as they were read; a first query
    over many bullets reads the embedder's whole cache in one pass. Vectors are computed
    when first needed, or ahead of time by `index()` (`playbook index`), so that a first
    semantic recall only reads.
    """

    SCAN = 512  # from this many unknown hashes on, read the embedder's cache in one pass
    CAST = 4096  # int8 rows cast to float32 at a time

    def __init__(
        self, store: PlaybookStore, embedder: Embedder, *, embed_missing: bool = True
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.embed_missing = embed_missing
        self._row: dict[str, int] = {}  # content hash -> row (counted across the blocks)
        # The vectors, in blocks of a few thousand rows (no single huge allocation, and
        # rows read from the cache are used where they were read, never copied again),
        # each with 1/|row| per row (0 for a zero row). A block is float32, or int8 counts
        # (whose lengths are taken when the block is first multiplied: see `_cosines`).
        self._blocks: list[list[Any]] = []  # [block, inverse lengths or None]
        self._size = 0
        self._scanned = False
        self._scratch: np.ndarray | None = None  # int8 rows cast to float32 (`CAST` rows)
        self.save_error: str | None = None  # why the last vectors could not be cached

    # ------------------------------------------------------------ the matrix
    def _append(self, digests: Sequence[str], block: np.ndarray) -> None:
        """Add a block of vectors under their content hashes (a hash added again only
        costs a row: the later one is used). The cosine divides by each row's length, so
        a cache written by an older Playbook, which kept an embedder's raw output, still
        compares right, and so do int8 counts; a row holding a NaN or an infinity counts as
        a zero row."""
        inverse = None
        if block.dtype != np.int8:
            squares = np.einsum("ij,ij->i", block, block)
            bad = ~np.isfinite(squares)
            if bad.any():
                block = block.copy()
                block[bad] = 0.0
                squares[bad] = 0.0
            inverse = _inverse(squares)
        start = self._size
        self._blocks.append([block, inverse])
        self._row.update(zip(digests, range(start, start + len(digests)), strict=True))
        self._size += len(digests)

    def _add_blobs(self, pairs: Sequence[tuple[str, bytes]]) -> None:
        """Add vectors in their cache form (a chunk of rows at a time): `dims` bytes are
        int8 counts, `4 × dims` bytes float32; a row of any other length is left out."""
        if not pairs:
            return
        dims = self.embedder.dims
        digests, blobs = zip(*pairs, strict=True)
        widths = set(map(len, blobs))
        if len(widths) > 1:  # rows of both codecs (or a foreign one): each on its own
            for width in widths:
                self._add_blobs([(h, v) for h, v in pairs if len(v) == width])
            return
        dtype = {dims: np.int8, 4 * dims: np.float32}.get(widths.pop())
        if dtype is not None:
            block = np.frombuffer(b"".join(blobs), dtype).reshape(len(blobs), dims)
            self._append(digests, block)

    def _cosines(self, q: np.ndarray) -> np.ndarray:
        """cos(q, row) of every row, in row order (q of length 1; 0 for a zero row). An
        int8 block's lengths are taken the first time it is multiplied. einsum rather than
        `@`: BLAS splits a product over threads, which on a busy machine wait more than they
        compute."""
        out = []
        for entry in self._blocks:
            block, inverse = entry
            if block.dtype == np.int8:
                dots, squares = self._int8_products(block, q, squares=inverse is None)
                if squares is not None:
                    inverse = entry[1] = _inverse(squares)
            else:
                dots = np.einsum("ij,j->i", block, q)
            out.append(dots * inverse)
        return np.concatenate(out)

    def _int8_products(
        self, block: np.ndarray, q: np.ndarray, *, squares: bool
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """block @ q, and each row's sum of squares if asked, for an int8 block: its rows
        are cast a few thousand at a time into one float32 buffer kept for the purpose (no
        new memory to fault in, however large the block). float32 sums of int8 squares are
        exact (at most 127² × dims, far below 2**24)."""
        if self._scratch is None:
            self._scratch = np.empty((self.CAST, block.shape[1]), dtype=np.float32)
        dots = np.empty(len(block), dtype=np.float32)
        sums = np.empty(len(block), dtype=np.float32) if squares else None
        for start in range(0, len(block), self.CAST):
            rows = block[start : start + self.CAST]
            cast = self._scratch[: len(rows)]
            np.copyto(cast, rows)
            np.einsum("ij,j->i", cast, q, out=dots[start : start + len(rows)])
            if sums is not None:
                np.einsum("ij,ij->i", cast, cast, out=sums[start : start + len(rows)])
        return dots, sums

    def _rows(self, hashes: list[str]) -> np.ndarray:
        """The matrix row of each content hash, -1 where there is none."""
        found = map(self._row.get, hashes, itertools.repeat(-1))
        return np.fromiter(found, dtype=np.intp, count=len(hashes))

    def _load(self, hashes: list[str]) -> None:
        """Read the cached vectors of `hashes` (none of them loaded yet)."""
        if len(hashes) >= self.SCAN and not self._scanned:
            self._scanned = True
            for chunk in self.store.blobs.cached_vectors(self.embedder.id, self.embedder.dims):
                self._add_blobs(chunk)
            return
        self._add_blobs(list(self.store.cache_get(self.embedder.id, hashes).items()))

    def _checked(self, vectors: np.ndarray, n: int) -> np.ndarray:
        if vectors.shape != (n, self.embedder.dims):
            raise ValueError(
                f"embedder {self.embedder.id} returned shape {vectors.shape}, "
                f"expected {(n, self.embedder.dims)}"
            )
        return vectors

    def _embed(self, texts: list[str]) -> np.ndarray:
        vectors = np.array(self.embedder.embed(texts), dtype=np.float32)
        return unit_rows(self._checked(vectors, len(texts)))

    def _encode(self, texts: list[str]) -> list[bytes]:
        """The cache form of each text's vector: int8 counts where the embedder gives
        counts that fit, else its unit float32 row."""
        if isinstance(self.embedder, CountingEmbedder):
            counts = np.asarray(self.embedder.counts(texts))
            if not np.issubdtype(counts.dtype, np.integer):
                raise ValueError(f"embedder {self.embedder.id} returned non-integer counts")
            return encode_counts(self._checked(counts, len(texts)))
        return [row.tobytes() for row in self._embed(texts)]

    def _save(self, digests: Sequence[str], blobs: Sequence[bytes]) -> None:
        self.store.cache_put(
            self.embedder.id, self.embedder.dims, dict(zip(digests, blobs, strict=True))
        )

    # ------------------------------------------------------------ filling
    def ensure(
        self,
        items: Items,
        contents: Contents,
    ) -> set[str]:
        """Load (and, if allowed, embed and store) the vectors of (key, content hash) pairs;
        return the hashes still without a vector.

        Storing is best effort here: a playbook that cannot be written (read-only, or
        locked past the busy timeout) still gets its ranking, and `save_error` says why
        nothing was cached."""
        return self._fill(items, contents)[1]

    def _fill(self, items: Items, contents: Contents) -> tuple[np.ndarray, set[str]]:
        """(the row of each item, -1 for none; the hashes still without a vector)."""
        hashes = list(map(itemgetter(1), items))
        if self._row:
            rows = self._rows(hashes)
            absent = np.flatnonzero(rows < 0)
            if not absent.size:
                return rows, set()
            wanted = [hashes[i] for i in absent]
        else:  # nothing loaded yet (a first query): every item is absent
            rows = np.full(len(hashes), -1, dtype=np.intp)
            absent = np.arange(len(hashes))
            wanted = hashes
        self._load(wanted)
        found = self._rows(wanted)
        missing_ids = {items[j][1]: items[j][0] for j in absent[found < 0]}
        if missing_ids and self.embed_missing:
            text = contents(list(missing_ids.values()))
            todo = [h for h, i in missing_ids.items() if i in text]
            blobs = self._encode([text[missing_ids[h]] for h in todo])
            self._add_blobs(list(zip(todo, blobs, strict=True)))
            try:
                self._save(todo, blobs)
                self.save_error = None
            except Exception as exc:  # the cache is an optimisation: never fail a recall on it
                self.save_error = f"{type(exc).__name__}: {exc}"
            gaps = np.flatnonzero(found < 0)
            found[gaps] = self._rows([wanted[k] for k in gaps])
        rows[absent] = found
        return rows, {h for h in missing_ids if h not in self._row}

    def index(self, *, batch: int = 2048, progress: Progress | None = None) -> dict[str, int]:
        """Embed and store the vector of every recallable bullet that has none yet
        (`playbook index`), and, for a `CountingEmbedder`, rewrite as int8 counts the
        vectors an older version cached as float32 (the same vectors, a quarter of the
        size). Each batch is committed on its own, so an interrupted run keeps what it did.
        Returns {"embedded": n, "compacted": m, "cached": vectors now cached}."""
        todo = self.store.blobs.unembedded(self.embedder.id)
        wide: list[tuple[str, str]] = []
        if isinstance(self.embedder, CountingEmbedder):
            wide = self.store.blobs.wide_vectors(self.embedder.id, self.embedder.dims)
        total = len(todo) + len(wide)
        if progress is not None:
            progress(0, total)
        compacted = 0
        done = 0
        for rows, compact in ((todo, False), (wide, True)):
            for start in range(0, len(rows), batch):
                chunk = rows[start : start + batch]
                texts = [c for _, c in chunk]
                pairs = list(zip([h for h, _ in chunk], self._encode(texts), strict=True))
                if compact:  # counts that do not fit int8 stay as they were stored
                    pairs = [(h, v) for h, v in pairs if len(v) == self.embedder.dims]
                    if pairs:
                        self.store.blobs.rewrite_vectors(
                            self.embedder.id, self.embedder.dims, dict(pairs)
                        )
                    compacted += len(pairs)
                else:
                    self._save(*zip(*pairs, strict=True))
                self._add_blobs(pairs)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
        cached = self.store.cache_embedders().get(self.embedder.id, 0)
        return {"embedded": len(todo), "compacted": compacted, "cached": cached}

    # ------------------------------------------------------------ querying
    def similarities(
        self,
        query: str,
        items: Items,
        *,
        scale: float = 10.0,
        contents: Contents | None = None,
    ) -> Similarities:
        """max(0, cosine) × scale between the query and each (key, content hash) with a
        vector.

        `contents(keys)` supplies the text of bullets that still need embedding.
        """
        result = Similarities()
        for eid, n in sorted(self.store.blobs.other_embedders(self.embedder.id).items()):
            result.degraded.append(
                f"{n} cached vectors from embedder {eid} were not used: they do not compare "
                f"with {self.embedder.id} (re-embed to use them)"
            )
        try:
            rows, missing = self._fill(items, contents or (lambda ids: {}))
            q = self._embed([query])[0]
        except Exception as exc:  # an embedder is foreign code: report, fall back
            result.ok = False
            result.degraded.append(
                f"embedder {self.embedder.id} failed ({type(exc).__name__}: {exc}); "
                "ranked by keywords only"
            )
            return result
        if missing:
            n = len(missing)
            result.degraded.append(
                f"{n} {'bullet has' if n == 1 else 'bullets have'} no {self.embedder.id} "
                "vector; ranked by keywords only"
            )
        have = rows >= 0
        sims = np.full(len(items), np.nan)
        if have.any():
            cos = self._cosines(q)
            sims[have] = np.maximum(cos[rows[have]], 0.0).astype(np.float64) * scale
        result.items = items
        result.array = sims
        return result
