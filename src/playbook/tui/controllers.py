"""Which controller is given what: the workbench's controllers, built once for an app.

Each is a plain class given the app and, by name, what it needs of the others (read when
used: the panes exist from mount, the snapshot from the first read). The app keeps the
message handlers, bindings and actions Textual looks for, and forwards to them.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from textual.app import App
from textual.worker import Worker

from .acting import Actions
from .data import Source
from .detailing import Detail
from .filtering import Filter
from .panes.base import Pane
from .panes.bullets import BulletsPane
from .panes.detail import DetailPane
from .refresh import Refresh
from .seen import LastLooked
from .snapshots import Snapshots
from .tabs import Tabs
from .travel import Travel


class Host(Protocol):
    """What the controllers are given of the workbench beyond Textual's App."""

    panes: tuple[type[Pane], ...]  # the tabs, in order

    @property
    def bullets_pane(self) -> BulletsPane: ...
    @property
    def narrow(self) -> bool: ...
    def action_panes(self) -> list[Pane]: ...
    def now(self) -> datetime: ...
    def filter_applied(self, text: str) -> None: ...


@dataclass(frozen=True)
class Controllers:
    live: Refresh  # poll, watcher, offline and back
    acting: Actions  # perform, ask, write
    filtering: Filter  # the `/` ranking and the trend column
    travel: Travel  # the moment shown
    detailing: Detail  # the Detail tab's bullet
    tabs: Tabs  # which tab, and what was looked at
    snapshots: Snapshots  # what is on screen


def build(
    app: App[None],
    host: Host,
    source: Source,
    seen: LastLooked,
    *,
    poll_seconds: float,
) -> Controllers:
    """The controllers of `app` (which is also `host`)."""

    def read_changes(version: Hashable, worker: Worker[None]) -> bool:
        return snapshots.read_changes(version, worker)

    def relabel() -> None:
        snapshots.relabel()

    live = Refresh(app, source, poll_seconds=poll_seconds, read_changes=read_changes)
    acting = Actions(app, source, lambda: snapshots.context)
    travel = Travel(
        app,
        source,
        now=lambda: host.now(),  # read at each use: a test moves the clock
        read_now=lambda: snapshots.read_now(),
        version=lambda: live.version,
    )
    filtering = Filter(
        app,
        source,
        bullets=lambda: host.bullets_pane,
        as_of=lambda: travel.as_of,
        applied=lambda text: host.filter_applied(text),
    )
    detail = Detail(
        app,
        source,
        pane=lambda: app.query_one(DetailPane),
        row=lambda bullet_id: snapshots.rows_by_id.get(bullet_id),
        show_tab=lambda tab: tabs.show(tab),
        relabel=relabel,
    )
    tabs = Tabs(
        app,
        host.panes,
        seen,
        bullets=lambda: host.bullets_pane,
        detail=detail,
        snapshot=lambda: snapshots.snapshot,
        relabel=relabel,
    )
    snapshots = Snapshots(
        app,
        source,
        source.policy,
        panes=host.action_panes,
        live=live,
        travel=travel,
        detail=detail,
        seen_at=lambda: tabs.seen_at,
        looked_at_proposals=tabs.looked_at_proposals,
        narrow=lambda: host.narrow,
    )
    return Controllers(live, acting, filtering, travel, detail, tabs, snapshots)
