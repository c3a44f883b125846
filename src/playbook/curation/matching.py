"""Matching an add against what is already there: blocked patterns (step 2 of SPEC §5)
and near-duplicate bullets (step 3)."""

from __future__ import annotations

import heapq
import math
from datetime import datetime
from typing import TYPE_CHECKING

from ..core.record import Record
from ..core.text import (
    content_hash,
    core_tokens,
    is_negative,
    jaccard,
    normalize,
    strip_avoid,
    tokens,
)
from ..store import PlaybookStore
from ..store.records import EPOCH, stored_time

if TYPE_CHECKING:
    from ..core.model import Bullet


def add_type(content: str, bullet_type: str | None) -> str:
    """An add's bullet type: the one it names, else an `AVOID:` prefix makes it an
    anti-pattern."""
    if bullet_type is not None:
        return str(bullet_type)
    return "anti-pattern" if strip_avoid(content) != content else "rule"


class _Block(Record):
    id: str
    pattern: str
    normalized: str
    tokens: frozenset[str]
    negative: bool

    def __init__(
        self, id: str, pattern: str, normalized: str, tokens: frozenset[str], negative: bool
    ) -> None:
        self.id = id
        self.pattern = pattern
        self.normalized = normalized
        self.tokens = tokens
        self.negative = negative


class BlockMatcher:
    """The active blocked patterns of a store, read once, tested against adds."""

    def __init__(self, store: PlaybookStore) -> None:
        self.store = store
        self.policy = store.policy
        self._blocks: list[_Block] | None = None

    def blocks(self) -> list[_Block]:
        if self._blocks is None:
            self._blocks = [
                _Block(
                    b.id,
                    b.pattern,
                    normalize(b.pattern),
                    frozenset(tokens(b.pattern)),
                    is_negative(b.pattern),
                )
                for b in self.store.blocked()
            ]
        return self._blocks

    def match(self, content: str, bullet_type: str) -> _Block | None:
        """The block an add of `content` hits: the same normalized text, or (with the same
        polarity) token Jaccard or rapidfuzz ratio at the policy's thresholds."""
        norm = normalize(content)
        toks = frozenset(tokens(content))
        negative = is_negative(content, bullet_type)
        for b in self.blocks():
            if norm == b.normalized:
                return b
            if negative != b.negative:
                # "AVOID: <blocked thing>" is the lesson, not the blocked thing; and
                # "Never X" is not "Always X".
                continue
            if jaccard(toks, b.tokens) >= self.policy.blocked_jaccard - 1e-9:
                return b
            from rapidfuzz import fuzz  # lazy: rapidfuzz: mark, every typer command

            if fuzz.ratio(norm, b.normalized) >= self.policy.blocked_fuzz_ratio:
                return b
        return None


def blocking_pattern(
    store: PlaybookStore, content: str, bullet_type: str | None = None
) -> tuple[str, str] | None:
    """(id, pattern) of the active blocked pattern that an add of `content` would hit.

    The same test as curation's step 2, for callers that want to refuse early (the review
    queue does not stage what approval would refuse as blocked).
    """
    block = BlockMatcher(store).match(content, add_type(content, bullet_type))
    return (block.id, block.pattern) if block is not None else None


def similar_bullets(
    store: PlaybookStore, content: str, threshold: float, *, limit: int | None = None
) -> list[tuple[float, Bullet]]:
    """Bullets (any state) whose subject has token Jaccard >= `threshold`, best first (then
    oldest, then by id).

    Cheap at any size, and exact. A bullet B reaching the threshold t against the subject Q
    shares at least ceil(t * |Q|) of Q's tokens (|Q & B| >= t * |Q | B| >= t * |Q|), so
    only bullets whose postings hold that many of Q's tokens are read (counted in the
    index), most shared first, and scored from their text. One whose postings hold n of
    Q's tokens scores at most n / |Q| (|Q | B| >= |Q|): with a `limit`, scoring stops once
    the limit-th best found scores above that. A `Bullet` is built only for those returned.
    """
    if limit is not None and limit <= 0:
        return []
    threshold -= 1e-9
    core = core_tokens(content)
    need = max(1, math.ceil(threshold * len(core)))
    # Every such bullet holds one of the len(core) - need + 1 rarest subject tokens: when
    # their postings are few, only those bullets are counted (a lookup per subject token
    # each), else every posting of the subject is.
    df = store.bullets.doc_freqs(core) if core else {}
    prefix = sorted(core, key=lambda t: (df[t], t))[: len(core) - need + 1]
    via = prefix if sum(df[t] for t in prefix) * len(core) < sum(df.values()) else None
    scored: dict[str, tuple[float, datetime]] = {}
    kth: list[float] = []  # a min-heap of the best `limit` scores so far
    for bid, text, created, shared in store.bullets.near_rows(
        content_hash(content), core, need, via
    ):
        if limit is not None and len(kth) >= limit and core and kth[0] > shared / len(core):
            break  # this and every row after it scores below the limit-th best found
        score = 1.0 if text == content else jaccard(core, core_tokens(text))
        if score >= threshold:
            scored[bid] = (score, stored_time(created, "bullets", bid) or EPOCH)
            if limit is not None:
                (heapq.heappush if len(kth) < limit else heapq.heappushpop)(kth, score)
    best = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[1][1], kv[0]))
    if limit is not None:
        best = best[:limit]
    bullets = store.get_bullets(bid for bid, _ in best)
    return [(score, bullets[bid]) for bid, (score, _) in best if bid in bullets]
