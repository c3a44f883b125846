"""Typed messages the thread workers post back to the app (and panes post to the app)."""

from __future__ import annotations

from textual.message import Message

from .data import BulletDetail, Snapshot


class SnapshotLoaded(Message):
    """A fresh read of the playbook (after a change, or the first one)."""

    def __init__(self, snapshot: Snapshot, version: int | None) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.version = version


class DetailLoaded(Message):
    """The selected bullet's detail, timeline and score history."""

    def __init__(self, bullet_id: str, detail: BulletDetail | None) -> None:
        super().__init__()
        self.bullet_id = bullet_id
        self.detail = detail


class FilterRanked(Message):
    """Recall relevance for the `/` filter words (None: no words, show everything)."""

    def __init__(self, text: str, relevance: dict[str, float] | None, seconds: float) -> None:
        super().__init__()
        self.text = text
        self.relevance = relevance
        self.seconds = seconds


class ActionDone(Message):
    """A write went through the API; `select` is a bullet to put the cursor on."""

    def __init__(self, text: str, select: str | None = None) -> None:
        super().__init__()
        self.text = text
        self.select = select


class ActionFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class OpenBullet(Message):
    """A pane asks to show a bullet in the Detail tab."""

    def __init__(self, bullet_id: str) -> None:
        super().__init__()
        self.bullet_id = bullet_id


class LoadFailed(Message):
    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
