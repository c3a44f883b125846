"""The bullets table's workers: recall's ranking of the `/` words, and the trend column.

A keystroke posts `BulletsPane.FilterChanged`; the worker reads keyword relevance from the
token index (with numpy column arrays on large playbooks) and posts the order back; a stale
answer for an older keystroke is dropped by the pane. Rows drawn without their trend post
`BulletsPane.TrendsWanted`; a worker reads those trends only (as of the moment shown).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime
from functools import partial

from textual.app import App
from textual.worker import get_current_worker

from .data import Source
from .messages import FilterRanked, IndexReady, TrendsLoaded
from .ordering import RowIndex, rank_view
from .panes.bullets import BulletsPane
from .threads import in_thread
from .trends import load_trends

INDEX_FROM = 5_000  # bullets from which sorting and ranking use a numpy index


class Filter:
    """Ranks the bullets for the `/` words and reads their trends, in thread workers.

    Given the app (workers, messages), the playbook, the bullets pane (kept from mount:
    workers read its immutable rows and view without a DOM query), the moment shown, and
    what to call once a ranking is on the table (a hook for benchmarks)."""

    def __init__(
        self,
        app: App[None],
        source: Source,
        *,
        bullets: Callable[[], BulletsPane],
        as_of: Callable[[], datetime | None],
        applied: Callable[[str], None],
    ) -> None:
        self.app = app
        self.source = source
        self.bullets = bullets
        self.as_of = as_of
        self.applied = applied

    def rank(self, text: str) -> None:
        in_thread(self.app, partial(self._rank, text), "filter", exclusive=True)

    def _rank(self, text: str) -> None:
        started = time.perf_counter()
        pane = self.bullets()
        rows, view = pane.worker_view()
        index = pane.index if pane.index is not None and pane.index.rows is rows else None
        if index is None and len(rows) >= INDEX_FROM:
            index = RowIndex(rows)
            self.app.post_message(IndexReady(index))
        view, order = rank_view(self.source, text, rows, view, pane.policy, index)
        if not get_current_worker().is_cancelled:
            self.app.post_message(
                FilterRanked(text, view.relevance, time.perf_counter() - started, order, rows)
            )

    def index_ready(self, message: IndexReady) -> None:
        pane = self.bullets()
        if message.index.rows is pane.rows:
            pane.index = message.index

    def ranked(self, message: FilterRanked) -> None:
        self.bullets().set_relevance(message.text, message.relevance, message.order, message.rows)
        self.applied(message.text)

    # ---------------------------------------------------------------- trends
    def want_trends(self, ids: list[str]) -> None:
        in_thread(
            self.app, partial(self._trends, ids, self.bullets().epoch, self.as_of()), "trends"
        )

    def _trends(self, ids: list[str], epoch: int, as_of: datetime | None) -> None:
        trends = load_trends(self.source, ids, as_of)
        if not get_current_worker().is_cancelled:
            self.app.post_message(TrendsLoaded(trends, epoch))

    def trends_loaded(self, message: TrendsLoaded) -> None:
        self.bullets().set_trends(message.trends, message.epoch)
