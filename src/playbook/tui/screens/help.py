"""The `?` help screen, written from the live bindings (Posting's way): each pane's keys as
they are bound right now (a user keymap included), what the filter words are, and what the
numbers mean under the policy the workbench runs with.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Static

from ...core.policy import Policy
from .. import format as fmt

# Scrolling keys every scrollable widget inherits; the tables do not scroll sideways.
GENERIC = frozenset({"scroll_left", "scroll_right", "page_left", "page_right"})


@dataclass(frozen=True)
class HelpSection:
    title: str
    keys: list[tuple[str, str]]  # (keys as shown, what they do)
    note: str = ""


def live_bindings(app: App[Any], nodes: Iterable[DOMNode]) -> dict[str, tuple[str, Binding]]:
    """action -> (its keys as shown, its binding) for every described binding of these
    nodes, after the app's keymap. The same action on two nodes (the Bullets and Detail
    panes) is listed once."""
    grouped: dict[str, tuple[list[str], Binding]] = {}
    for node in nodes:
        bindings = node._bindings.copy()
        bindings.apply_keymap(app._keymap)
        for key, binding in bindings:
            if not binding.description or binding.action in GENERIC:
                continue
            keys, _ = grouped.setdefault(binding.action, ([], binding))
            shown = app.get_key_display(Binding(key, binding.action))
            if shown not in keys:
                keys.append(shown)
    return {action: (" ".join(keys), b) for action, (keys, b) in grouped.items()}


def live_keys(app: App[Any], nodes: Iterable[DOMNode]) -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen."""
    return [(k, b.tooltip or b.description) for k, b in live_bindings(app, nodes).values()]


def help_sections(
    app: App[Any], groups: list[tuple[str, list[DOMNode], list[tuple[str, str]], str]]
) -> list[HelpSection]:
    """(title, nodes, extra keys, note) -> sections of the nodes' live keys."""
    return [
        HelpSection(title, [*live_keys(app, nodes), *extra], note)
        for title, nodes, extra, note in groups
    ]


def numbers_text(policy: Policy) -> Text:
    """What score, help, harm and stale mean, with this policy's constants."""
    m = policy.multiplier
    text = Text()
    text.append("score", style="bold")
    text.append(
        f" is the effective score: (helpful - {policy.harm_multiplier:g} x harmful) x the "
        f"maturity multiplier (candidate {m('candidate'):g}, established {m('established'):g}, "
        f"proven {m('proven'):g}, deprecated {m('deprecated'):g}). "
    )
    text.append("help", style="bold")
    text.append(" and ")
    text.append("harm", style="bold")
    text.append(
        " are the feedback totals decayed by age (half-life "
        f"{policy.half_life_days:g} days), lineage included. A bullet is "
    )
    text.append("stale", style="bold")
    text.append(f" after {policy.stale_after_days:g} days without feedback.")
    return text


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background 60%; }
    HelpScreen > VerticalScroll {
        width: 100; max-width: 95%; height: 90%;
        border: round $primary; background: $surface; padding: 0 2;
        border-title-style: bold;
    }
    HelpScreen .help-title { text-style: bold; color: $accent; margin: 1 0 0 0; }
    HelpScreen .help-body { margin: 0 0 0 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", tooltip="Back to the workbench"),
    ]

    def __init__(self, intro: str, sections: list[HelpSection], numbers: Text) -> None:
        super().__init__()
        self.intro = intro
        self.sections = sections
        self.numbers = numbers

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "Help"
            box.border_subtitle = "escape to close"
            yield Static(Text(self.intro), classes="help-body")
            for section in self.sections:
                yield Static(section.title, classes="help-title")
                table = Table.grid(padding=(0, 2))
                table.add_column(style=fmt.ACCENT_BOLD, no_wrap=True, min_width=10)
                table.add_column()
                for keys, what in section.keys:
                    table.add_row(keys, what)
                body: Any = table
                if section.note:
                    body = Group(table, Text(section.note, style=fmt.MUTED))
                yield Static(body, classes="help-body")
            yield Static("The numbers", classes="help-title")
            yield Static(self.numbers, classes="help-body")

    def action_close(self) -> None:
        self.dismiss(None)
