"""What the workbench offers beyond its keys: the command palette's list (going places,
filters, the review queue's filters, time travel, every action that applies to what each
pane has selected) and the help screen, both written from the live bindings."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any, Protocol, cast

from textual.app import App
from textual.dom import DOMNode
from textual.widgets import TabbedContent

from ..core.policy import Policy
from .commands import PaletteCommand, action_commands
from .panes.base import Pane
from .panes.proposals import ProposalsPane
from .queue_view import session_name
from .screens.help import HelpScreen, help_sections, numbers_text
from .screens.policy import open_policy_screen
from .widgets.table import RowTable


class PaletteApp(Protocol):
    """What the palette and the help screen need of the app (they never import it)."""

    policy: Policy

    @property
    def as_of(self) -> datetime | None: ...

    def perform(self, name: str, subject: Any) -> None: ...
    def action_panes(self) -> list[Pane]: ...
    def show_tab(self, tab: str) -> None: ...
    def filter_proposals(self, text: str) -> None: ...
    def set_filter(self, text: str) -> None: ...
    def action_filter(self) -> None: ...
    def action_time_travel(self) -> None: ...
    def action_step(self, days: int) -> None: ...
    def action_now(self) -> None: ...
    def action_compare(self) -> None: ...
    def action_hidden(self) -> None: ...
    def action_help(self) -> None: ...


def _app(app: PaletteApp) -> App[Any]:
    """The app itself, for what Textual's App offers (queries, quitting)."""
    return cast(App[Any], app)


INTRO = (
    "Review what agents learned: approve or reject proposals, pin rules, block patterns, "
    "resolve conflicts, and read the evidence behind every rule. Every change goes through "
    "the same API as the `playbook` command, recorded as a human decision. Travel back in "
    "time to see the playbook as it was, compare then and now, and see what decay hid."
)


def help_screen(app: PaletteApp) -> HelpScreen:
    host = _app(app)
    groups: list[tuple[str, list[DOMNode], list[tuple[str, str]], str]] = [
        (
            "Everywhere",
            [host],
            [("< >", "Time travel: a week back, a week on")],
            "ctrl+p opens the command palette: every action that applies here, and jump to "
            "a bullet by id or words. While travelling in time every write is dimmed.",
        ),
        ("Tables", [host.query_one(RowTable)], [], ""),
    ]
    sections: dict[str, tuple[list[DOMNode], list[str]]] = {}  # a title: its panes, notes
    for pane in app.action_panes():
        title, note = pane.HELP_SECTION
        nodes, notes = sections.setdefault(title or pane.TITLE, ([], []))
        nodes.append(pane)
        notes.extend([note] if note else [])
    groups += [(title, nodes, [], " ".join(notes)) for title, (nodes, notes) in sections.items()]
    return HelpScreen(INTRO, help_sections(host, groups), numbers_text(app.policy))


def queue_commands(app: PaletteApp) -> list[PaletteCommand]:
    """Narrow the review queue: hook-driven sessions, one session, one delta type."""
    pane = _app(app).query_one(ProposalsPane)
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


def travel_commands(app: PaletteApp) -> list[PaletteCommand]:
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


def workbench_commands(app: PaletteApp) -> list[PaletteCommand]:
    """What the palette offers now: going places, filters, and every action that applies
    to what each pane has selected (its key as bound right now)."""
    panes = app.action_panes()
    out = [
        PaletteCommand(f"Go to {p.TITLE}", partial(app.show_tab, p.TAB), f"Tab {i}")
        for i, p in enumerate(panes, 1)
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
    active = _app(app).query_one(TabbedContent).active
    out += action_commands(_app(app), acting_panes(panes, active), app.perform)
    out.append(
        PaletteCommand(
            "Measured policy", partial(open_policy_screen, app), "Which decay fits your log"
        )
    )
    out.append(PaletteCommand("Help", app.action_help, "Keys and what the numbers mean (?)"))
    out.append(PaletteCommand("Quit", _app(app).action_quit, "Leave the workbench (q, ctrl+q)"))
    return out


def acting_panes(panes: list[Pane], active: str) -> list[Pane]:
    """The panes whose selection the palette offers actions on: of panes whose keys act on
    the same subjects (Bullets and Detail), the active tab's, else the first."""
    chosen: list[Pane] = []
    for pane in panes:
        rival = next((p for p in chosen if set(p.SUBJECTS) & set(pane.SUBJECTS)), None)
        if rival is None:
            chosen.append(pane)
        elif active == pane.TAB:
            chosen[chosen.index(rival)] = pane
    return chosen
