"""Matching an add against what is already there: blocked patterns (step 2 of SPEC §5)
and near-duplicate bullets (step 3)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from ..core.model import Bullet


def add_type(content: str, bullet_type: str | None) -> str:
    """An add's bullet type: the one it names, else an `AVOID:` prefix makes it an
    anti-pattern."""
    if bullet_type is not None:
        return str(bullet_type)
    return "anti-pattern" if strip_avoid(content) != content else "rule"


@dataclass
class _Block:
    id: str
    pattern: str
    normalized: str
    tokens: frozenset[str]
    negative: bool


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
    """Bullets (any state) whose subject has token Jaccard >= `threshold`, best first.

    Prefix filtering keeps this cheap at any size: a bullet reaching the threshold must
    share one of the len(core) - ceil(threshold * len(core)) + 1 rarest subject tokens.
    """
    threshold -= 1e-9
    core = core_tokens(content)
    same, df = store.duplicate_probe(content_hash(content), core)
    found: dict[str, Bullet] = {b.id: b for b in same}
    if core:
        need = max(1, math.ceil(threshold * len(core)))
        prefix = sorted(core, key=lambda t: (df[t], t))[: len(core) - need + 1]
        ids: dict[str, None] = {}
        for tok in prefix:
            if df[tok]:
                ids.update(dict.fromkeys(store.token_postings(tok)))
        found.update(store.get_bullets(i for i in ids if i not in found))
    out = []
    for b in found.values():
        score = 1.0 if b.content == content else jaccard(core, core_tokens(b.content))
        if score >= threshold:
            out.append((score, b))
    out.sort(key=lambda sb: (-sb[0], sb[1].created_at, sb[1].id))
    return out[:limit] if limit is not None else out
