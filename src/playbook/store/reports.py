"""Read-only counts for `playbook stats` (SQL lives in the store package)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .executor import Executor


class Reports:
    """Counts for `playbook stats` (`store.reports`)."""

    def __init__(self, sql: Executor) -> None:
        self.sql = sql

    def bullet_counts(self) -> dict[str, dict[str, int]]:
        """Bullets by state (all of them), and by maturity and type (the non-retired ones)."""
        out: dict[str, dict[str, int]] = {"state": {}, "maturity": {}, "type": {}, "pinned": {}}
        for state, n in self.sql.execute("SELECT state, COUNT(*) FROM bullets GROUP BY 1"):
            out["state"][state] = n
        for maturity, btype, pinned, n in self.sql.execute(
            "SELECT maturity, type, pinned, COUNT(*) FROM bullets WHERE state != 'retired' "
            "GROUP BY 1, 2, 3"
        ):
            out["maturity"][maturity] = out["maturity"].get(maturity, 0) + n
            out["type"][btype] = out["type"].get(btype, 0) + n
            key = "pinned" if pinned else "unpinned"
            out["pinned"][key] = out["pinned"].get(key, 0) + n
        return out

    def feedback_counts(self) -> dict[str, int]:
        out = {"helpful": 0, "harmful": 0}
        for kind, n in self.sql.execute("SELECT kind, COUNT(*) FROM feedback GROUP BY 1"):
            out[kind] = n
        return out
