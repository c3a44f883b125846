"""What decay hid: the rules that matched a query but were not shown, and why, in numbers.

`explain_hidden` asks `retrieval.query.recall` for the whole ranking (the same call with no
limit), so every number is recall's own: nothing of the ranking formula is written here.
A rule is hidden when it ranks below the `limit`-th of its list ("outranked"), when it is
deprecated (recall lists it only as a "don't do this any more" warning), when it was
retired (recall never returns it), or when the caller's scope leaves it out. For each one
the report gives the numbers behind its rank (decayed help and harm, the harm and maturity
multipliers, effective and final score, the cut-off it missed, days silent) and what would
bring it back, computed: how many fresh helpful marks lift it past the cut-off (each mark
a curate batch, so the maturity pass runs between them as it would), what a restore would
do, or which rule replaced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core import scoring
from ..core.model import Bullet
from ..core.text import plural
from ..retrieval.query import keyword_relevance, recall
from ..store import PlaybookStore, iso
from .remedies import LABELS, Remedies, Remedy

if TYPE_CHECKING:
    from ..retrieval.query import RecallItem, Scope
    from ..retrieval.vectors import MemoryVectors

MOST = 25  # hidden rules described in full per reason, the closest to being shown first
LISTS = ("bullets", "anti_patterns", "deprecated_warnings")
REASONS = ("outranked", "deprecated", "out_of_scope", "retired")


@dataclass(frozen=True)
class HiddenItem:
    bullet: Bullet
    reason: str  # one of REASONS
    in_list: str | None  # the recall list it ranks in (None: retired or out of scope)
    rank: int | None  # 1-based in that list
    cutoff: float | None  # the final score of the last rule shown in that list
    keyword: float
    similarity: float | None
    relevance: float
    helpful: float  # decayed
    harmful: float  # decayed
    harm_multiplier: float
    maturity: str  # as it stood (at `as_of`)
    maturity_multiplier: float
    effective: float
    final: float  # for a retired or out-of-scope rule: what it would score if recalled
    at_floor: bool  # effective below the confidence floor: ranked as if it were the floor
    days_silent: float
    stale: bool
    successors: tuple[str, ...] = ()
    shown_as_warning: bool = False  # a deprecated rule listed among the warnings
    remedies: list[Remedy] = field(default_factory=list)

    def why(self) -> str:
        """One sentence with the numbers."""
        score = (
            f"help {self.helpful:.2f} - {self.harm_multiplier:g} x harm {self.harmful:.2f}, "
            f"x {self.maturity_multiplier:g} ({self.maturity}) = effective {self.effective:.2f}"
        )
        if self.at_floor:
            score += " (below the confidence floor: ranked at the floor)"
        days = round(self.days_silent)
        silent = f"; silent {plural(days, 'day')}" + (" (stale)" if self.stale else "")
        if self.reason == "retired":
            after = f", succeeded by {', '.join(self.successors)}" if self.successors else ""
            head = f"retired{after}; its score when retired: {score}"
        elif self.reason == "out_of_scope":
            key = f":{self.bullet.scope_key}" if self.bullet.scope_key else ""
            head = f"scoped to {self.bullet.scope}{key}, outside the caller's scope; {score}"
        elif self.reason == "deprecated":
            where = (
                f"shown as a deprecation warning (#{self.rank})"
                if self.shown_as_warning
                else f"#{self.rank} among deprecation warnings, below the cut-off"
            )
            head = f"deprecated: scores 0 whatever its feedback, {where}; {score}"
        else:
            label = LABELS.get(self.in_list or "", self.in_list)
            head = (
                f"ranks #{self.rank} in {label} with final {self.final:.2f} < cut-off "
                f"{self.cutoff:.2f}; {score}"
            )
        return f"{head}; relevance {self.relevance:.2f}{silent}"

    def to_dict(self) -> dict[str, Any]:
        b = self.bullet
        return {
            "id": b.id,
            "content": b.content,
            "type": b.type,
            "state": b.state,
            "pinned": b.pinned,
            "scope": b.scope if b.scope_key is None else f"{b.scope}:{b.scope_key}",
            "reason": self.reason,
            "why": self.why(),
            "list": self.in_list,
            "rank": self.rank,
            "cutoff": self.cutoff,
            "keyword": self.keyword,
            "similarity": self.similarity,
            "relevance": self.relevance,
            "helpful": self.helpful,
            "harmful": self.harmful,
            "harm_multiplier": self.harm_multiplier,
            "maturity": self.maturity,
            "maturity_multiplier": self.maturity_multiplier,
            "effective": self.effective,
            "final": self.final,
            "at_floor": self.at_floor,
            "days_silent": round(self.days_silent, 3),
            "stale": self.stale,
            "successors": list(self.successors),
            "shown_as_warning": self.shown_as_warning,
            "remedies": [r.to_dict() for r in self.remedies],
        }


@dataclass(frozen=True)
class HiddenReport:
    query: str
    query_tokens: list[str]
    limit: int
    as_of: datetime | None
    cutoffs: dict[str, float | None]  # per recall list: the last shown rule's final score
    shown: dict[str, int]  # per recall list: how many rules recall shows
    hidden: list[HiddenItem]  # by reason (REASONS order), closest to being shown first
    counts: dict[str, int]  # every hidden rule, per reason (`hidden` has at most `most` each)
    degraded: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "query_tokens": list(self.query_tokens),
            "limit": self.limit,
            "as_of": iso(self.as_of) if self.as_of else None,
            "cutoffs": dict(self.cutoffs),
            "shown": dict(self.shown),
            "total": self.total,
            "counts": dict(self.counts),
            "hidden": [h.to_dict() for h in self.hidden],
            "degraded": list(self.degraded),
        }


# ------------------------------------------------------------------ the report


def explain_hidden(
    store: PlaybookStore,
    query: str,
    *,
    limit: int = 10,
    scope: Scope = None,
    as_of: datetime | None = None,
    vectors: MemoryVectors | None = None,
    most: int = MOST,
) -> HiddenReport:
    """The rules that matched `query` but `recall(..., limit=limit)` does not show, each
    with the numbers behind it and what would bring it back (see the module's doc).

    Hidden rules come grouped by reason ("outranked", "deprecated", "out_of_scope",
    "retired"), at most `most` of each, the closest to being shown first (by final score;
    the unranked ones by relevance). A deprecated rule counts as hidden even when recall
    lists it among its warnings (`shown_as_warning`): it is out of the rules.
    """

    if limit < 1:
        raise ValueError("limit must be at least 1")
    everything = max(limit, store.count_bullets())
    ranked = recall(store, query, vectors=vectors, limit=everything, as_of=as_of, scope=scope)
    lists = {name: getattr(ranked, name) for name in LISTS}
    cutoffs = {n: items[limit - 1].final_score if len(items) > limit else None
               for n, items in lists.items()}  # fmt: skip
    shown = {n: min(limit, len(items)) for n, items in lists.items()}
    found: list[tuple[str, str, int, RecallItem]] = []  # (reason, list, rank, item)
    for name, items in lists.items():
        start = 0 if name == "deprecated_warnings" else limit
        reason = "deprecated" if name == "deprecated_warnings" else "outranked"
        found += [(reason, name, i + 1, it) for i, it in enumerate(items) if i >= start]
    recalled = {it.bullet.id for items in lists.values() for it in items}
    points = keyword_relevance(store, query)
    others = store.get_bullets(b for b in points if b not in recalled)
    when = as_of or store.now()
    gone = {
        b.id: b
        for b in others.values()
        if b.valid_from <= when and b.valid_to is not None and b.valid_to <= when
    }
    outside = {
        b.id: b
        for b in others.values()
        if b.id not in gone and b.valid_from <= when and scope is not None
    }
    counts = {
        "outranked": sum(1 for f in found if f[0] == "outranked"),
        "deprecated": sum(1 for f in found if f[0] == "deprecated"),
        "out_of_scope": len(outside),
        "retired": len(gone),
    }
    cap = max(0, most)
    found.sort(key=lambda f: (f[0] != "outranked", -f[3].final_score, f[3].bullet.id))
    chosen = [f for f in found if f[0] == "outranked"][:cap]
    chosen += [f for f in found if f[0] == "deprecated"][:cap]
    closest = lambda b: (-points[b.id], b.id)  # noqa: E731
    extra = sorted(outside.values(), key=closest)[:cap] + sorted(gone.values(), key=closest)[:cap]
    explain = _Explainer(store, lists, limit, as_of)
    hidden = [explain.ranked(reason, name, rank, it) for reason, name, rank, it in chosen]
    hidden += explain.unranked(extra, points, gone)
    return HiddenReport(
        query=query,
        query_tokens=ranked.query_tokens,
        limit=limit,
        as_of=as_of,
        cutoffs=cutoffs,
        shown=shown,
        hidden=hidden,
        counts=counts,
        degraded=list(ranked.degraded),
    )


class _Explainer:
    """The numbers behind each hidden rule and its remedies, against recall's lists."""

    def __init__(
        self,
        store: PlaybookStore,
        lists: dict[str, list[RecallItem]],
        limit: int,
        as_of: datetime | None,
    ) -> None:
        self.store = store
        self.policy = store.policy
        self.lists = lists
        self.limit = limit
        self.as_of = as_of
        self.now = scoring.days(as_of or store.now())
        self.remedies = Remedies(store.policy, lists, limit)

    # -------------------------------------------------------------- ranked (live) rules
    def ranked(self, reason: str, name: str, rank: int, it: RecallItem) -> HiddenItem:
        b = it.bullet
        ev = (
            self.store.evidence(b.id, as_of=self.as_of) if self.as_of else self.store.evidence(b.id)
        )
        maturity = str(b.maturity)
        item = self._item(b, reason, ev.helpful, ev.harmful, ev.last_activity, maturity,
                          it.keyword_score, it.similarity, it.relevance)  # fmt: skip
        cutoff = self._cutoff(name)
        remedies: list[Remedy] = []
        if reason == "outranked":
            remedies += self.remedies.feedback(
                b, name, it.relevance, ev.helpful, ev.harmful, maturity
            )
            if scoring.still_demoting(ev.helpful, ev.harmful, maturity, b.pinned, self.policy):
                remedies.append(Remedy(
                    "pin",
                    "pinning stops its demotion (a negative score drops one rung per curate "
                    "batch); it does not change its rank",
                ))  # fmt: skip
        else:
            remedies += self.remedies.restore(b, it.relevance, ev.helpful, ev.harmful)
        return _replace(item, in_list=name, rank=rank, cutoff=cutoff, final=it.final_score,
                        shown_as_warning=reason == "deprecated" and rank <= self.limit,
                        remedies=remedies)  # fmt: skip

    # -------------------------------------------------------------- retired, out of scope
    def unranked(
        self, bullets: list[Bullet], points: dict[str, float], gone: dict[str, Bullet]
    ) -> list[HiddenItem]:
        if not bullets:
            return []
        frozen: dict[str, Any] = {}  # a retired rule's evidence when it was retired
        for b in bullets:
            if b.id in gone and b.valid_to is not None:
                frozen.update(self.store.evidence_many([b.id], at=b.valid_to))
        live = [b.id for b in bullets if b.id not in gone]
        evidence = self.store.evidence_many(live, as_of=self.as_of) if live else {}
        successors = {b.id: [s for _, s in self.store.lineage(b.id).successors]
                      for b in bullets if b.id in gone}  # fmt: skip
        out = []
        for b in bullets:
            relevance = points[b.id]
            if b.id in gone:
                ev = frozen[b.id]
                end = scoring.days(b.valid_to) if b.valid_to else self.now
                item = self._item(b, "retired", ev.helpful, ev.harmful, ev.last_activity,
                                  str(b.maturity), relevance, None, relevance, at=end)  # fmt: skip
                after = tuple(successors[b.id])
                note = (
                    f"a retired rule cannot be restored; {', '.join(after)} replaced it"
                    if after
                    else "a retired rule cannot be restored; propose it again"
                )
                remedies = [Remedy("successor", note)]
                out.append(_replace(item, successors=after, remedies=remedies))
                continue
            ev = evidence[b.id]
            item = self._item(b, "out_of_scope", ev.helpful, ev.harmful, ev.last_activity,
                              str(b.maturity), relevance, None, relevance)  # fmt: skip
            key = f":{b.scope_key}" if b.scope_key else ""
            remedies = [Remedy("scope", f"recall with scope {b.scope}{key} (or none) to see it")]
            out.append(_replace(item, remedies=remedies))
        return out

    # -------------------------------------------------------------- numbers
    def _item(
        self,
        b: Bullet,
        reason: str,
        helpful: float,
        harmful: float,
        last: float,
        maturity: str,
        keyword: float,
        similarity: float | None,
        relevance: float,
        *,
        at: float | None = None,
    ) -> HiddenItem:
        p = self.policy
        effective = scoring.effective_score(helpful, harmful, maturity, p)
        silent = (at if at is not None else self.now) - last
        return HiddenItem(
            bullet=b, reason=reason, in_list=None, rank=None, cutoff=None, keyword=keyword,
            similarity=similarity, relevance=relevance, helpful=helpful, harmful=harmful,
            harm_multiplier=p.harm_multiplier, maturity=maturity,
            maturity_multiplier=p.multiplier(maturity), effective=effective,
            final=float(scoring.final_score(relevance, effective, p)),
            at_floor=effective < p.min_confidence, days_silent=silent,
            stale=silent >= p.stale_after_days,
        )  # fmt: skip

    def _cutoff(self, name: str) -> float | None:
        items = self.lists[name]
        return items[self.limit - 1].final_score if len(items) > self.limit else None


def _replace(item: HiddenItem, **changes: Any) -> HiddenItem:
    return replace(item, **changes)
