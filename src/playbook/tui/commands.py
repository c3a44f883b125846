"""The command palette (ctrl+p): every workbench action, and jump to a bullet by id or words.

The palette knows its host only through `PaletteHost` (no import of the app): the app says
which commands apply now (from the action table, with each key as bound right now), and
how to find and open a bullet.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from rich.text import Text
from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider

from . import format as fmt
from .actions.cards import subject_id
from .actions.rule import why_not
from .actions.table import ACTIONS
from .screens.help import live_bindings

if TYPE_CHECKING:
    from ..store.views import BulletRow
    from .panes.base import Pane

JUMP_LIMIT = 12


@dataclass(frozen=True)
class PaletteCommand:
    name: str
    run: Callable[[], object]
    help: str


def action_commands(
    app: App[Any], panes: Sequence[Pane], perform: Callable[[str, Any], None]
) -> list[PaletteCommand]:
    """Every action that applies to what each pane has selected, named with its subject
    and hinted with its key as bound right now."""
    out = []
    for pane in panes:
        keys = live_bindings(app, [pane])
        for spec in ACTIONS.values():
            if spec.on not in pane.SUBJECTS:
                continue
            subject = pane.subject_for(spec.on)
            if why_not(spec.name, subject, pane.context):
                continue
            key = keys[spec.name][0] if spec.name in keys else ""
            name = f"{spec.palette} {subject_id(subject)}".strip()
            hint = f"{spec.tooltip} ({key})" if key else spec.tooltip
            out.append(PaletteCommand(name, partial(perform, spec.name, subject), hint))
    return out


class PaletteHost(Protocol):
    def palette_commands(self) -> list[PaletteCommand]: ...

    def find_bullets(self, query: str, limit: int = ...) -> list[tuple[BulletRow, float]]: ...

    def open_bullet(self, bullet_id: str) -> None: ...


class WorkbenchCommands(Provider):
    @property
    def host(self) -> PaletteHost:
        return cast(PaletteHost, self.app)

    async def discover(self) -> Hits:
        for c in self.host.palette_commands():
            yield DiscoveryHit(c.name, c.run, help=c.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for c in self.host.palette_commands():
            score = matcher.match(c.name)
            if score > 0:
                yield Hit(score, matcher.highlight(c.name), c.run, help=c.help)
        for row, score in self.host.find_bullets(query, limit=JUMP_LIMIT):
            display = Text("Jump to ")
            display.append(row.id, style=fmt.ID_BOLD)
            display.append("  ")
            display.append_text(fmt.untrusted(row.content[:80], one_line=True))
            yield Hit(
                score,
                display,
                partial(self.host.open_bullet, row.id),
                text=f"Jump to {row.id}",
                help=f"{row.maturity} {row.type}, score {row.effective:+z.2f}",
            )
