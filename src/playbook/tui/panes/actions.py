"""The actions on one bullet, shared by the Bullets and Detail panes.

The pane says which bullet is current; the app asks (modals) and writes (thread workers).
`check_action` hides what cannot apply (unpin on an unpinned rule) and dims what has no
subject (nothing selected, or a retired bullet), so the footer always tells the truth.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding

if TYPE_CHECKING:
    from ...store.views import BulletRow

BULLET_ACTIONS = {"helpful", "harmful", "pin", "unpin", "block", "deprecate", "restore"}


class BulletActions:
    ACTION_BINDINGS: ClassVar[list[Binding]] = [
        Binding("plus,equals_sign", "helpful", "Helpful", tooltip="Mark helpful", id="helpful"),
        Binding("minus", "harmful", "Harmful", tooltip="Mark harmful, with a reason", id="harmful"),
        Binding("p", "pin", "Pin", tooltip="Pin: its maturity never moves", id="pin"),
        Binding("p", "unpin", "Unpin", tooltip="Unpin: maturity follows evidence", id="unpin"),
        Binding("b", "block", "Block", tooltip="Block this bullet's pattern", id="block"),
        Binding("d", "deprecate", "Deprecate", tooltip="Deprecate, with a reason", id="deprecate"),
        Binding("r", "restore", "Restore", tooltip="Restore a deprecated bullet", id="restore"),
    ]

    app: Any

    def current_bullet_id(self) -> str | None:
        raise NotImplementedError

    def current_row(self) -> BulletRow | None:
        bid = self.current_bullet_id()
        return self.app.row(bid) if bid else None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in BULLET_ACTIONS:
            return True
        row = self.current_row()
        if action == "unpin":
            return bool(row and row.pinned and row.state != "retired")
        if action == "restore":
            return bool(row and row.maturity == "deprecated" and row.state != "retired")
        if action == "pin" and row is not None and row.pinned:
            return False
        if action == "deprecate" and row is not None and row.maturity == "deprecated":
            return False
        if row is None or row.state == "retired":
            return None
        return True

    def _act(self, action: str) -> None:
        bid = self.current_bullet_id()
        if bid and self.check_action(action, ()):
            self.app.bullet_action(action, bid)

    def action_helpful(self) -> None:
        self._act("helpful")

    def action_harmful(self) -> None:
        self._act("harmful")

    def action_pin(self) -> None:
        self._act("pin")

    def action_unpin(self) -> None:
        self._act("unpin")

    def action_block(self) -> None:
        self._act("block")

    def action_deprecate(self) -> None:
        self._act("deprecate")

    def action_restore(self) -> None:
        self._act("restore")
