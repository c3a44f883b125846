"""Time travel and the views beside it: the whole workbench as the playbook stood at a
moment, then-vs-now, and what decay hid.

`t` asks for a moment, `<` and `>` step a week back and forth, `T` comes back to now:
every pane then shows the playbook as of that moment (states, maturities, scores,
conflicts, the queue), read from the log by the API (`review.rows_as_of` and its kin), with
every write dimmed and saying why. `c` compares then and now (`review.diff_since`); `h`
lists what the filter's words matched but decay (or a retirement) kept out of recall's top
results (`review.explain_hidden`), with pin, restore and a fresh mark at hand.
"""

from __future__ import annotations

import calendar
from collections.abc import Callable, Hashable
from contextlib import suppress
from datetime import datetime, timedelta
from functools import partial

from rich.text import Text
from textual.app import App
from textual.binding import Binding, BindingType
from textual.widgets import Input, Static, TextArea

from .. import review
from . import format as fmt
from .actions.spec import Context
from .data import Source
from .screens.compare import CompareScreen
from .screens.hidden import HiddenScreen
from .screens.moment import MomentModal
from .threads import in_thread

TRAVEL_ACTIONS = ("time_travel", "step", "step_months", "now", "compare", "hidden")


def parse_moment(text: str, now: datetime) -> datetime:
    return review.parse_moment(text, now)


def months_on(when: datetime, months: int) -> datetime:
    """`when` moved by whole calendar months (back when negative), the day clamped to the
    month's last (the same calendar months as the API's "3m")."""
    total = when.year * 12 + when.month - 1 + months
    year, month = divmod(total, 12)
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)


TRAVEL_BINDINGS: list[BindingType] = [
    Binding("t", "time_travel", "Travel", tooltip="See the playbook as it was then", id="travel"),
    Binding("less_than_sign", "step(-7)", "Week back", show=False, id="week-back"),
    Binding("greater_than_sign", "step(7)", "Week on", show=False, id="week-on"),
    Binding("left_curly_bracket", "step_months(-1)", "Month back", show=False, id="month-back"),
    Binding("right_curly_bracket", "step_months(1)", "Month on", show=False, id="month-on"),
    Binding("T", "now", "Now", tooltip="Back to the playbook as it is now", id="now"),
    Binding("c", "compare", "Then/now", tooltip="What changed since a moment", id="compare"),
    Binding("h", "hidden", "Hidden", tooltip="What decay hid from the filter", id="hidden"),
]


class Travel:
    """The moment the workbench shows (`as_of`, None: now) and the log read once for it.

    Given the app (the top bar, screens, workers), the playbook, the clock, what reads the
    playbook again at once, and the change token of what is on screen."""

    def __init__(
        self,
        app: App[None],
        source: Source,
        *,
        now: Callable[[], datetime],
        read_now: Callable[[], None],
        version: Callable[[], Hashable | None],
    ) -> None:
        self.app = app
        self.source = source
        self.now = now
        self.read_now = read_now
        self.version = version
        self.as_of: datetime | None = None
        self._warmed: list[datetime | None] = []  # the moment last read ahead around

    def travel_to(self, when: datetime | None) -> None:
        """Show the playbook as of `when` (None, or a moment within a minute of now: now;
        stepping a week on from a week back lands a few seconds short of now)."""
        if when is not None and when >= self.now() - timedelta(minutes=1):
            when = None
        if when == self.as_of:
            return
        self.as_of = when
        self.app.query_one("#topbar").set_class(when is not None, "-travelling")
        self.show_moment()
        self.read_now()
        self.app.refresh_bindings()

    def read_ahead(self) -> None:
        """Once the moment shown is on screen: read, in the background, what the travel
        keys would read next (a week and a month either side; `review.Moments` keeps it),
        so that a step reads only what can have changed since. Once per moment shown."""
        if self._warmed == [self.as_of]:
            return
        self._warmed = [self.as_of]
        now = self.now()
        base = self.as_of or now
        ahead = [base - timedelta(days=7), months_on(base, -1), base - timedelta(days=30),
                 base + timedelta(days=7), months_on(base, 1)]  # fmt: skip
        wanted = [m for m in ahead if m < now - timedelta(minutes=1)]
        in_thread(self.app, partial(self._read_ahead, wanted), "read-ahead", exclusive=True)

    def _read_ahead(self, moments: list[datetime]) -> None:
        # a read ahead only: a failure is left unsaid, the step itself reads what it needs
        # and says what went wrong
        with suppress(Exception), self.source.open(migrate=False) as store:
            self.source.moments.warm(store, moments)

    def show_moment(self) -> None:
        """The top bar says, unmistakably, which moment the workbench shows."""
        bar = self.app.query_one("#asof", Static)
        bar.display = self.as_of is not None
        if self.as_of is not None:
            text = Text()
            text.append(f" as of {fmt.moment(self.as_of)} ", style="bold reverse")
            text.append(" read-only · T: back to now", style="bold")
            bar.update(text)

    def ask_moment(self) -> None:
        start = fmt.moment(self.as_of) if self.as_of else ""
        self.app.push_screen(
            MomentModal(
                "Time travel",
                "The whole workbench shows the playbook as it stood then: states, maturities, "
                "scores, conflicts and the queue, from the feedback log. Read-only; T comes "
                "back to now, < and > step a week, { and } a month.",
                lambda text: parse_moment(text, self.now()),
                value=start,
                confirm="Travel",
            ),
            self.travel_to,
        )

    def step(self, days: int) -> None:
        self.travel_to((self.as_of or self.now()) + timedelta(days=days))

    def step_months(self, months: int) -> None:
        self.travel_to(months_on(self.as_of or self.now(), months))

    def compare(self) -> None:
        if self.as_of is not None:
            self.app.push_screen(CompareScreen(self.source, self.as_of))
            return
        self.app.push_screen(
            MomentModal(
                "Then and now",
                "Which rules appeared, were retired, changed rung, and which moved most in "
                "score since then.",
                lambda text: parse_moment(text, self.now()),
                value="30d",
                confirm="Compare",
            ),
            self._compare_since,
        )

    def _compare_since(self, when: datetime | None) -> None:
        if when is not None:
            self.app.push_screen(CompareScreen(self.source, when))

    def hidden(self, words: str, context: Context) -> None:
        self.app.push_screen(HiddenScreen(self.source, words, self.as_of, context))

    def check_action(self, action: str) -> bool | None:
        """Whether a travel key applies now; None for another action (not decided here)."""
        if action not in TRAVEL_ACTIONS:
            return None
        app = self.app
        if isinstance(app.focused, Input | TextArea) or app.screen is not app.screen_stack[0]:
            return False  # these letters type in a text box; other screens have their keys
        if action == "now":
            return self.as_of is not None
        return True
