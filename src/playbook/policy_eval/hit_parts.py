"""The parts a batch's contexts are made of, for `hits.batch_hits`.

A part is one word's bullets of one kind of match (`TopK.part`: where it is a token, a
substring of one, or a tag); a context's bullets are the union of its words' parts. For a
batch, `Parts` answers whether a part holds a bullet (a bit mask for a large part, a key for
a small one), lists a part's bullets of largest bound (`View.bounds`) in the marked bullet's
list, bounds the rest, and finds a context's bullets that are in more than one of its
parts (`several`), the only ones whose relevance exceeds their part's own points.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .engine import DEPRECATED

if TYPE_CHECKING:
    from .batch import View
    from .topk import TopK

SMALL_PART = 64  # parts this small are looked up by key, larger ones by a mask
SEVERAL_BYTES = 64 << 20  # contexts' bullets of several parts kept between batches
MASK_BYTES = 64 << 20  # large parts' bit masks kept between batches


class Parts:
    """The parts a batch's contexts use: who holds whom, and their bullets by bound."""

    def __init__(self, top: TopK, view: View, used: np.ndarray) -> None:
        eng = top.eng
        self.top, self.bounds = top, view.bounds()
        self.by_candidate = np.ascontiguousarray(self.bounds.T)  # (c, bullets): a row each
        self.most = self.bounds.max(axis=1)
        n = len(self.most)
        self.n = n
        # each bullet's list (rule, anti-pattern, deprecated) at the batch's start, 3 if not
        # valid then, 4 if that changes in the batch (it is then listed for every list)
        self.state = np.where(eng.valid, np.where(eng.mat == DEPRECATED, 2, eng.anti), 3)
        self.state[view.flagged] = 4
        members = top.parts
        sizes = np.array([len(members[p]) for p in used.tolist()], dtype=np.int64)
        self.size = np.zeros(len(members), dtype=np.int64)
        self.size[used] = sizes
        self.row = np.full(len(members), -1, dtype=np.intp)  # a large part's mask row
        big = used[sizes > SMALL_PART]
        self.row[big] = np.arange(len(big))
        self.masks = np.zeros((len(big), (n + 7) // 8), dtype=np.uint8)  # a bit a bullet
        for row, p in enumerate(big.tolist()):
            self.masks[row] = _packed(top, p, n)
        small = used[sizes <= SMALL_PART].tolist()
        keys = [p * n + members[p].astype(np.int64) for p in small]
        self.keys = np.sort(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
        self.lists: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}
        self.listed_at: dict[tuple[int, int, int], np.ndarray] = {}  # their places in the part
        self.near: dict[tuple[int, int, int], np.ndarray] = {}  # the next 3 x size by bound
        self.rests: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}
        self.of_list: dict[tuple[int, int], np.ndarray] = {}
        c = self.bounds.shape[1]  # no rest, shared by every part that has none (read only)
        self.none, self.no_arg = np.full(c, -np.inf), np.full(c, -1, dtype=np.intp)

    def holds(self, pid: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Whether part `pid` (-1: none) holds bullet `col`, pair by pair."""
        out = np.zeros(len(col), dtype=bool)
        if not len(self.row):  # no part in the batch's contexts: every pid is -1
            return out
        row = np.where(pid >= 0, self.row[np.maximum(pid, 0)], -1)
        big = row >= 0
        if big.any():
            c = col[big]
            out[big] = (self.masks[row[big], c >> 3] >> (7 - (c & 7))) & 1
        small = (pid >= 0) & ~big
        if small.any() and len(self.keys):
            key = pid[small].astype(np.int64) * self.n + col[small]
            at = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
            out[small] = self.keys[at] == key
        return out

    def in_list(self, pid: int, kind: int) -> np.ndarray:
        """The part's bullets in list `kind` at some moment of the batch."""
        got = self.of_list.get((pid, kind))
        if got is None:
            members = self.top.parts[pid]
            state = self.state[members]
            got = self.of_list[(pid, kind)] = members[(state == kind) | (state == 4)]
        return got

    def listed(self, pid: int, size: int, kind: int) -> tuple[np.ndarray, ...]:
        """Of the part's bullets in list `kind`: the `size` of largest bound; per candidate,
        a bound of the rest (the largest among the next 3 x size, and the bound of the size
        x 4th, which no later one passes), the bullet it is of (-1: none), and the bound of
        the rest without it. -inf: no rest."""
        got = self.lists.get((pid, size, kind))
        if got is None:
            members = self.in_list(pid, kind)
            c = self.bounds.shape[1]
            if len(members) <= size:
                got = (members, self.none, self.no_arg, self.none)
            else:
                cut = [size - 1, *([4 * size - 1] if len(members) > 4 * size else [])]
                split = np.argpartition(-self.most[members], cut)
                self.listed_at[(pid, size, kind)] = split[:size]
                first, near = members[split[:size]], members[split[size : 4 * size]]
                self.near[(pid, size, kind)] = near
                tail = float(self.most[near[-1]]) if len(cut) > 1 else -np.inf
                values = self.bounds[near]
                arg = values.argmax(axis=0)
                top1 = np.maximum(values[arg, np.arange(c)], tail)
                values[arg, np.arange(c)] = -np.inf
                second = np.maximum(values.max(axis=0, initial=-np.inf), tail)
                got = (first, top1, near[arg], second)
            self.lists[(pid, size, kind)] = got
        return got

    def rest(self, pid: int, size: int, kind: int) -> tuple[np.ndarray, ...]:
        """As `listed`'s bound of the rest, each candidate's own largest over all of it: per
        candidate, the largest bound of the part's bullets (in list `kind`) not among the
        `size` listed, its bullet, and the second largest (-inf: none)."""
        got = self.rests.get((pid, size, kind))
        if got is None:
            members = self.in_list(pid, kind)
            c = self.bounds.shape[1]
            if len(members) <= size:
                got = (self.none, self.no_arg, self.none)
            else:
                self.listed(pid, size, kind)
                drop = np.zeros(len(members), dtype=bool)
                drop[self.listed_at[(pid, size, kind)]] = True
                near = self.near[(pid, size, kind)]
                if len(near) >= 2:  # a bullet whose bound is below every candidate's
                    # second largest among the next listed is neither of its top two (the
                    # rest keep their order: ties fall on the same bullet)
                    floor = np.partition(self.bounds[near], -2, axis=0)[-2].min()
                    kept = self.most[members] >= floor
                    members, drop = members[kept], drop[kept]
                values = self.by_candidate[:, members]  # (c, bullets of the part)
                values[:, drop] = -np.inf
                cols = np.arange(c)
                arg = values.argmax(axis=1)  # (there is one: the part has more than `size`)
                top1 = values[cols, arg]
                values[cols, arg] = -np.inf
                got = (top1, members[arg], values.max(axis=1))
            self.rests[(pid, size, kind)] = got
        return got

    def several(self, text: str, pids: np.ndarray, size: int) -> np.ndarray:
        """A context's bullets in more than one of its parts, among the parts of more than
        `size` bullets (a smaller part is listed whole)."""
        cache = self.top.several_cache
        got = cache.get((text, size))
        if got is not None:
            cache.move_to_end((text, size))
            return got
        pids = pids[pids >= 0]
        listed = pids[self.size[pids] > size]
        rows = self.row[listed]
        once = np.zeros(self.masks.shape[1], dtype=np.uint8)
        twice = np.zeros_like(once)
        for row in rows[rows >= 0].tolist():
            twice |= once & self.masks[row]
            once |= self.masks[row]
        found = [_bits(twice)]
        small = [self.top.parts[p] for p in listed[rows < 0].tolist()]
        if small:  # small: each bullet's parts counted
            members = np.concatenate(small)
            held = self.holds(np.repeat(pids[None, :], len(members), axis=0).reshape(-1),
                              np.repeat(members, len(pids)))  # fmt: skip
            found.append(members[held.reshape(len(members), len(pids)).sum(axis=1) >= 2])
        got = np.unique(np.concatenate(found)).astype(np.intp)
        cache[(text, size)] = got
        self.top.several_bytes += got.nbytes
        while self.top.several_bytes > SEVERAL_BYTES and len(cache) > 1:
            self.top.several_bytes -= cache.popitem(last=False)[1].nbytes
        return got


def _packed(top: TopK, pid: int, n: int) -> np.ndarray:
    """A large part's bit mask over the `n` bullets (kept between batches: the same words
    come back, and a part's bullets do not change during the replay)."""
    cache = top.mask_cache
    got = cache.get(pid)
    if got is not None:
        cache.move_to_end(pid)
        return got
    mask = np.zeros(n, dtype=bool)
    mask[top.parts[pid]] = True
    got = cache[pid] = np.packbits(mask)
    top.mask_bytes += got.nbytes
    while top.mask_bytes > MASK_BYTES and len(cache) > 1:
        top.mask_bytes -= cache.popitem(last=False)[1].nbytes
    return got


def _bits(mask: np.ndarray) -> np.ndarray:
    """The bullets whose bits are set in a packed mask, in order (its bytes set unpacked
    alone: a context's bullets of several parts are few of the playbook's)."""
    at = np.flatnonzero(mask)
    bits = np.unpackbits(mask[at]).reshape(-1, 8).astype(bool)
    out: np.ndarray = (at[:, None] * 8 + np.arange(8))[bits]
    return out
