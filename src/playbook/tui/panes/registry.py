"""The workbench's tabs, in order: each a `Pane` (`base.py`). A new pane is its module and
one line in `PANES`; the layout, the number keys, the tab labels, the palette's "Go to"
entries and the help screen are all made from this list."""

from __future__ import annotations

from .base import Pane
from .blocked import BlockedPane
from .bullets import BulletsPane
from .conflicts import ConflictsPane
from .detail import DetailPane
from .proposals import ProposalsPane

PANES: tuple[type[Pane], ...] = (BulletsPane, DetailPane, ProposalsPane, ConflictsPane, BlockedPane)
