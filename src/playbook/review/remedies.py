"""What would bring a hidden rule back, computed: the helpful marks that lift it past the
cut-off (each one a curate batch, so the maturity pass runs between them as it would), what
a restore would do, and when a pin must hold its rung. Used by `review.hidden`."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import scoring
from ..core.model import Bullet, Maturity
from ..core.policy import Policy
from .actions import restore_target

if TYPE_CHECKING:
    from ..retrieval.query import RecallItem

MAX_MARKS = 1000  # fresh helpful marks tried before saying feedback alone will not do
# recall's lists as a person says them
LABELS = {"bullets": "rules", "anti_patterns": "anti-patterns", "deprecated_warnings": "warnings"}


@dataclass(frozen=True)
class Remedy:
    """One way to bring a hidden rule back, with what it would do."""

    action: str  # feedback | restore | restore+feedback | restore+pin+feedback | pin |
    # successor | scope
    note: str
    marks: int | None = None  # fresh helpful marks needed (with the action), if any
    final_after: float | None = None
    rank_after: int | None = None  # in its list, after the action

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Remedies:
    """Remedies against recall's ranked lists (`limit` shown per list)."""

    def __init__(self, policy: Policy, lists: dict[str, list[RecallItem]], limit: int) -> None:
        self.policy = policy
        self.limit = limit
        # recall's order (final, then relevance, then id), as sortable keys per list
        self.keys = {
            n: [(-it.final_score, -it.relevance, it.bullet.id) for it in items]
            for n, items in lists.items()
        }

    def rank_in(self, name: str, bullet_id: str, relevance: float, final: float) -> int:
        """Where a rule with this final score would rank in list `name` (recall's order:
        final, then relevance, then id)."""
        # The rule's own entry (if it is in this list) has a key at or after the new one:
        # feedback only raises a score, so it is never counted ahead of itself.
        return 1 + bisect_left(self.keys[name], (-final, -relevance, bullet_id))

    def _marks_needed(
        self,
        b: Bullet,
        name: str,
        relevance: float,
        helpful: float,
        harmful: float,
        rung: str,
        *,
        pinned: bool | None = None,
    ) -> _Marks:
        """The fewest fresh helpful marks (weight 1, now) that show the rule, each followed
        by the maturity pass as curate runs it; or why none will (deprecated again at
        mark k, or more than MAX_MARKS)."""
        p = self.policy
        pin = b.pinned if pinned is None else pinned
        maturity: Maturity | str = rung
        for k in range(1, MAX_MARKS + 1):
            h = helpful + k
            maturity = scoring.next_maturity(maturity, h, harmful, pin, p)
            effective = scoring.effective_score(h, harmful, str(maturity), p)
            final = float(scoring.final_score(relevance, effective, p))
            rank = self.rank_in(name, b.id, relevance, final)
            if rank <= self.limit:
                return _Marks(k, final, rank)
            if str(maturity) == "deprecated":
                return _Marks(
                    k,
                    final,
                    rank,
                    redeprecated=effective,
                )
        return _Marks(None, None, None)

    def feedback(
        self, b: Bullet, name: str, relevance: float, helpful: float, harmful: float, rung: str
    ) -> list[Remedy]:
        m = self._marks_needed(b, name, relevance, helpful, harmful, rung)
        if m.marks is None:
            return [Remedy("feedback", f"more than {MAX_MARKS} helpful marks would be needed")]
        if m.redeprecated is not None:
            note = (
                f"feedback will not do: after {_marks(m.marks)} the maturity pass deprecates "
                "it (its harm outweighs its help)"
            )
            return [Remedy("feedback", note)]
        note = f"{_marks(m.marks)} would show it at #{m.rank}"
        return [Remedy("feedback", note, m.marks, m.final, m.rank)]

    def restore(self, b: Bullet, relevance: float, helpful: float, harmful: float) -> list[Remedy]:
        p = self.policy
        target = restore_target(helpful, harmful, p)
        name = "anti_patterns" if b.type == "anti-pattern" else "bullets"
        final = float(scoring.final_score(
            relevance, scoring.effective_score(helpful, harmful, target, p), p))  # fmt: skip
        rank = self.rank_in(name, b.id, relevance, final)
        head, label = f"a restore (to {target})", LABELS[name]
        if rank <= self.limit:
            return [
                Remedy("restore", f"{head} would show it at #{rank} in {label}", 0, final, rank)
            ]
        out = [Remedy("restore", f"{head} ranks it #{rank} in {label}", 0, final, rank)]
        m = self._marks_needed(b, name, relevance, helpful, harmful, target)
        if m.marks is not None and m.redeprecated is None:
            note = f"{head} and {_marks(m.marks)} would show it at #{m.rank} in {label}"
            return [*out, Remedy("restore+feedback", note, m.marks, m.final, m.rank)]
        if m.marks is not None and m.redeprecated is not None and not b.pinned:
            pinned = self._marks_needed(b, name, relevance, helpful, harmful, target, pinned=True)
            why = f"after {_marks(m.marks)} the maturity pass would deprecate it again"
            if pinned.marks is not None and pinned.redeprecated is None:
                note = (
                    f"{why}; {head}, a pin (its rung then never moves) and "
                    f"{_marks(pinned.marks)} would show it at #{pinned.rank} in {label}"
                )
                return [*out, Remedy("restore+pin+feedback", note, pinned.marks, pinned.final,
                                     pinned.rank)]  # fmt: skip
            return [*out, Remedy("restore+feedback", f"{why}: feedback will not do")]
        return [*out, Remedy("restore+feedback", f"more than {MAX_MARKS} marks would be needed")]


@dataclass(frozen=True)
class _Marks:
    marks: int | None
    final: float | None
    rank: int | None
    redeprecated: float | None = None  # the effective score at which the pass deprecates it


def _marks(k: int) -> str:
    return f"{k} fresh helpful mark{'s' if k != 1 else ''}"
