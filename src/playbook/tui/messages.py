"""Typed messages the thread workers post back to the app (and panes post to the app)."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from textual.message import Message

from ..store.views import BulletRow
from .ordering import RowIndex
from .reading import DetailRead, Snapshot

if TYPE_CHECKING:
    from ..review.proposals import Proposal


class SnapshotLoaded(Message):
    """A fresh read of the playbook (after a change, or the first one)."""

    def __init__(
        self, snapshot: Snapshot, version: Hashable | None, prepared: dict[str, Any] | None = None
    ) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.version = version
        # By tab: what each pane's `prepare` made of it in the worker (the bullets table's
        # next state); none for a snapshot shown again.
        self.prepared = prepared or {}


class SimilarRead(Message):
    """The nearest existing bullets of `snapshot`'s proposals, read once it was on screen:
    by id, each proposal with its `similar` filled (dropped if another snapshot is shown
    by then)."""

    def __init__(self, snapshot: Snapshot, found: dict[str, Proposal]) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.found = found


class DetailLoaded(Message):
    """The selected bullet's detail, timeline and score history."""

    def __init__(self, bullet_id: str, detail: DetailRead | None) -> None:
        super().__init__()
        self.bullet_id = bullet_id
        self.detail = detail


class FilterRanked(Message):
    """Recall relevance for the `/` filter words (None: no words, show everything)."""

    def __init__(
        self,
        text: str,
        relevance: dict[str, float] | None,
        seconds: float,
        order: list[str] | None = None,
        rows: dict[str, BulletRow] | None = None,
    ) -> None:
        super().__init__()
        self.text = text
        self.relevance = relevance
        self.seconds = seconds
        self.order = order  # computed in the worker from `rows`
        self.rows = rows


class PollFinished(Message):
    """A poll found nothing new (or was cancelled): the next one may start."""


class ActionDone(Message):
    """A write went through the API; `text` says what happened."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ActionFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ServerLost(Message):
    """A poll could not reach the playbook (a server restarting, a connection cut)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ServerBack(Message):
    """The playbook answers again after a `ServerLost`."""


class LoadFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class IndexReady(Message):
    """Column arrays for fast sorting and ranking of a large snapshot's rows."""

    def __init__(self, index: RowIndex) -> None:
        super().__init__()
        self.index = index


class TrendsLoaded(Message):
    """Score trends of rows on screen, read for the rows of `epoch`."""

    def __init__(self, trends: dict[str, list[float]], epoch: int) -> None:
        super().__init__()
        self.trends = trends
        self.epoch = epoch
