"""The shapes of `playbook mcp`'s answers: the API's objects as the compact dicts the tools'
output models (`schemas`) describe. An optional field is left out when it has nothing
to say; nothing is repeated."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..store import iso

if TYPE_CHECKING:
    from ..core.model import Bullet, FeedbackEvent
    from ..review import BulletDetail, HiddenReport
    from ..review.proposals import Proposal


def rule(b: Bullet, score: float) -> dict[str, Any]:
    """A rule compactly (`mcp_schemas.Rule`): what is not the default is said."""
    out: dict[str, Any] = {
        "id": b.id,
        "content": b.content,
        "maturity": b.maturity,
        "score": round(score, 3),
    }
    if b.type != "rule":
        out["type"] = b.type
    if b.category and b.category != "general":
        out["category"] = b.category
    if b.tags:
        out["tags"] = list(b.tags)
    if b.scope != "global":
        out["scope"] = _scope(b)
    if b.pinned:
        out["pinned"] = True
    return out


def _scope(b: Bullet) -> str:
    return b.scope if b.scope_key is None else f"{b.scope}:{b.scope_key}"


def page(items: list[Any], offset: int, limit: int) -> tuple[list[Any], dict[str, Any]]:
    """One page of `items` and what `mcp_schemas.Page` says about it."""
    shown = items[offset : offset + limit]
    following = offset + len(shown)
    more = following if following < len(items) else None
    return shown, {"total": len(items), "offset": offset, "next_offset": more}


def changes(maturity: list[Any], inversions: list[Any]) -> dict[str, Any]:
    """A write's maturity changes and inversions (`mcp_schemas.MaturityChange`, `Inversion`)."""
    return {
        "maturity_changes": [
            {"bullet_id": b, "before": old, "after": new} for b, old, new in maturity
        ],
        "inversions": [{"bullet_id": a, "anti_pattern_id": b} for a, b in inversions],
    }


def hidden(report: HiddenReport, most: int) -> dict[str, Any]:
    """`recall`'s `hidden`: how many, and the `most` closest to being shown."""
    return {
        "total": report.total,
        "rules": [
            {
                "id": h.bullet.id,
                "content": h.bullet.content,
                "reason": h.reason,
                "why": h.why(),
                "remedies": [
                    {"action": m.action, "note": m.note}
                    | ({"marks": m.marks} if m.marks is not None else {})
                    for m in h.remedies
                ],
            }
            for h in report.hidden[:most]
        ],
    }


def proposal(p: Proposal) -> dict[str, Any]:
    """A pending proposal (`mcp_schemas.Proposed`)."""
    out: dict[str, Any] = {
        "id": p.id,
        "delta": p.delta,
        "origin": p.origin,
        "created_at": iso(p.created_at),
    }
    if p.provenance.session_ref is not None:
        out["session_ref"] = p.provenance.session_ref
    if p.provenance.byte_offset is not None:
        out["byte_offset"] = p.provenance.byte_offset
    if p.stale:
        out["stale"] = p.stale
    return out


def detail(
    d: BulletDetail,
    events: list[FeedbackEvent],
    events_page: dict[str, Any],
    *,
    maturity_shown: int,
) -> dict[str, Any]:
    """`show_bullet`'s answer (`mcp_schemas.ShowOut`): the rule, its score, lineage, the
    latest `maturity_shown` rungs, conflicts, decisions, and one page of its feedback."""
    b = d.bullet
    bullet: dict[str, Any] = {
        "id": b.id,
        "content": b.content,
        "type": b.type,
        "category": b.category,
        "tags": list(b.tags),
        "scope": _scope(b),
        "kind": b.kind,
        "source": b.source,
        "state": b.state,
        "maturity": b.maturity,
        "pinned": b.pinned,
        "created_at": iso(b.created_at),
    }
    if b.pinned_reason:
        bullet["pinned_reason"] = b.pinned_reason
    if b.provenance.session_ref:
        bullet["session_ref"] = b.provenance.session_ref
    score = d.score
    out: dict[str, Any] = {
        "bullet": bullet,
        "score": {k: round(getattr(score, k), 3) for k in ("helpful", "harmful", "effective")}
        | {"earned": score.earned, "stale": score.stale},
        "predecessors": [_related(k, r) for k, r in d.predecessors],
        "successors": [_related(k, r) for k, r in d.successors],
        "maturity_log": [f"{iso(at)} {m}" for at, m in d.maturity_log[-maturity_shown:]],
        "conflicts": [
            f"{c.id} {c.status} with {c.b if c.a == b.id else c.a}: {c.reason}" for c in d.conflicts
        ],
        "decisions": [
            {"at": iso(x.at), "actor": x.actor, "action": x.action, "status": x.status}
            | ({"reason": x.reason} if x.reason else {})
            for x in reversed(d.decisions)
        ],
        "events": {"items": [_event(e) for e in events], **events_page},
    }
    if d.score_at is not None:
        out["score_at"] = iso(d.score_at)
    dep = d.deprecation()
    if dep is not None:
        out["deprecation"] = f"{dep['reason']} ({dep['actor']}, {dep['at']})"
    return out


def _related(kind: str, b: Bullet) -> dict[str, Any]:
    return {"kind": kind, "id": b.id, "content": b.content, "state": b.state,
            "maturity": b.maturity}  # fmt: skip


def _event(e: FeedbackEvent) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": e.id,
        "kind": e.kind,
        "at": iso(e.at),
        "weight": e.weight,
        "actor": e.actor,
    }
    for key, value in (
        ("reason", e.reason),
        ("context", e.context),
        ("session_ref", e.provenance.session_ref),
        ("receipt", e.receipt),
    ):
        if value is not None:
            out[key] = value
    return out
