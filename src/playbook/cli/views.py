"""Text rendering of the API's JSON-ready views (`playbook.review`) for the commands."""

from __future__ import annotations

from typing import Any

from ..core.inert import inert
from ..core.text import plural
from ..review.remedies import LABELS


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
        f"earned {s['earned']}"
        + ("  STALE" if s["stale"] else "")
        + (f"  (frozen at retirement, {data['score_at'][:10]})" if data.get("score_at") else ""),
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
        lines.append(f"{e['kind']} {e['id']}")  # "supersedes b-…", "inverts b-…"
    for e in data["lineage"]["successors"]:
        lines.append(f"{'superseded' if e['kind'] == 'supersedes' else 'inverted'} by {e['id']}")
    if data["timeline"]:
        lines.append(f"timeline ({plural(len(data['timeline']), 'event')}):")
        for e in data["timeline"]:
            extra = f" {e['reason']}" if e.get("reason") else ""
            ctx = f"  {inert(e['context'], one_line=True)}" if e.get("context") else ""
            lines.append(
                f"  {e['at'][:16]}  {e['kind']}{extra} x{e['weight']:g} by {e['actor']}{ctx}"
            )
    return "\n".join(lines)


_LIST_NAMES = {
    "bullets": "rules",
    "anti_patterns": "anti-patterns",
    "deprecated_warnings": "warnings",
}
HIDDEN_SHOWN = 5  # hidden rules listed per reason in the text report
_REASON_TITLES = {
    "outranked": "Outranked",
    "deprecated": "Deprecated (out of the rules)",
    "out_of_scope": "Out of scope",
    "retired": "Retired",
}


def render_hidden(data: dict[str, Any]) -> str:
    """`review.explain_hidden`'s report for a person: per reason, each rule with the numbers
    behind it (`why`) and what would bring it back."""
    counts = data["counts"]
    if not data["total"]:
        return "Hidden: nothing; every rule that matched is shown"
    parts = ", ".join(f"{n} {r.replace('_', ' ')}" for r, n in counts.items() if n)
    lines = [f"Hidden: {plural(data['total'], 'rule')} matched but not shown ({parts})"]
    cuts = [f"{LABELS[name]} {cut:.2f}" for name, cut in data["cutoffs"].items() if cut is not None]
    if cuts:
        lines.append(f"cut-off (final score of #{data['limit']}): {', '.join(cuts)}")
    for reason, title in _REASON_TITLES.items():
        items = [h for h in data["hidden"] if h["reason"] == reason]
        if not items:
            continue
        lines += ["", f"{title} ({counts[reason]}):"]
        for h in items[:HIDDEN_SHOWN]:
            where = f"#{h['rank']} in {LABELS[h['list']]}" if h["rank"] else h["state"]
            lines.append(f"  {h['id']}  {where}  {inert(h['content'], one_line=True)[:70]}")
            lines.append(f"      {inert(h['why'], one_line=True)}")
            lines += [f"      -> {inert(r['note'], one_line=True)}" for r in h["remedies"]]
        if counts[reason] > HIDDEN_SHOWN:
            lines.append(f"  … and {counts[reason] - HIDDEN_SHOWN} more (--json: up to 25 each)")
    return "\n".join(lines)
