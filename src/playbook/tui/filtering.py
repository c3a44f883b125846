"""The bullets table's workers: recall's ranking of the `/` words, and the trend column.

A keystroke posts `BulletsPane.FilterChanged`; the worker reads keyword relevance from the
token index (with numpy column arrays on large playbooks) and posts the order back; a stale
answer for an older keystroke is dropped by the pane. Rows drawn without their trend post
`BulletsPane.TrendsWanted`; a worker reads those trends only (as of the moment shown).
"""

from __future__ import annotations

import time
from datetime import datetime

from textual import on, work
from textual.widgets import Input
from textual.worker import get_current_worker

from .messages import FilterRanked, IndexReady, TrendsLoaded
from .ordering import RowIndex, rank_view
from .panes.bullets import BulletsPane
from .refresh import LiveApp
from .trends import load_trends

INDEX_FROM = 5_000  # bullets from which sorting and ranking use a numpy index


class FilteringApp(LiveApp):
    """Needs `bullets_pane` and `show_tab` from the app."""

    bullets_pane: BulletsPane
    as_of: datetime | None = None  # the moment shown (time travel), None: now

    def show_tab(self, tab: str) -> None:
        raise NotImplementedError

    # ---------------------------------------------------------------- filter
    @on(BulletsPane.FilterChanged)
    def _filter_changed(self, message: BulletsPane.FilterChanged) -> None:
        self._rank_worker(message.text)

    @work(thread=True, exclusive=True, exit_on_error=False, group="filter")
    def _rank_worker(self, text: str) -> None:
        started = time.perf_counter()
        pane = self.bullets_pane
        rows, view = pane.worker_view()
        index = pane.index if pane.index is not None and pane.index.rows is rows else None
        if index is None and len(rows) >= INDEX_FROM:
            index = RowIndex(rows)
            self.post_message(IndexReady(index))
        view, order = rank_view(self.source, text, rows, view, pane.policy, index)
        if not get_current_worker().is_cancelled:
            self.post_message(
                FilterRanked(text, view.relevance, time.perf_counter() - started, order, rows)
            )

    @on(IndexReady)
    def _index_ready(self, message: IndexReady) -> None:
        pane = self.bullets_pane
        if message.index.rows is pane.rows:
            pane.index = message.index

    @on(FilterRanked)
    def _filter_ranked(self, message: FilterRanked) -> None:
        self.bullets_pane.set_relevance(
            message.text, message.relevance, message.order, message.rows
        )
        self.filter_applied(message.text)

    @on(BulletsPane.TrendsWanted)
    def _trends_wanted(self, message: BulletsPane.TrendsWanted) -> None:
        self._trend_worker(message.ids, self.bullets_pane.epoch, self.as_of)

    @work(thread=True, exit_on_error=False, group="trends")
    def _trend_worker(self, ids: list[str], epoch: int, as_of: datetime | None) -> None:
        trends = load_trends(self.source, ids, as_of)
        if not get_current_worker().is_cancelled:
            self.post_message(TrendsLoaded(trends, epoch))

    @on(TrendsLoaded)
    def _trends_loaded(self, message: TrendsLoaded) -> None:
        if not self.closing:
            self.bullets_pane.set_trends(message.trends, message.epoch)

    # ---------------------------------------------------------------- trends

    def filter_applied(self, text: str) -> None:
        """Called after a filter's ranking reached the table (a hook for benchmarks)."""

    def set_filter(self, text: str) -> None:
        self.show_tab("bullets")
        self.query_one("#filter", Input).value = text

    def action_filter(self) -> None:
        self.show_tab("bullets")
        self.bullets_pane.action_focus_filter()
