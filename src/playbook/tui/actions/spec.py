"""The shape of a workbench action: what it applies to, the dialog it asks, the write."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from rich.text import Text

from ..screens.modals import Field, Variant

if TYPE_CHECKING:
    from ...core.policy import Policy
    from ...review.proposals import Proposal
    from ...store.views import BulletRow
    from ..data import Source

Subject = Literal["bullet", "proposal", "marked", "conflict", "blocked", "none"]


@dataclass(frozen=True)
class Marked:
    """The proposals marked in the Proposals pane (space), decided together."""

    proposals: tuple[Proposal, ...]

    @property
    def id(self) -> str:
        n = len(self.proposals)
        return f"{n} marked proposal{'s' if n != 1 else ''}"

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.proposals]


@dataclass(frozen=True)
class Context:
    """What deciding and asking need besides the subject: the bullet rows of the snapshot
    on screen, and the policy. The app hands a new one to every pane with each snapshot."""

    rows: Mapping[str, BulletRow]
    policy: Policy
    as_of: datetime | None = None  # time travel: every write is refused (read-only)

    def row(self, bullet_id: str | None) -> BulletRow | None:
        return self.rows.get(bullet_id) if bullet_id else None


@dataclass(frozen=True)
class Refusal:
    """Why an action does not apply. `hide`: another action takes its key here (unpin
    instead of pin), so the footer leaves it out instead of dimming it."""

    text: str
    hide: bool = False


@dataclass(frozen=True)
class Ask:
    """The dialog an action opens before it writes (None on the spec: it writes at once)."""

    kind: Literal["form", "confirm", "harmful"]
    title: Callable[[Any], str]
    explain: Callable[[Any, Context], str]
    confirm: str = "Confirm"
    variant: Variant = "primary"
    fields: Callable[[Any], list[Field]] = field(default=lambda s: [])
    subject: Callable[[Any, Context], Text | None] = field(default=lambda s, h: None)


Write = Callable[["Source", Any, dict[str, str]], str]


@dataclass(frozen=True)
class ActionSpec:
    name: str  # the Textual action name; its binding id is the same with dashes
    on: Subject
    key: str
    label: str  # in the footer
    tooltip: str  # in the footer's tooltip, the help screen and the palette
    palette: str  # the palette's command, followed by the subject's id
    write: Write
    ask: Ask | None = None

    @property
    def binding_id(self) -> str:
        return self.name.replace("_", "-")
