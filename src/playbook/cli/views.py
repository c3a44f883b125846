"""Plain data views shared by the commands (JSON-ready dicts) and their text rendering."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..inert import inert
from .common import CliError

if TYPE_CHECKING:
    from ..store import PlaybookStore


def bullet_detail(store: PlaybookStore, bullet_id: str) -> dict[str, Any]:
    bullet = store.get_bullet(bullet_id)
    if bullet is None:
        raise CliError("not_found", f"no bullet with id {bullet_id!r}", "see 'playbook recall'")
    score = store.score(bullet_id)
    lineage = store.lineage(bullet_id)
    return {
        "bullet": bullet.model_dump(mode="json"),
        "score": score.model_dump(mode="json"),
        "lineage": {
            "predecessors": [{"kind": k, "id": i} for k, i in lineage.predecessors],
            "successors": [{"kind": k, "id": i} for k, i in lineage.successors],
        },
        "timeline": [e.model_dump(mode="json") for e in store.timeline(bullet_id)],
        "deprecation": _deprecation(store, bullet_id)
        if bullet.maturity == "deprecated" or bullet.state == "retired"
        else None,
    }


def _deprecation(store: PlaybookStore, bullet_id: str) -> dict[str, Any] | None:
    """Why the bullet was deprecated: its latest applied `deprecate` decision (a curate
    batch's, or an import's that carried the source's reason)."""
    for d in reversed(store.decisions(bullet_id=bullet_id)):
        if d.action == "deprecate" and d.status == "applied":
            keys = ("source", "deprecated_at", "replaced_by")
            extra = {k: d.detail[k] for k in keys if k in d.detail}
            return {"reason": d.reason, "at": d.at.isoformat(), "actor": d.actor, **extra}
    return None


def render_detail(data: dict[str, Any]) -> str:
    b, s = data["bullet"], data["score"]
    pin = f"  pinned: {inert(b['pinned_reason'] or '', one_line=True)}" if b["pinned"] else ""
    lines = [
        f"{b['id']}  {b['type']}  {b['maturity']}  {b['state']}{pin}",
        inert(b["content"]),
        f"category {inert(b['category'], one_line=True)}  tags "
        f"{inert(', '.join(b['tags']), one_line=True) or '-'}  scope {b['scope']}"
        + (f":{inert(b['scope_key'], one_line=True)}" if b["scope_key"] else ""),
        f"score {s['effective']:.2f}  helpful {s['helpful']:.2f}  harmful {s['harmful']:.2f}  "
        f"earned {s['earned']}" + ("  STALE" if s["stale"] else ""),
    ]
    prov = b["provenance"]
    if prov.get("session_ref"):
        where = f" @ byte {prov['byte_offset']}" if prov.get("byte_offset") is not None else ""
        lines.append(f"from {inert(prov['session_ref'], one_line=True)}{where}")
    dep = data.get("deprecation")
    if dep and dep.get("reason"):
        when = dep.get("deprecated_at") or dep["at"]
        lines.append(f"deprecated {when[:10]}: {inert(dep['reason'], one_line=True)}")
    for e in data["lineage"]["predecessors"]:
        lines.append(f"{e['kind']} {e['id']}")
    for e in data["lineage"]["successors"]:
        lines.append(f"{'superseded' if e['kind'] == 'supersedes' else 'inverted'} by {e['id']}")
    if data["timeline"]:
        lines.append(f"timeline ({len(data['timeline'])} events):")
        for e in data["timeline"]:
            extra = f" {e['reason']}" if e.get("reason") else ""
            ctx = f"  {inert(e['context'], one_line=True)}" if e.get("context") else ""
            lines.append(
                f"  {e['at'][:16]}  {e['kind']}{extra} x{e['weight']:g} by {e['actor']}{ctx}"
            )
    return "\n".join(lines)
