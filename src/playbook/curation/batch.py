"""The state and the steps of one curate batch: adds against blocks and near-duplicates
(steps 2-3), feedback, and structure (step 4: replace, merge, deprecate)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

from ..core.limits import delta_problem, preview
from ..core.terms import Actor, Maturity
from ..core.text import is_negative
from ..store import PlaybookStore
from .lifecycle import invert_harmed
from .matching import BlockMatcher, add_type, similar_bullets
from .results import CurateResult, DeltaOutcome
from .votes import Vote

if TYPE_CHECKING:
    from ..core.deltas import (
        AddDelta,
        DeprecateDelta,
        HarmfulDelta,
        HelpfulDelta,
        MergeDelta,
        PlaybookDelta,
        ReplaceDelta,
    )
    from ..core.model import Bullet
    from ..core.origin import Origin

# A parsed delta: a member of the union, or a vote read without it (`votes.py`).
Delta: TypeAlias = "PlaybookDelta | Vote"


class Batch:
    """The state of one curate call."""

    def __init__(
        self, store: PlaybookStore, provenance: Origin | None, actor: str, result: CurateResult
    ) -> None:
        self.store = store
        self.policy = store.policy
        self.provenance = provenance
        self.actor = actor
        self.human = actor == Actor.HUMAN
        self.carry_pins = True
        self.result = result
        self.batch = result.batch_id
        self.voted: set[str] = set()
        self.touched: dict[str, None] = {}
        self.harmed: dict[str, None] = {}
        self.applied = 0
        self.blocks = BlockMatcher(store)
        self.states: dict[str, str] = {}  # bullet id -> state, read before any delta applies

    def read_states(self, items: Iterable[object]) -> None:
        """The states of every bullet the batch's items name, in one read (`check` runs
        before anything is written, so they hold for every check)."""
        named: list[object] = []
        for item in items:
            if isinstance(item, dict):
                named.append(item.get("bullet_id"))
                more = item.get("bullet_ids")
                named.extend(more if isinstance(more, list) else ())
        wanted = [i for i in named if isinstance(i, str)]
        if wanted:
            self.states = {b: s.state for b, s in self.store.bullet_states(wanted).items()}

    # -- outcome bookkeeping
    def outcome(
        self,
        index: int,
        delta: Delta | None,
        status: str,
        bullet_id: str | None = None,
        reason: str | None = None,
        code: str | None = None,
    ) -> None:
        kind = delta.type if delta is not None else None
        self.result.outcomes.append(DeltaOutcome(index, status, bullet_id, reason, kind, code))
        if status in ("added", "folded", "conflict", "applied"):
            self.applied += 1
        if status == "rejected-invalid" or delta is None:
            return
        detail: dict[str, Any] = {"index": index, "delta": _as_dict(delta)}
        self.store.log_decision(
            self.batch, self.actor, kind or "?", bullet_id, status, reason, detail
        )

    def _session(self) -> str | None:
        return self.provenance.session_ref if self.provenance is not None else None

    # -- validation that needs the database
    def check(self, delta: Delta) -> tuple[str, str] | None:
        """Why a well-formed delta cannot apply here, as (code, reason): a field over its
        bound in Policy (`invalid`), or a bullet it names that does not exist (`not_found`)
        or is retired (`retired`)."""
        problem = delta_problem(self.policy, delta)
        if problem:
            return "invalid", problem
        # a merge names its rules in bullet_ids, every other type in bullet_id (an add none)
        ids = getattr(delta, "bullet_ids", None) or [getattr(delta, "bullet_id", None)]
        for bid in ids:
            if bid is None:
                continue
            state = self.states.get(bid) or self.store.bullet_state(bid)
            if state is None:
                return "not_found", f"no bullet with id {preview(bid)}"
            if state == "retired":
                succ = [b for _, b in self.store.lineage(bid).successors]
                hint = f" (succeeded by {', '.join(succ)})" if succ else ""
                return "retired", f"bullet {bid} is retired{hint}"
        return None

    # -- applying one delta: by its class (a new delta type is one more case here)
    def apply(self, index: int, delta: Delta) -> None:
        """Apply one checked delta (steps 2-4)."""
        if isinstance(delta, Vote):  # a plain vote: read without pydantic (`votes.py`)
            self.vote(index, delta)
            return
        # The models load pydantic, which a plain vote (`playbook mark`) never needs.
        from ..core.deltas import (  # lazy: pydantic: mark, every typer command
            AddDelta,
            DeprecateDelta,
            HarmfulDelta,
            HelpfulDelta,
            MergeDelta,
            ReplaceDelta,
        )

        match delta:
            case AddDelta():
                self.add(index, delta)
            case HelpfulDelta() | HarmfulDelta():
                self.vote(index, delta)
            case DeprecateDelta():
                self.deprecate(index, delta)
            case ReplaceDelta() | MergeDelta():
                self.succeed(index, delta)

    def vote(self, index: int, delta: Vote | HelpfulDelta | HarmfulDelta) -> None:
        """Step 2: a helpful or harmful vote (a harmful one without a reason: "other")."""
        if delta.type == "harmful":
            reason = str(getattr(delta, "reason", None) or "other")
            self.feedback(delta.bullet_id, "harmful", reason=reason, context=delta.context)
        else:
            self.feedback(delta.bullet_id, "helpful", context=delta.context)
        self.outcome(index, delta, "applied", delta.bullet_id)

    # -- step 3: near-duplicates
    def similar(self, content: str) -> list[tuple[float, Bullet]]:
        return similar_bullets(self.store, content, self.policy.duplicate_jaccard)

    def add(self, index: int, delta: AddDelta) -> None:
        btype = add_type(delta.content, delta.bullet_type)
        block = self.blocks.match(delta.content, btype)
        if block is not None:
            self.outcome(
                index,
                delta,
                "refused-blocked",
                None,
                f"near blocked pattern {block.id}: {block.pattern!r}",
            )
            return
        negative = is_negative(delta.content, btype)
        fold = zombie = conflict = None
        for score, b in self.similar(delta.content):
            same = is_negative(b.content, b.type) == negative
            alive = b.state != "retired" and b.maturity != Maturity.DEPRECATED
            if same and alive and fold is None:
                fold = (score, b)
            elif same and not alive and zombie is None:
                zombie = (score, b)
            elif not same and alive and conflict is None:
                conflict = (score, b)
        if fold is not None:
            score, b = fold
            if b.id in self.voted:
                self.outcome(index, delta, "dropped-duplicate", b.id, "already voted in this batch")
                return
            self.feedback(b.id, "helpful", context=f"folded duplicate add: {delta.content}")
            self.outcome(
                index, delta, "folded", b.id, f"duplicate of {b.id} (similarity {score:.2f})"
            )
            return
        if zombie is not None:
            score, b = zombie
            what = "retired" if b.state == "retired" else "deprecated"
            self.outcome(
                index,
                delta,
                "refused-zombie",
                b.id,
                f"duplicates {what} bullet {b.id} (similarity {score:.2f}); no zombie rules",
            )
            return
        bullet = self.store.insert_bullet(
            delta.content,
            category=delta.category or "general",
            tags=delta.tags,
            scope=str(delta.scope or "global"),
            scope_key=delta.scope_key,
            type=btype,
            kind=delta.kind or ("pitfall" if btype == "anti-pattern" else "workflow_rule"),
            source="learned" if self._session() or not self.human else "manual",
            provenance=self.provenance,
            batch_id=self.batch,
        )
        self.result.added.append(bullet.id)
        self.touched[bullet.id] = None
        if conflict is not None:
            score, b = conflict
            reason = f"opposite polarity to {b.id} (similarity {score:.2f})"
            self.store.flag_conflict(bullet.id, b.id, reason, batch_id=self.batch)
            self.result.conflicts.append((bullet.id, b.id))
            self.outcome(index, delta, "conflict", bullet.id, reason)
        else:
            self.outcome(index, delta, "added", bullet.id, delta.reason)

    # -- feedback
    def feedback(self, bullet_id: str, kind: str, **kw: Any) -> None:
        self.store.record_feedback(
            bullet_id,
            kind,
            provenance=self.provenance,
            actor=self.actor,
            batch_id=self.batch,
            **kw,
        )
        self.voted.add(bullet_id)
        self.touched[bullet_id] = None
        if kind == "harmful":
            self.harmed[bullet_id] = None

    # -- step 4: structure
    def pinned_refusal(self, bullets: Iterable[Bullet]) -> Bullet | None:
        if self.human:
            return None
        return next((b for b in bullets if b.pinned), None)

    def successor(
        self, originals: list[Bullet], content: str, source: str
    ) -> tuple[str, list[str]]:
        """Add the bullet that replaces `originals` and retire them: (its id, the originals
        whose evidence it does not inherit).

        Evidence follows lineage only where the meaning holds: an original of the successor's
        polarity is superseded (its feedback counts for the successor); one of the opposite
        polarity ("Always X" merged into "Never X") is linked by an `inverts` edge, which
        carries no evidence, since the harm it earned would read as harm of the new rule.
        A pin carries over only from an original that is superseded, and only when
        `carry_pins` (a reviewer resolving a conflict decides it explicitly).
        """
        first = originals[0]

        def same(attr: str) -> bool:
            return len({getattr(b, attr) for b in originals}) == 1

        tags = list(dict.fromkeys(t for b in originals for t in b.tags))
        btype = str(first.type) if same("type") else "rule"
        negative = is_negative(content, btype)
        kept = {b.id for b in originals if is_negative(b.content, b.type) == negative}
        pin = next((b for b in originals if b.pinned and b.id in kept), None)
        if not self.carry_pins:
            pin = None
        new = self.store.insert_bullet(
            content,
            category=first.category if same("category") else "general",
            tags=tags,
            scope=str(first.scope) if same("scope") else "global",
            scope_key=first.scope_key if same("scope") else None,
            type=btype,
            kind=first.kind,
            source=source,
            half_life_days=first.half_life_days,
            pinned=pin is not None,
            pinned_reason=pin.pinned_reason if pin is not None else None,
            provenance=self.provenance,
            batch_id=self.batch,
        )
        for b in originals:
            kind = "supersedes" if b.id in kept else "inverts"
            self.store.add_edge(kind, new.id, b.id, batch_id=self.batch)
            self.store.retire(b.id)
            self.store.set_maturity_due(b.id, None)
        self.result.added.append(new.id)
        self.touched[new.id] = None
        return new.id, [b.id for b in originals if b.id not in kept]

    def deprecate(self, index: int, delta: DeprecateDelta) -> None:
        b = self.store.require_bullet(delta.bullet_id)
        if self.pinned_refusal([b]):
            self.outcome(
                index,
                delta,
                "refused-pinned",
                b.id,
                "bullet is pinned; only a human can deprecate it",
            )
            return
        if b.maturity == Maturity.DEPRECATED:
            self.outcome(index, delta, "applied", b.id, "already deprecated")
            return
        self.set_maturity(b, Maturity.DEPRECATED)
        self.outcome(index, delta, "applied", b.id, delta.reason)

    def succeed(self, index: int, delta: ReplaceDelta | MergeDelta) -> None:
        """A replace or merge: a successor retires the rules it names."""
        if delta.type == "replace":
            originals = [self.store.require_bullet(delta.bullet_id)]
            source = str(originals[0].source)
        else:
            originals = [self.store.require_bullet(i) for i in delta.bullet_ids]
            source = "merged"
        if any(b.state == "retired" for b in originals):
            gone = next(b.id for b in originals if b.state == "retired")
            self.outcome(
                index,
                delta,
                "rejected-invalid",
                gone,
                f"bullet {gone} was retired earlier in this batch",
                code="retired",
            )
            return
        pinned = self.pinned_refusal(originals)
        if pinned is not None:
            self.outcome(
                index,
                delta,
                "refused-pinned",
                pinned.id,
                f"bullet {pinned.id} is pinned; only a human can retire it",
            )
            return
        new_id, flipped = self.successor(originals, delta.content, source)
        reason, code = delta.reason, None
        if flipped:
            note = (
                f"evidence of {', '.join(flipped)} not carried over: opposite polarity "
                "(linked by an inverts edge)"
            )
            reason, code = (f"{reason}; {note}" if reason else note), "not_carried"
        self.outcome(index, delta, "applied", new_id, reason, code)

    def set_maturity(self, bullet: Bullet, to: Maturity) -> None:
        self.store.set_maturity(bullet.id, str(to), batch_id=self.batch)
        self.result.maturity_changes.append((bullet.id, str(bullet.maturity), str(to)))
        self.store.log_decision(
            self.batch,
            self.actor,
            "maturity",
            bullet.id,
            "applied",
            None,
            {"from": str(bullet.maturity), "to": str(to)},
        )
        self.touched[bullet.id] = None

    # -- step 5: inversion
    def invert(self) -> None:
        invert_harmed(
            self.store,
            self.harmed,
            batch_id=self.batch,
            actor=self.actor,
            provenance=self.provenance,
            result=self.result,
            touched=self.touched,
        )


def _as_dict(delta: Delta) -> dict[str, Any]:
    """A delta as the decision log records it."""
    if isinstance(delta, Vote):
        return delta.as_dict()
    from ..core.deltas import delta_dict  # lazy: pydantic: mark, every typer command

    return delta_dict(delta)
