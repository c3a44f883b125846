"""The command palette (ctrl+p): every workbench action, and jump to a bullet by id or words."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, cast

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from . import format as fmt
from .screens.policy import open_policy_screen

if TYPE_CHECKING:
    from .app import Workbench

JUMP_LIMIT = 12


class WorkbenchCommands(Provider):
    @property
    def workbench(self) -> Workbench:
        return cast("Workbench", self.app)

    def commands(self) -> list[tuple[str, Callable[[], object], str]]:
        app = self.workbench
        out: list[tuple[str, Callable[[], object], str]] = [
            ("Go to Bullets", partial(app.show_tab, "bullets"), "Every rule with its score (1)"),
            ("Go to Detail", partial(app.show_tab, "detail"), "The selected bullet in full (2)"),
            ("Go to Proposals", partial(app.show_tab, "proposals"), "Deltas awaiting review (3)"),
            ("Go to Conflicts", partial(app.show_tab, "conflicts"), "Rules that disagree (4)"),
            ("Go to Blocked", partial(app.show_tab, "blocked"), "Patterns refused for good (5)"),
            ("Filter bullets", app.action_filter, "Words ranked like recall (/)"),
            ("Show pinned bullets", partial(app.set_filter, "is:pinned"), "Filter is:pinned"),
            ("Show stale bullets", partial(app.set_filter, "is:stale"), "Filter is:stale"),
            (
                "Show deprecated bullets",
                partial(app.set_filter, "is:deprecated"),
                "Filter is:deprecated",
            ),
            ("Show anti-patterns", partial(app.set_filter, "is:anti"), "Filter is:anti"),
            (
                "Show retired bullets",
                partial(app.set_filter, "is:retired"),
                "Superseded or inverted bullets",
            ),
            ("Block a pattern", app.block_new, "Refuse adds like it from now on"),
            ("Measured policy", partial(open_policy_screen, app), "Which decay fits your log"),
            ("Help", app.action_help, "Keys and what the numbers mean (?)"),
            ("Quit", app.action_quit, "Leave the workbench (ctrl+q)"),
        ]
        bid = app.current_bullet_id()
        if bid:
            for action, label in (
                ("helpful", "Mark helpful"),
                ("harmful", "Mark harmful"),
                ("pin", "Pin"),
                ("unpin", "Unpin"),
                ("block", "Block the pattern of"),
                ("deprecate", "Deprecate"),
                ("restore", "Restore"),
            ):
                if app.bullet_action_applies(action, bid):
                    out.append(
                        (
                            f"{label} {bid}",
                            partial(app.bullet_action, action, bid),
                            "The selected bullet",
                        )
                    )
        proposal = app.current_proposal()
        if proposal is not None:
            for action, label in (
                ("approve", "Approve proposal"),
                ("edit", "Edit and approve proposal"),
                ("reject", "Reject proposal"),
                ("reject_block", "Reject proposal and block its pattern"),
            ):
                out.append(
                    (
                        f"{label} {proposal.id}",
                        partial(app.proposal_action, action, proposal),
                        "The selected proposal",
                    )
                )
        return out

    async def discover(self) -> Hits:
        for name, callback, help_text in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, callback, help_text in self.commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), callback, help=help_text)
        app = self.workbench
        for row, score in app.find_bullets(query, limit=JUMP_LIMIT):
            display = Text("Jump to ")
            display.append(row.id, style="bold #7aa2f7")
            display.append("  ")
            display.append_text(fmt.untrusted(row.content[:80], one_line=True))
            yield Hit(
                score,
                display,
                partial(app.open_bullet, row.id),
                text=f"Jump to {row.id}",
                help=f"{row.maturity} {row.type}, score {row.effective:+.2f}",
            )
