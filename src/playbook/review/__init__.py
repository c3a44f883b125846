"""One API for every surface: what a reviewer reads about the playbook and decides on it.

The CLI, the MCP server and the workbench call these functions; none of them builds a view
of a bullet or performs a human action on its own (sqlite-utils' way: each command is a
thin wrapper over one function here). Every function takes the store first and runs inside
the store's transactions; human actions default to `actor="human"` and check what they act
on inside the same transaction as the write, so two reviewers cannot both act on one thing.

- `detail`: a bullet in one shape (`bullet_detail`), the stale list (`stale`), the
  filter's ranking (`filter_relevance`, via `retrieval`);
- `scores`: a bullet's score as every surface shows it (frozen at retirement for a retired
  one: `bullet_score`, `score_moment`);
- `history`: time travel, the playbook as it stood at a moment (`rows_as_of`,
  `conflicts_as_of`, `proposals_as_of`; read from the evidence cache's days); `diff`: then
  against now (`diff_since`);
- `hidden`: what decay hid, the rules a query matched that recall does not show, with
  the numbers and what would bring each back (`explain_hidden`);
- `proposal_view`: what a reviewer reads beside a proposal, its word diff
  (`proposal_diff`, `proposal_diffs`) and its closest rules (`closest_rules`); `bulk`:
  review that scales, many decisions at once (`approve_many`, `reject_many`); the queue
  itself (stage, approve, reject) is `queue`, what a proposal is `proposals`, an agent's
  deltas it may not apply alone `agent` (`curate_as_agent`), near-duplicate groups staged
  as merges `topics`;
- `trends`: score over time, for the Detail plot (`score_series`, with its events) and the
  table's trend column (`score_trends`);
- `conflicts`: open conflict flags with both sides (`conflicts`), and their resolution
  (`keep_both`, `deprecate_one`, `merge`);
- `actions`: the human actions on one bullet (`restore`, `pin`, `unpin`, `deprecate`,
  `mark`), and `activate` (drafts made live).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

# Eager: `conflicts` is both a submodule and a function; importing the function here keeps
# the name the function whichever of the two is imported first.
from .conflicts import (
    ConflictSide,
    ConflictView,
    Resolution,
    conflicts,
    deprecate_one,
    keep_both,
    merge,
)

if TYPE_CHECKING:
    from ..core.errors import NotFound
    from .actions import (
        Activated,
        NotApplied,
        Restored,
        activate,
        deprecate,
        mark,
        pin,
        restore,
        restore_target,
        unpin,
    )
    from .bulk import Decided, approve_many, reject_many
    from .detail import (
        BulletDetail,
        StaleItem,
        StaleList,
        bullet_detail,
        filter_postings,
        filter_relevance,
        stale,
    )
    from .diff import PlaybookDiff, RuleChange, diff_since
    from .hidden import HiddenItem, HiddenReport, explain_hidden
    from .history import conflicts_as_of, parse_moment, proposals_as_of, rows_as_of
    from .proposal_view import closest_rules, proposal_diff, proposal_diffs, with_closest
    from .remedies import Remedy
    from .scores import bullet_score, bullet_scores, score_moment
    from .trends import ScoreSeries, SeriesEvent, score_series, score_trends

# Each name loads its module on first use: `playbook mark` needs `actions` only, and must
# not pay for the models and numpy that time travel and the diff read.
__getattr__ = lazy_exports(
    __name__,
    {
        "Activated": ".actions",
        "NotApplied": ".actions",
        "Restored": ".actions",
        "activate": ".actions",
        "deprecate": ".actions",
        "mark": ".actions",
        "pin": ".actions",
        "restore": ".actions",
        "restore_target": ".actions",
        "unpin": ".actions",
        "BulletDetail": ".detail",
        "NotFound": "..core.errors",
        "StaleItem": ".detail",
        "StaleList": ".detail",
        "bullet_detail": ".detail",
        "filter_postings": ".detail",
        "filter_relevance": ".detail",
        "stale": ".detail",
        "PlaybookDiff": ".diff",
        "RuleChange": ".diff",
        "diff_since": ".diff",
        "HiddenItem": ".hidden",
        "HiddenReport": ".hidden",
        "Remedy": ".remedies",
        "explain_hidden": ".hidden",
        "conflicts_as_of": ".history",
        "parse_moment": ".history",
        "proposals_as_of": ".history",
        "rows_as_of": ".history",
        "Decided": ".bulk",
        "approve_many": ".bulk",
        "reject_many": ".bulk",
        "closest_rules": ".proposal_view",
        "proposal_diff": ".proposal_view",
        "proposal_diffs": ".proposal_view",
        "with_closest": ".proposal_view",
        "bullet_score": ".scores",
        "bullet_scores": ".scores",
        "score_moment": ".scores",
        "ScoreSeries": ".trends",
        "SeriesEvent": ".trends",
        "score_series": ".trends",
        "score_trends": ".trends",
    },
)


__all__ = [
    "Activated",
    "BulletDetail",
    "ConflictSide",
    "ConflictView",
    "Decided",
    "HiddenItem",
    "HiddenReport",
    "NotApplied",
    "NotFound",
    "PlaybookDiff",
    "Remedy",
    "Resolution",
    "Restored",
    "RuleChange",
    "ScoreSeries",
    "SeriesEvent",
    "StaleItem",
    "StaleList",
    "activate",
    "approve_many",
    "bullet_detail",
    "bullet_score",
    "bullet_scores",
    "closest_rules",
    "conflicts",
    "conflicts_as_of",
    "deprecate",
    "deprecate_one",
    "diff_since",
    "explain_hidden",
    "filter_postings",
    "filter_relevance",
    "keep_both",
    "mark",
    "merge",
    "parse_moment",
    "pin",
    "proposal_diff",
    "proposal_diffs",
    "proposals_as_of",
    "reject_many",
    "restore",
    "restore_target",
    "rows_as_of",
    "score_moment",
    "score_series",
    "score_trends",
    "stale",
    "unpin",
    "with_closest",
]
