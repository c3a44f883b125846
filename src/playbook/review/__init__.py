"""One API for every surface: what a reviewer reads about the playbook and decides on it.

The CLI, the MCP server and the workbench call these functions; none of them builds a view
of a bullet or performs a human action on its own (sqlite-utils' way: each command is a
thin wrapper over one function here). Every function takes the store first and runs inside
the store's transactions; human actions default to `actor="human"` and check what they act
on inside the same transaction as the write, so two reviewers cannot both act on one thing.

- `detail`: a bullet in one shape (`bullet_detail`), its score over time (`score_series`),
  the stale list (`stale`), the filter's ranking (`filter_relevance`, via `retrieval`);
- `conflicts`: open conflict flags with both sides (`conflicts`), and their resolution
  (`keep_both`, `deprecate_one`, `merge`);
- `actions`: the human actions on one bullet (`restore`, `pin`, `unpin`, `deprecate`,
  `mark`).
"""

from __future__ import annotations

from .actions import NotApplied, Restored, deprecate, mark, pin, restore, restore_target, unpin
from .conflicts import (
    ConflictSide,
    ConflictView,
    Resolution,
    conflicts,
    deprecate_one,
    keep_both,
    merge,
)
from .detail import (
    BulletDetail,
    NotFound,
    StaleItem,
    StaleList,
    bullet_detail,
    filter_postings,
    filter_relevance,
    score_series,
    stale,
)

__all__ = [
    "BulletDetail",
    "ConflictSide",
    "ConflictView",
    "NotApplied",
    "NotFound",
    "Resolution",
    "Restored",
    "StaleItem",
    "StaleList",
    "bullet_detail",
    "conflicts",
    "deprecate",
    "deprecate_one",
    "filter_postings",
    "filter_relevance",
    "keep_both",
    "mark",
    "merge",
    "pin",
    "restore",
    "restore_target",
    "score_series",
    "stale",
    "unpin",
]
