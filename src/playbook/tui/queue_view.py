"""The review queue as the Proposals pane filters it: by delta type, by session, by origin
(hook-driven sessions or others), and by words. Pure: no Textual, no database."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..core.terms import DELTA_TYPES, HOOK_ORIGIN

if TYPE_CHECKING:
    from ..review.proposals import Proposal

TYPES = DELTA_TYPES
QUALIFIERS = ("type", "session", "from")


@dataclass(frozen=True)
class QueueFilter:
    """`type:add type:merge session:abc from:hook words`: each qualifier narrows; several
    values of one qualifier are alternatives. `problems` names what was not understood."""

    text: str = ""
    types: frozenset[str] = frozenset()
    sessions: tuple[str, ...] = ()
    origins: frozenset[str] = frozenset()
    words: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.types or self.sessions or self.origins or self.words)

    def matches(self, p: Proposal) -> bool:
        kind = str(p.delta.get("type", ""))
        if self.types and kind not in self.types:
            return False
        ref = (p.provenance.session_ref or "").lower()
        if self.sessions and not any(s in ref for s in self.sessions):
            return False
        if self.origins and origin_label(p) not in self.origins:
            return False
        if self.words:
            text = " ".join(str(v) for v in p.delta.values()).lower()
            return all(w in text for w in self.words)
        return True


def origin_label(p: Proposal) -> str:
    """ "hook" for a proposal staged by an agent session's end, else where it came from."""
    return "hook" if p.origin == HOOK_ORIGIN else p.origin


def parse_queue_filter(text: str) -> QueueFilter:
    types: set[str] = set()
    sessions: list[str] = []
    origins: set[str] = set()
    words: list[str] = []
    problems: list[str] = []
    for part in text.split():
        name, colon, value = part.partition(":")
        name, value = name.lower(), value.lower()
        if not colon or name not in QUALIFIERS:
            words.append(part.lower())
        elif not value:
            continue  # still being typed
        elif name == "type":
            if value in TYPES:
                types.add(value)
            elif not any(t.startswith(value) for t in TYPES):
                problems.append(f"unknown type:{value}; known: {' '.join(TYPES)}")
        elif name == "session":
            sessions.append(value)
        else:
            origins.add(value)
    return QueueFilter(
        text,
        frozenset(types),
        tuple(sessions),
        frozenset(origins),
        tuple(words),
        tuple(problems),
    )


def newer_than(proposals: Iterable[Proposal], seen: datetime | None) -> set[str]:
    """The ids staged after `seen` (all of them when never seen)."""
    return {p.id for p in proposals if seen is None or p.created_at > seen}


def session_name(ref: str | None) -> str:
    """A session ref as a column shows it: the file name of a transcript path."""
    return (ref or "-").rstrip("/").rsplit("/", 1)[-1]
