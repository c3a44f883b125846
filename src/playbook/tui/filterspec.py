"""The bullets filter as typed: words ranked like recall, and `is:` qualifiers."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.terms import MATURITIES
from ..store.views import BulletRow


@dataclass(frozen=True)
class FilterSpec:
    """A `/` filter: words ranked like recall, plus `is:` qualifiers. `unknown` holds the
    `is:` words that name no qualifier (the box says so; they are not searched for)."""

    text: str
    words: str
    flags: frozenset[str]
    unknown: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.words.strip() and not self.flags


FLAGS = (
    "pinned",
    "stale",
    "retired",
    "draft",
    "all",
    "rule",
    "anti",
    *MATURITIES,  # is:proven and the other rungs
)


def parse_filter(text: str) -> FilterSpec:
    """Words and `is:` qualifiers. An `is:` word still being typed (a prefix of a known one,
    such as `is:ret`) is neither; one that names nothing is `unknown`."""
    words, flags, unknown = [], set(), []
    for part in text.split():
        low = part.lower()
        if not low.startswith("is:"):
            words.append(part)
        elif low[3:] in FLAGS:
            flags.add(low[3:])
        elif not any(f.startswith(low[3:]) for f in FLAGS):
            unknown.append(part[3:])
    return FilterSpec(text, " ".join(words), frozenset(flags), tuple(unknown))


def row_passes(row: BulletRow, flags: frozenset[str]) -> bool:
    """The `is:` qualifiers. Retired bullets only show with is:retired or is:all."""
    if row.state == "retired":
        if not flags & {"retired", "all"}:
            return False
    elif "retired" in flags:
        return False
    if "pinned" in flags and not row.pinned:
        return False
    if "draft" in flags and row.state != "draft":
        return False
    if "stale" in flags and not row.stale:
        return False
    if "rule" in flags and row.type != "rule":
        return False
    if "anti" in flags and row.type != "anti-pattern":
        return False
    rungs = flags.intersection(MATURITIES)
    return not rungs or row.maturity in rungs
