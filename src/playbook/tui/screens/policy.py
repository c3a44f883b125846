"""The Policy screen: which policy would have predicted this playbook's feedback best?

Opened from the command palette ("Measured policy"). It runs `policy_eval.evaluate` in a
thread worker on a connection of its own (the replay of a large log takes seconds), shows
a progress bar meanwhile, then the candidates as a table, a forest plot of the primary
metric's paired difference with its 95% interval (grouped by half-life), and the verdict.
It only reads: writing a recommendation stays a deliberate `policy eval --write`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, ProgressBar, Static
from textual.worker import get_current_worker

from ...store import open_store
from .. import format as fmt
from .policy_plot import ForestPlot, PlotRow

if TYPE_CHECKING:
    from ...core.policy import Policy
    from ...policy_eval import EvalReport


def open_policy_screen(app: Any) -> None:
    """The palette command's action: evaluate against the policy the workbench scores with
    (`--policy` / `$PLAYBOOK_POLICY`, read once when it started, as the CLI reads it)."""
    app.push_screen(PolicyScreen(app.source.path, app.policy))


class _Closed(Exception):
    """The screen closed while the replay ran."""


class PolicyScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    PolicyScreen { align: center middle; background: $background 60%; }
    PolicyScreen > VerticalScroll {
        width: 96%; height: 94%;
        border: round $primary; background: $surface; padding: 0 1;
        border-title-style: bold;
    }
    PolicyScreen #policy-status { color: $text-muted; height: auto; }
    PolicyScreen ProgressBar { margin: 0 0 1 0; }
    PolicyScreen #policy-report > Vertical { height: auto; }
    PolicyScreen #policy-table { height: auto; max-height: 60; margin: 1 0; }
    PolicyScreen #policy-verdict { margin: 1 0 0 0; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", tooltip="Back to the workbench"),
    ]
    AUTO_FOCUS = "#policy-report"

    def __init__(self, path: Path | str, policy: Policy) -> None:
        super().__init__()
        self.path = path  # a file or a database URL (never made a Path)
        self.policy = policy
        self.report: EvalReport | None = None

    def compose(self) -> ComposeResult:
        # The report scrolls as one (its focus first): at 80x24 the forest plot and the
        # verdict are below the table, and the keys must reach them; tab gives the table
        # the keys, for its columns beyond the edge (left and right).
        with VerticalScroll(id="policy-report") as box:
            box.border_title = "Measured policy"
            box.border_subtitle = "↑↓ pgup pgdn scroll · tab: the table · esc closes"
            yield Static(
                "Replaying the feedback log: each candidate's view just before every mark, "
                "compared on the held-out last 30% of the log…",
                id="policy-status",
                markup=False,
            )
            yield ProgressBar(total=100, show_eta=False, id="policy-progress")
            with Vertical():
                yield DataTable(id="policy-table", zebra_stripes=True, cursor_type="row")
                yield ForestPlot(id="policy-plot")
                yield Static("", id="policy-verdict", markup=False)

    def on_mount(self) -> None:
        self._evaluate()

    @work(thread=True, exclusive=True, exit_on_error=False, group="policy-eval")
    def _evaluate(self) -> None:
        from ...policy_eval import evaluate  # lazy: numpy: the workbench's first frame

        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            if worker.is_cancelled:  # the screen was closed: stop replaying
                raise _Closed
            self.app.call_from_thread(self._progress, done, total)

        try:
            with open_store(self.path, self.policy, mode="read") as store:
                report = evaluate(store, progress=progress)
        except _Closed:
            return
        except Exception as exc:  # shown, never a crash of the workbench
            self.app.call_from_thread(self._failed, f"could not evaluate: {exc}")
            return
        self.app.call_from_thread(self.show_report, report)

    def _progress(self, done: int, total: int) -> None:
        if self.is_attached:
            self.query_one(ProgressBar).update(total=max(1, total), progress=done)

    def _failed(self, message: str) -> None:
        if self.is_attached:
            self.query_one("#policy-status", Static).update(Text(message, style=fmt.BAD))

    def show_report(self, report: EvalReport) -> None:
        from ...policy_eval.report import table_cells  # lazy: numpy: the workbench's first frame

        if not self.is_attached:
            return
        self.report = report
        log = report.log
        self.query_one(ProgressBar).display = False
        self.query_one("#policy-status", Static).update(
            fmt.untrusted(
                f"{log.events:,} events, {log.span}; held out from {(log.split_at or '')[:10]}:"
                f" {log.heldout_events:,} events in {log.heldout_sessions:,} sessions. Δ is "
                "the improvement over the current policy with its 95% session-bootstrap "
                "interval; * marks the registered challenger (best on the training span)."
            )
        )
        head, rows = table_cells(report)
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns(*head)
        for row in rows:
            table.add_row(*(fmt.untrusted(cell, one_line=True) for cell in row))
        self.query_one(ForestPlot).set_rows(
            plot_rows(report),
            "held-out log-loss gain vs the current policy (nats per event; right is better)",
        )
        style = fmt.GOOD if report.verdict.status == "recommended" else fmt.ACCENT
        self.query_one("#policy-verdict", Static).update(
            fmt.bold(fmt.untrusted(report.line(), style=style))
        )

    def action_close(self) -> None:
        self.workers.cancel_group(self, "policy-eval")
        self.dismiss(None)


def plot_rows(report: EvalReport) -> list[PlotRow]:
    """The primary metric per candidate, ordered by half-life (then harm weight)."""
    from ...policy_eval import PRIMARY  # lazy: numpy: the workbench's first frame

    rows = []
    for i, r in enumerate(report.rows):
        est = r.metrics.get(PRIMARY)
        if est is None:
            continue
        p = r.candidate.policy
        rows.append(
            (
                (p.half_life_days, p.harm_multiplier, i),
                PlotRow(
                    r.candidate.name if i else "current",
                    est.diff,
                    est.lo,
                    est.hi,
                    current=i == 0,
                    mark="*" if r.candidate.name == report.verdict.challenger else "",
                ),
            )
        )
    return [row for _, row in sorted(rows, key=lambda t: t[0])]
