"""The recall index in memory: a token's keyword matches without a query per token.

`Rank.token_matches(token)` answers with three queries, one of them a scan of the whole
vocabulary for the tokens that contain it; a replay asks it for every distinct word of
every context (tens of thousands at a team's year). `KeywordIndex` reads the vocabulary and
the postings once (`store.log`) and answers the same lists from memory: the bullets where
the token is a token, where it is a substring of one of their tokens (and not a token), and
where it is a tag.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

import numpy as np

SEP = "\x00"  # never in stored text (both backends refuse it), so never in a token


def _grouped(pages: Iterable[list[tuple[str, int]]]) -> dict[str, np.ndarray]:
    """(key, seq) rows in key order -> each key's seqs."""
    out: dict[str, np.ndarray] = {}
    key: str | None = None
    seqs: list[int] = []
    for page in pages:
        for k, s in page:
            if k != key:
                if key is not None:
                    out[key] = np.array(seqs, dtype=np.int64)
                key, seqs = k, []
            seqs.append(s)
    if key is not None:
        out[key] = np.array(seqs, dtype=np.int64)
    return out


class KeywordIndex:
    def __init__(
        self,
        vocab: list[str],
        tokens: Iterable[list[tuple[str, int]]],
        tags: Iterable[list[tuple[str, int]]],
    ) -> None:
        self.vocab = vocab
        self.joined = SEP.join(vocab)
        self.starts: list[int] = []
        at = 0
        for v in vocab:
            self.starts.append(at)
            at += len(v) + 1
        self.postings = _grouped(tokens)
        self.tags = _grouped(tags)
        self.none = np.zeros(0, dtype=np.int64)

    def containing(self, token: str) -> list[str]:
        """The vocabulary's tokens that contain `token` and are not it (as `instr` finds)."""
        found: dict[int, None] = {}
        joined, i = self.joined, self.joined.find(token)
        while i != -1:
            found[bisect_right(self.starts, i) - 1] = None
            i = joined.find(token, i + 1)
        return [self.vocab[j] for j in found if self.vocab[j] != token]

    def matches(self, token: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bullet seqs where `token` is a token, a substring of one (and not a token), and
        a tag: `Rank.token_matches`, as arrays."""
        exact = self.postings.get(token, self.none)
        parts = [self.postings[v] for v in self.containing(token) if v in self.postings]
        partial = (
            np.setdiff1d(np.concatenate(parts), exact) if parts else self.none
        )  # sorted, distinct, without the exact ones
        return exact, partial, self.tags.get(token, self.none)
