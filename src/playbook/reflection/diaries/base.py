"""A diary as passages with byte offsets (`Passage`, `Diary`), and the byte helpers the
readers share."""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Passage:
    """One unit of a diary: a paragraph of text, or one transcript record reduced to text."""

    offset: int  # byte offset in the file where this passage starts (line start for JSONL)
    text: str
    role: str | None  # "user" / "assistant" for transcripts, None for plain text
    # Text paragraphs: the byte offset in the file of each line of `text` (split on "\n").
    # Empty for a transcript record, which is one line of the file whatever its text holds.
    line_starts: tuple[int, ...] = field(default=(), compare=False, repr=False)
    # A transcript record's own identity (`jsonl.record_identity`): the same in a copy of the
    # session (a fork, a resume written to a new file), unlike the file and its offsets.
    record: str | None = field(default=None, compare=False, repr=False)

    def lines(self) -> list[tuple[int, str]]:
        """Each line of the text with the byte offset of the line of the file it came from.

        For a text paragraph that is the line's own offset; the lines of a transcript record
        all share the record's offset.
        """
        parts = self.text.split("\n") if self.line_starts else self.text.splitlines()
        if len(parts) == len(self.line_starts):
            return list(zip(self.line_starts, parts, strict=True))
        return [(self.offset, part) for part in parts]

    def since(self, offset: int) -> Passage | None:
        """The part of this passage from byte ``offset`` on: the whole passage if it starts
        there or later, its lines from ``offset`` on for a paragraph that straddles it, None
        if nothing of it is left."""
        if self.offset >= offset:
            return self
        kept = [(o, line) for o, line in self.lines() if o >= offset]
        if not kept or not self.line_starts:
            return None
        return Passage(
            offset=kept[0][0],
            text="\n".join(line for _, line in kept),
            role=self.role,
            line_starts=tuple(o for o, _ in kept),
        )


@dataclass
class Diary:
    """A diary read from ``start`` onwards; ``end`` is the watermark for the next read.

    ``unfinished`` counts the bytes after ``end`` that were not read: a last line without
    its newline yet (the agent is still writing it). They are read next time, whole.
    """

    ref: str
    passages: list[Passage]
    end: int
    skipped: int = 0
    unfinished: int = 0
    _offsets: list[int] = field(default_factory=list, init=False, repr=False, compare=False)

    def render(self) -> str:
        """The diary as prompt text: each passage under a marker such as ``[@4096 assistant]``."""
        blocks = []
        for p in self.passages:
            marker = f"[@{p.offset} {p.role}]" if p.role else f"[@{p.offset}]"
            blocks.append(f"{marker}\n{p.text}")
        return "\n\n".join(blocks)

    def passage_at(self, offset: int) -> Passage | None:
        """The passage that covers ``offset``: the last one starting at or before it.

        None before the first passage and at or past ``end``.
        """
        if len(self._offsets) != len(self.passages):
            self._offsets = [p.offset for p in self.passages]
        if offset >= self.end:
            return None
        i = bisect.bisect_right(self._offsets, offset) - 1
        return self.passages[i] if i >= 0 else None

    def line_offsets(self) -> set[int]:
        """Every offset a proposal may point at: each passage's start and each line's."""
        found = {p.offset for p in self.passages}
        for p in self.passages:
            found.update(p.line_starts)
        return found

    def since(self, offset: int) -> Diary:
        """This diary without the text before byte ``offset`` (a session's watermark)."""
        kept = [q for q in (p.since(offset) for p in self.passages) if q is not None]
        if len(kept) == len(self.passages) and all(
            a is b for a, b in zip(kept, self.passages, strict=True)
        ):
            return self
        return Diary(self.ref, kept, self.end, self.skipped, self.unfinished)


def loads(raw: bytes | str) -> object:
    """json.loads that never raises: None for anything that is not JSON."""
    text = decode(raw) if isinstance(raw, bytes) else raw
    try:
        return json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return None


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
