"""Vectors for semantic recall (SPEC §6): the Embedder protocol, the offline hashed-trigram
embedder, and MemoryVectors, which keeps vectors in `cache_blob` keyed by embedder identity
and content hash and embeds only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from .store import PlaybookStore


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised vectors of a fixed width."""

    @property
    def id(self) -> str: ...  # model and dimension identity, e.g. "hash-trigram-512-v1"

    @property
    def dims(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_SHIFT = np.uint64(29)


class HashTrigramEmbedder:
    """Hashed, signed character trigrams of the lower-cased text, L2-normalised.

    Deterministic across processes and machines (no Python `hash()`), offline, no download.
    """

    VERSION = 1

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
        out = np.zeros((len(texts), self._dims), dtype=np.float32)
        for row, text in enumerate(texts):
            codes = np.frombuffer(f"  {text.lower()}  ".encode("utf-32-le"), dtype=np.uint32)
            if codes.size < 3:
                continue
            c = codes.astype(np.uint64)
            key = (c[:-2] << np.uint64(42)) ^ (c[1:-1] << np.uint64(21)) ^ c[2:]
            with np.errstate(over="ignore"):
                h = (key * _M1) ^ ((key * _M1) >> _SHIFT)
                h = h * _M2
            idx = (h % np.uint64(self._dims)).astype(np.intp)
            sign = np.where((h >> np.uint64(63)) & np.uint64(1), -1.0, 1.0).astype(np.float32)
            np.add.at(out[row], idx, sign)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out


@dataclass
class Similarities:
    """Similarity (max(0, cos) × scale) per bullet id, and why it may be incomplete."""

    values: dict[str, float] = field(default_factory=dict)
    degraded: list[str] = field(default_factory=list)
    ok: bool = True  # False when the embedder failed: rank by keywords only


class MemoryVectors:
    """A semantic index over the playbook, backed by `cache_blob`.

    Vectors are stored per (embedder id, content hash): a bullet whose content was seen
    before (even under another id) costs nothing, and vectors of another embedder are
    never ranked against this one. The stacked matrix is kept between queries while the
    set of bullets is unchanged.
    """

    def __init__(
        self, store: PlaybookStore, embedder: Embedder, *, embed_missing: bool = True
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.embed_missing = embed_missing
        self._vectors: dict[str, np.ndarray] = {}  # content hash -> vector
        self._matrix_key: tuple[str, ...] = ()
        self._matrix: np.ndarray | None = None

    def _load(self, hashes: Iterable[str]) -> None:
        want = [h for h in dict.fromkeys(hashes) if h not in self._vectors]
        if not want:
            return
        dims = self.embedder.dims
        for digest, blob in self.store.cache_get(self.embedder.id, want).items():
            vec = np.frombuffer(blob, dtype=np.float32)
            if vec.shape == (dims,):
                self._vectors[digest] = vec

    def ensure(
        self,
        items: Sequence[tuple[str, str]],
        contents: Callable[[list[str]], dict[str, str]],
    ) -> set[str]:
        """Load (and, if allowed, embed and store) the vectors of (id, content hash) pairs;
        return the hashes still without a vector."""
        self._load(h for _, h in items)
        missing_ids = {h: i for i, h in items if h not in self._vectors}
        if not missing_ids:
            return set()
        if not self.embed_missing:
            return set(missing_ids)
        text = contents(list(missing_ids.values()))
        hashes = [h for h, i in missing_ids.items() if i in text]
        texts = [text[missing_ids[h]] for h in hashes]
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        if vectors.shape != (len(texts), self.embedder.dims):
            raise ValueError(
                f"embedder {self.embedder.id} returned shape {vectors.shape}, "
                f"expected {(len(texts), self.embedder.dims)}"
            )
        for digest, vec in zip(hashes, vectors, strict=True):
            self._vectors[digest] = vec
        self.store.cache_put(
            self.embedder.id,
            self.embedder.dims,
            {h: v.tobytes() for h, v in zip(hashes, vectors, strict=True)},
        )
        return {h for h in missing_ids if h not in self._vectors}

    def similarities(
        self,
        query: str,
        items: Sequence[tuple[str, str]],
        *,
        scale: float = 10.0,
        contents: Callable[[list[str]], dict[str, str]] | None = None,
    ) -> Similarities:
        """max(0, cosine) × scale between the query and each (id, content hash) with a vector.

        `contents(ids)` supplies the text of bullets that still need embedding.
        """
        result = Similarities()
        others = {
            eid: n for eid, n in self.store.cache_embedders().items() if eid != self.embedder.id
        }
        for eid, n in sorted(others.items()):
            result.degraded.append(
                f"{n} cached vectors from embedder {eid} were not used: they do not compare "
                f"with {self.embedder.id} (re-embed to use them)"
            )
        try:
            missing = self.ensure(items, contents or (lambda ids: {}))
            q = np.asarray(self.embedder.embed([query]), dtype=np.float32)[0]
        except Exception as exc:  # an embedder is foreign code: report, fall back
            result.ok = False
            result.degraded.append(
                f"embedder {self.embedder.id} failed ({type(exc).__name__}: {exc}); "
                "ranked by keywords only"
            )
            return result
        if missing:
            result.degraded.append(
                f"{len(missing)} bullets have no {self.embedder.id} vector; "
                "they are ranked by keywords only"
            )
        have = [(i, h) for i, h in items if h in self._vectors]
        if not have:
            return result
        key = tuple(h for _, h in have)
        if key != self._matrix_key or self._matrix is None:
            self._matrix = np.stack([self._vectors[h] for h in key])
            self._matrix_key = key
        qn = float(np.linalg.norm(q))
        if qn == 0:
            return result
        sims = np.maximum(self._matrix @ (q / qn), 0.0) * scale
        result.values = dict(zip((i for i, _ in have), sims.tolist(), strict=True))
        return result
