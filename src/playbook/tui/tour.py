"""`playbook demo --tour`: the demo workbench walks itself through its panes, one caption
per step, advancing on a key, so anyone can demo it without rehearsal.

→ goes on (doing the step's action first, through the same action table and API as a
key would: approve, pin, block, resolve), ← shows the previous step again (nothing is
undone), escape on the caption's last step ends the tour. The demo playbook is a copy
made for this run, so the tour's writes touch nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Input, Static, TextArea

from .actions.table import ACTIONS
from .demo_app import DemoWorkbench
from .panes.conflicts import ConflictsPane
from .panes.proposals import ProposalsPane
from .screens.compare import CompareScreen
from .screens.hidden import HiddenScreen

TourAction = Callable[["TourWorkbench"], None]


@dataclass(frozen=True)
class Step:
    title: str
    caption: str
    show: TourAction  # go where the step is
    act: TourAction | None = None  # done when the viewer goes on (→)
    act_label: str = ""  # what → does here


class TourCaption(Static):
    """The caption, docked above the footer of whichever screen is showing."""

    DEFAULT_CSS = """
    TourCaption {
        dock: bottom;
        height: auto;
        max-height: 8;
        margin: 0 1 1 1;  /* above the footer, which docks at the bottom too */
        padding: 0 1;
        border: round $accent;
        border-title-color: $accent;
        border-title-style: bold;
        border-subtitle-color: $accent;
        border-subtitle-style: bold;
        background: $panel;
    }
    /* At 80x24 every row the caption takes is a row of the panel it describes. */
    .-short TourCaption { margin: 0 0 1 0; max-height: 6; }
    """


# ------------------------------------------------------------------------------ the steps


def _bullets(app: TourWorkbench) -> None:
    app.close_screens()
    app.travel_to(None)
    app.set_filter("")
    app.show_tab("bullets")
    app.bullets_pane.table.action_edge(0)


def _detail(app: TourWorkbench) -> None:
    app.close_screens()
    rows = app.snapshot.rows if app.snapshot else []
    best = max(
        (r for r in rows if r.state != "retired" and r.type == "rule"),
        key=lambda r: min(r.helpful, 4) + 3 * min(r.harmful, 1.5),
        default=None,
    )
    if best is not None:
        app.open_bullet(best.id)


def _proposal(app: TourWorkbench) -> None:
    app.close_screens()
    app.show_tab("proposals")
    pane = app.query_one(ProposalsPane)
    chosen = next(
        (p for p in pane.all if p.delta.get("type") == "replace" and not p.stale),
        next(iter(pane.all), None),
    )
    if chosen is not None:
        pane.table.move_to(chosen.id)
    app.tour_subject = chosen


def _approve(app: TourWorkbench) -> None:
    if app.tour_subject is not None:
        app.tour_write("approve", app.tour_subject)


def _pin_show(app: TourWorkbench) -> None:
    _bullets(app)
    rows = (app.row(str(k)) for k in app.bullets_pane.table.order)
    row = next((r for r in rows if r is not None and not r.pinned), None)
    if row is not None:
        app.bullets_pane.table.move_to(row.id)
    app.tour_subject = row


def _pin(app: TourWorkbench) -> None:
    if app.tour_subject is not None:
        app.tour_write("pin", app.tour_subject, reason="team policy (pinned in the tour)")


BLOCK_PATTERN = "Commit straight to main to save a review round"


def _blocked(app: TourWorkbench) -> None:
    app.close_screens()
    app.show_tab("blocked")


def _block(app: TourWorkbench) -> None:
    app.tour_write(
        "block_new", None, pattern=BLOCK_PATTERN, reason="main is shared; every change is reviewed"
    )


def _conflict(app: TourWorkbench) -> None:
    """A conflict whose right side can still be deprecated (not one already deprecated,
    which the step would deprecate again), selected so the caption matches the screen."""
    app.close_screens()
    app.show_tab("conflicts")
    pane = app.query_one(ConflictsPane)
    open_right = next(
        (
            v
            for v in pane.conflicts.values()
            if v.b.bullet is not None
            and v.b.bullet.maturity != "deprecated"
            and v.b.bullet.state != "retired"
        ),
        None,
    )
    if open_right is not None:
        pane.table.move_to(str(open_right.conflict.id))
    app.tour_subject = pane.current()


def _resolve(app: TourWorkbench) -> None:
    if app.tour_subject is not None:
        app.tour_write("deprecate_b", app.tour_subject, reason="the team follows the left rule")


def _travel(app: TourWorkbench) -> None:
    app.close_screens()
    app.show_tab("bullets")
    app.travel_to(app.now() - timedelta(days=90))


def _compare(app: TourWorkbench) -> None:
    app.close_screens()
    since = app.as_of or app.now() - timedelta(days=90)
    app.push_screen(CompareScreen(app.source, since))


def _hidden(app: TourWorkbench) -> None:
    app.close_screens()
    app.travel_to(None)
    app.set_filter("ci cache")
    app.push_screen(HiddenScreen(app.source, "ci cache", None, app.context))


STEPS: tuple[Step, ...] = (
    Step(
        "The playbook",
        "Every rule agents wrote down, scored at read time from its feedback log: help minus "
        "four times harm, each event decayed by age, times the rung it earned. The trend "
        "column is the last 90 days.",
        _bullets,
    ),
    Step(
        "One rule's story",
        "Its score over time with every feedback event on the curve (+ helpful, x harmful), "
        "where it came from in the session, its lineage and every decision taken on it.",
        _detail,
    ),
    Step(
        "Approve a proposal",
        "Agents only propose. This rewrite came from a Claude Code session through the "
        "SessionEnd hook (origin hook); the word diff shows what it changes, and the "
        "closest existing rules sit beside it.",
        _proposal,
        _approve,
        "approve it",
    ),
    Step(
        "Pin a rule",
        "A pinned rule keeps its rung whatever the feedback says, and no agent can retire "
        "or rewrite it.",
        _pin_show,
        _pin,
        "pin the selected rule",
    ),
    Step(
        "Block a pattern",
        "A blocked pattern is refused at the door: any add like it, from any agent, is "
        f'turned away. Next: block "{BLOCK_PATTERN}".',
        _blocked,
        _block,
        "block it",
    ),
    Step(
        "Resolve a conflict",
        "Two rules say opposite things. Keep both (k), deprecate one ([ or ]), or merge them "
        "(m: the merged rule keeps only the evidence it agrees with, and a pin only if you "
        "say so).",
        _conflict,
        _resolve,
        "deprecate the right one",
    ),
    Step(
        "Time travel",
        "The whole workbench as the playbook stood 90 days ago: states, rungs, scores, "
        "conflicts and the queue, from the log, read-only. t picks any date, < and > step a "
        "week, T comes back to now.",
        _travel,
    ),
    Step(
        "Then and now",
        "What changed since then: rules that appeared, were retired, changed rung, and "
        "those whose score moved most (c; also `playbook diff --since`).",
        _compare,
    ),
    Step(
        "What decay hid",
        "Recall shows the top results for 'ci cache'; these matched too but decay, a "
        "deprecation or a retirement kept them out, each with the numbers and what brings "
        "it back (p pin, r restore, + a fresh helpful mark). Also `recall --explain-hidden`.",
        _hidden,
    ),
    Step(
        "That's the tour",
        "Every step was a key: ? lists them all, ctrl+p finds any action or rule. q quits; "
        "the demo playbook is deleted on exit (--keep keeps it).",
        _bullets,
    ),
)


class TourWorkbench(DemoWorkbench):
    """The demo workbench with a guided tour over it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "tour(1)", "Next step", priority=True, id="tour-next"),
        Binding("left", "tour(-1)", "Step back", priority=True, id="tour-back"),
    ]

    def __init__(self, *args: Any, steps: tuple[Step, ...] = STEPS, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.steps = steps
        self.step = -1  # not started: the demo is still being built
        self.tour_subject: Any = None

    def snapshot_applied(self) -> None:
        super().snapshot_applied()
        if self.step < 0:
            self.add_class("-touring")  # toasts go to the top, off the caption
            self.go_to(0)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "tour":
            if isinstance(self.focused, Input | TextArea):
                return False  # the arrows move the cursor in a text box
            return self.step >= 0
        return super().check_action(action, parameters)

    def action_tour(self, direction: int) -> None:
        if direction > 0:
            act = self.steps[self.step].act
            if act is not None:
                act(self)
        self.go_to(max(0, min(len(self.steps) - 1, self.step + direction)))

    def go_to(self, index: int) -> None:
        self.step = index
        step = self.steps[index]
        step.show(self)
        self.call_after_refresh(self.show_caption)

    def show_caption(self) -> None:
        """The step's caption on the screen showing now (updated in place if there is one;
        the captions of screens below stay hidden under it)."""
        step = self.steps[self.step]
        last = self.step == len(self.steps) - 1
        go_on = f"→ {step.act_label}, then next" if step.act_label else "→ next"
        keys = ("← back   " if self.step else "") + ("q quits" if last else go_on)
        title = f"Tour {self.step + 1}/{len(self.steps)}: {step.title}"
        found = self.screen.query(TourCaption)
        caption = found.first() if found else TourCaption()
        caption.update(Text(step.caption))
        caption.border_title = title
        caption.border_subtitle = keys  # on the border: a line less over the panels
        if not found:
            self.screen.mount(caption)

    def close_screens(self) -> None:
        """Back to the workbench's own screen (the tour opens its views itself)."""
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def tour_write(self, name: str, subject: Any, **values: str) -> None:
        """Do an action as its key would, without its dialog (the caption said what)."""
        spec = ACTIONS[name]
        self.acting.run_write(spec, subject, dict(values))
