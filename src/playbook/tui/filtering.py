"""The bullets filter: recall's ranking of the `/` words, read in a thread worker.

A keystroke posts `BulletsPane.FilterChanged`; the worker reads keyword relevance from the
token index (with numpy column arrays on large playbooks) and posts the order back; a stale
answer for an older keystroke is dropped by the pane.
"""

from __future__ import annotations

import time

from textual import on, work
from textual.widgets import Input
from textual.worker import get_current_worker

from .acting import ActingApp
from .messages import FilterRanked, IndexReady
from .ordering import RowIndex, rank_view
from .panes.bullets import BulletsPane

INDEX_FROM = 5_000  # bullets from which sorting and ranking use a numpy index


class FilteringApp(ActingApp):
    """Needs `bullets_pane` and `show_tab` from the app."""

    bullets_pane: BulletsPane

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

    def filter_applied(self, text: str) -> None:
        """Called after a filter's ranking reached the table (a hook for benchmarks)."""

    def set_filter(self, text: str) -> None:
        self.show_tab("bullets")
        self.query_one("#filter", Input).value = text

    def action_filter(self) -> None:
        self.show_tab("bullets")
        self.bullets_pane.action_focus_filter()
