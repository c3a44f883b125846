"""What the workbench offers beyond its keys: the command palette's list (going places,
filters, the review queue's filters, time travel, every action that applies to what each
pane has selected) and the help screen, both written from the live bindings."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.widgets import TabbedContent

from .commands import PaletteCommand, action_commands
from .filterspec import FLAGS
from .panes.blocked import BlockedPane
from .panes.conflicts import ConflictsPane
from .panes.detail import DetailPane
from .panes.proposals import ProposalsPane
from .queue_view import session_name
from .screens.help import HelpScreen, help_sections, numbers_text
from .screens.policy import open_policy_screen
from .widgets.table import RowTable

if TYPE_CHECKING:
    from .app import Workbench
    from .panes.base import ActionPane

INTRO = (
    "Review what agents learned: approve or reject proposals, pin rules, block patterns, "
    "resolve conflicts, and read the evidence behind every rule. Every change goes through "
    "the same API as the `playbook` command, recorded as a human decision. Travel back in "
    "time to see the playbook as it was, compare then and now, and see what decay hid."
)


def help_screen(app: Workbench) -> HelpScreen:
    filter_words = " ".join(f"is:{f}" for f in FLAGS)
    groups = [
        (
            "Everywhere",
            [app],
            [("< >", "Time travel: a week back, a week on")],
            "ctrl+p opens the command palette: every action that applies here, and jump to "
            "a bullet by id or words. While travelling in time every write is dimmed.",
        ),
        ("Tables", [app.query_one(RowTable)], [], ""),
        (
            "Bullets and Detail",
            [app.bullets_pane, app.query_one(DetailPane)],
            [],
            f"Filter words: {filter_words} (is:retired and is:all show superseded and "
            "inverted bullets too).",
        ),
        (
            "Proposals",
            [app.query_one(ProposalsPane)],
            [],
            "Filter: type:add session:NAME from:hook and words. With proposals marked "
            "(space), a and x decide all the marked ones after one confirmation.",
        ),
        ("Conflicts", [app.query_one(ConflictsPane)], [], ""),
        ("Blocked", [app.query_one(BlockedPane)], [], ""),
    ]
    return HelpScreen(INTRO, help_sections(app, groups), numbers_text(app.policy))


def queue_commands(app: Workbench) -> list[PaletteCommand]:
    """Narrow the review queue: hook-driven sessions, one session, one delta type."""
    pane = app.query_one(ProposalsPane)
    out = [
        PaletteCommand(
            "Proposals from hook-driven sessions",
            partial(app.filter_proposals, "from:hook"),
            "from:hook in the Proposals filter",
        )
    ]
    current = pane.current()
    ref = current.provenance.session_ref if current else None
    if ref:
        name = session_name(ref)
        out.append(
            PaletteCommand(
                f"Proposals of session {name}",
                partial(app.filter_proposals, f"session:{name}"),
                "Only what this proposal's session proposed",
            )
        )
    for kind in sorted({str(p.delta.get("type")) for p in pane.all}):
        out.append(
            PaletteCommand(
                f"Proposals of type {kind}",
                partial(app.filter_proposals, f"type:{kind}"),
                f"type:{kind} in the Proposals filter",
            )
        )
    return out


def travel_commands(app: Workbench) -> list[PaletteCommand]:
    out = [
        PaletteCommand("Time travel", app.action_time_travel, "The playbook as it was then (t)"),
        PaletteCommand("A week back", partial(app.action_step, -7), "Time travel (<)"),
        PaletteCommand("Then and now", app.action_compare, "What changed since a moment (c)"),
        PaletteCommand("What decay hid", app.action_hidden, "Matches recall leaves out (h)"),
    ]
    if app.as_of is not None:
        out.insert(1, PaletteCommand("Back to now", app.action_now, "Leave time travel (T)"))
        out.insert(2, PaletteCommand("A week on", partial(app.action_step, 7), "(>)"))
    return out


def workbench_commands(app: Workbench) -> list[PaletteCommand]:
    """What the palette offers now: going places, filters, and every action that applies
    to what each pane has selected (its key as bound right now)."""
    from .app import TABS

    out = [
        PaletteCommand(f"Go to {TABS[t][0]}", partial(app.show_tab, t), f"Tab {i}")
        for i, t in enumerate(TABS, 1)
    ]
    out.append(PaletteCommand("Filter bullets", app.action_filter, "Words like recall (/)"))
    for flag, what in (
        ("pinned", "Show pinned bullets"),
        ("stale", "Show stale bullets"),
        ("deprecated", "Show deprecated bullets"),
        ("anti", "Show anti-patterns"),
        ("retired", "Show retired bullets"),
    ):
        out.append(PaletteCommand(what, partial(app.set_filter, f"is:{flag}"), f"is:{flag}"))
    out += queue_commands(app)
    out += travel_commands(app)
    active = app.query_one(TabbedContent).active
    panes: list[ActionPane] = [
        app.query_one(DetailPane) if active == "detail" else app.bullets_pane,
        app.query_one(ProposalsPane),
        app.query_one(ConflictsPane),
        app.query_one(BlockedPane),
    ]
    out += action_commands(app, panes, app.perform)
    out.append(
        PaletteCommand(
            "Measured policy", partial(open_policy_screen, app), "Which decay fits your log"
        )
    )
    out.append(PaletteCommand("Help", app.action_help, "Keys and what the numbers mean (?)"))
    out.append(PaletteCommand("Quit", app.action_quit, "Leave the workbench (q, ctrl+q)"))
    return out
