"""What an import could not carry over, one note per thing, and how to show many of them.

Every note names where it comes from (`b-12`, `bullets[3]`, `deprecatedPatterns[0]`) and
what happened. Notes of one *kind* (the same thing dropped from many bullets) are listed in
full in the JSON output, but a person reading stderr gets one line per kind once a kind
repeats: the count and two examples.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core.inert import inert

# A kind seen more often than this is summarised in one line.
SHOWN_IN_FULL = 2


@dataclass(slots=True)  # not frozen: a large import makes a hundred thousand of them
class Note:
    where: str
    text: str
    kind: str  # the same for every note of this kind; defaults to the text itself

    def __str__(self) -> str:
        """One line whatever the file held (an id with a newline in it stays one note)."""
        return inert(f"{self.where}: {self.text}", one_line=True)


class Notes:
    """An ordered collection of notes."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[Note] = []

    def add(self, where: str, text: str, kind: str | None = None) -> None:
        self.items.append(Note(where, text, kind or text))

    def lines(self) -> list[str]:
        return [str(n) for n in self.items]

    def __len__(self) -> int:
        return len(self.items)


def summarize(notes: Iterable[Note], shown_in_full: int = SHOWN_IN_FULL) -> list[str]:
    """One line per note, except that a kind seen more than `shown_in_full` times becomes
    one line with its count and its first two notes. Kinds keep their first-seen order."""
    groups: dict[str, list[Note]] = {}
    for note in notes:
        groups.setdefault(note.kind, []).append(note)
    out: list[str] = []
    for kind, group in groups.items():
        if len(group) <= shown_in_full:
            out.extend(str(n) for n in group)
        else:
            # An example whose text is the kind itself needs only its place.
            places = all(n.text == kind for n in group[:2])
            examples = ", ".join(n.where for n in group[:2]) if places else None
            examples = examples or "; ".join(str(n) for n in group[:2])
            out.append(f"{kind} ({len(group):,} times; e.g. {examples})")
    return out
