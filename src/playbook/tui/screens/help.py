"""The `?` help screen: every key, by pane, and what the numbers mean."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# Playbook workbench

Review what agents learned: approve or reject proposals, pin rules, block patterns,
resolve conflicts, and read the evidence behind every rule. Every change goes through
the same API as the `playbook` command, recorded as a **human** decision.

## Everywhere

| key | does |
|---|---|
| `1` … `5` | Bullets, Detail, Proposals, Conflicts, Blocked |
| `ctrl+p` | command palette: every action, and *jump to a bullet* by id or words |
| `?` | this help |
| `ctrl+q` | quit |

## Bullets and Detail

| key | does |
|---|---|
| `/` | filter: words ranked like `recall` (relevance x score), plus `is:` words |
| `escape` | clear the filter |
| `enter` | open the bullet in Detail |
| `s` / `S` | sort by the next column / reverse (or click a column header) |
| `+` / `-` | mark helpful / harmful |
| `p` | pin (asks why) or unpin; a pinned rule's maturity never moves |
| `b` | block this bullet's pattern: later adds like it are refused |
| `d` / `r` | deprecate (asks why) / restore a deprecated bullet |

Filter words: `is:pinned` `is:stale` `is:rule` `is:anti` `is:candidate` `is:established`
`is:proven` `is:deprecated`, and `is:retired` / `is:all` to see superseded bullets too.

## Proposals

| key | does |
|---|---|
| `a` | approve: curated with the provenance recorded when it was proposed |
| `e` | edit the text, then approve |
| `x` | reject, with a reason |
| `B` | reject and block the pattern |

## Conflicts

| key | does |
|---|---|
| `k` | keep both (the flag is resolved) |
| `[` / `]` | deprecate the left / right bullet |
| `m` | merge both into one rule you write |

## Blocked

| key | does |
|---|---|
| `n` | block a new pattern |
| `u` | unblock |

## The numbers

**score** is the effective score: (helpful - 4 x harmful) x the maturity multiplier
(candidate 0.5, established 1, proven 1.5, deprecated 0). **help** and **harm** are the
feedback totals decayed by age (half-life 90 days), lineage included. A bullet is **stale**
after 180 days without feedback.
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; background: $background 60%; }
    HelpScreen > VerticalScroll {
        width: 100; max-width: 95%; height: 90%;
        border: round $primary; background: $surface; padding: 0 2;
        border-title-style: bold;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "close", "Close", tooltip="Back to the workbench"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "Help"
            box.border_subtitle = "escape to close"
            yield Markdown(HELP)

    def action_close(self) -> None:
        self.dismiss(None)
