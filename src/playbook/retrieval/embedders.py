"""Embedders for semantic recall (SPEC §6): the `Embedder` protocol, `CountingEmbedder`
(an embedder whose vectors are integer counts, which the vector cache keeps as int8), and
the offline default, `HashTrigramEmbedder`: hashed, signed character trigrams.

`playbook.retrieval.vectors` (MemoryVectors) re-exports every name here.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors of a fixed width (of any length: semantic
    recall compares their directions)."""

    @property
    def id(self) -> str: ...  # model and dimension identity, e.g. "hash-trigram-512-v1"

    @property
    def dims(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


@runtime_checkable
class CountingEmbedder(Embedder, Protocol):
    """An embedder whose vectors are integer counts: `embed` gives the same rows scaled to
    unit length, and `counts` the integers themselves, which the cache keeps compact."""

    def counts(self, texts: list[str]) -> np.ndarray: ...  # an integer array (texts × dims)


_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_SHIFT = np.uint64(29)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """`vectors` (2-D, float32) with every row scaled to length 1, in place; rows that are
    zero or hold a NaN or an infinity become zero rows."""
    bad = ~np.isfinite(vectors).all(axis=1)
    if bad.any():
        vectors[bad] = 0.0
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.divide(vectors, norms, out=vectors, where=norms > 0)
    return vectors


class HashTrigramEmbedder:
    """Hashed, signed character trigrams of the lower-cased text, L2-normalised.

    Deterministic across processes and machines (no Python `hash()`), offline, no download.
    A batch is hashed in one pass over all its characters (about 100k rules a second).
    A `CountingEmbedder`: `counts` gives the signed trigram counts, `embed` their unit rows.
    """

    VERSION = 1
    CHUNK = 2048  # texts hashed together (bounds the temporary arrays)

    def __init__(self, dims: int = 512) -> None:
        if dims < 8:
            raise ValueError("dims must be at least 8")
        self._dims = dims

    @property
    def id(self) -> str:
        return f"hash-trigram-{self._dims}-v{self.VERSION}"

    @property
    def dims(self) -> int:
        return self._dims

    def embed(self, texts: list[str]) -> np.ndarray:
        return unit_rows(self._sums(texts, np.float32))

    def counts(self, texts: list[str]) -> np.ndarray:
        """The signed trigram counts of each text (int32, texts × dims)."""
        return self._sums(texts, np.int32)

    def _sums(self, texts: list[str], dtype: type) -> np.ndarray:
        out: np.ndarray = np.zeros((len(texts), self._dims), dtype=dtype)
        for start in range(0, len(texts), self.CHUNK):
            self._embed_into(texts[start : start + self.CHUNK], out[start : start + self.CHUNK])
        return out

    def _embed_into(self, texts: list[str], out: np.ndarray) -> None:
        """Sum ±1 per trigram of each padded text into its row of `out` (unnormalised)."""
        if not texts:
            return
        padded = [f"  {t.lower()}  " for t in texts]  # at least 4 characters: 2+ trigrams
        lengths = np.fromiter(map(len, padded), dtype=np.intp, count=len(padded))
        joined = "".join(padded).encode("utf-32-le", "surrogatepass")
        codes = np.frombuffer(joined, dtype=np.uint32).astype(np.uint64)
        per_text = lengths - 2  # trigrams of each text, none across a boundary
        first = np.cumsum(lengths) - lengths  # where each text starts in `codes`
        before = np.cumsum(per_text) - per_text
        row = np.repeat(np.arange(len(texts), dtype=np.intp), per_text)
        pos = np.arange(int(per_text.sum()), dtype=np.intp) + np.repeat(first - before, per_text)
        key = (codes[pos] << np.uint64(42)) ^ (codes[pos + 1] << np.uint64(21)) ^ codes[pos + 2]
        with np.errstate(over="ignore"):
            h = key * _M1
            h ^= h >> _SHIFT
            h *= _M2
        idx = (h % np.uint64(self._dims)).astype(np.intp)
        sign = np.where((h >> np.uint64(63)) & np.uint64(1), -1.0, 1.0)
        sums = np.bincount(row * self._dims + idx, weights=sign, minlength=out.size)
        out[:] = sums.reshape(out.shape)  # sums of ±1: exact in float32 and int32
