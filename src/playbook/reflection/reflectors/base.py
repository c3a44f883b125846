"""What every reflector shares: the protocol, the item it returns, the error it raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from playbook.reflection.diaries import Diary

__all__ = ["ProposedItem", "Reflector", "ReflectorError"]


@dataclass(frozen=True)
class ProposedItem:
    """One raw proposal and the byte offset of the diary line it came from."""

    item: object  # as produced (usually a dict); validated later by the caller
    offset: int | None  # decided by the reflector from the diary, never by a model


class ReflectorError(Exception):
    """A reflector could not produce proposals (failed, hung, or printed no JSON)."""


class Reflector(Protocol):
    def propose(
        self, diary: Diary, playbook: list[dict[str, Any]], prior: list[dict[str, Any]]
    ) -> list[ProposedItem]: ...
