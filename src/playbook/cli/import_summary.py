"""What `playbook import` says it did, in words: counts, rules made live, what was scoped
where, maturity, and what could not be mapped."""

from __future__ import annotations

from typing import Any

from ..core.inert import inert

_LABELS = {
    "bullets": "bullets",
    "feedback": "feedback events",
    "edges": "edges",
    "maturity_log": "maturity-log entries",
    "blocked_patterns": "blocked patterns",
    "receipts": "receipts",
    "proposals": "proposals",
    "conflicts": "conflicts",
    "decisions": "decisions",
    "watermarks": "watermarks",
    "proposed": "proposals to review",
    "already_proposed": "already proposed",
}


def summary(report: Any, path: Any) -> str:
    c = {k: n for k, n in report.counts.items() if k != "already_proposed"}
    parts = [f"{n} {_LABELS.get(k, k)}" for k, n in c.items() if n or k in ("bullets", "feedback")]
    what = ", ".join(parts) if any(c.values()) else "nothing new"
    human = [f"imported {what} ({report.format}) into {path}"]
    if report.format == "cass-diary":
        if report.counts.get("already_proposed"):
            n = report.counts["already_proposed"]
            human.append(f"{n} lesson(s) already proposed from this session: not proposed again")
        if report.counts.get("proposed"):
            human.append(
                "nothing is a rule until a person approves it: 'playbook proposals' lists "
                "them, 'playbook approve ID' or the workbench decides"
            )
    if report.merged:
        human.append(f"{len(report.merged)} rule(s) already here: their new events were added")
    live = report.live
    if live.get("from_draft"):
        human.append(
            f"{live['rules']} imported rule(s) are live; {live['from_draft']} were drafts in "
            "cass-memory, which uses its drafts, so they came in active"
        )
    elif live.get("rules"):
        human.append(f"{live['rules']} imported rule(s) are live")
    human += _scoped(report.workspaces)
    m = report.maturity
    if m.get("rated"):
        if m["kept"] == "as recorded":
            line = (
                f"maturity kept as recorded; the maturity pass (--rerate) would move "
                f"{m['would_move']} of {m['rated']} rules"
            )
            if m["earned_differs"] != m["would_move"]:
                line += (
                    f" (their evidence earns another rung on {m['earned_differs']}, but the "
                    "pass lowers a rung only on a negative score)"
                )
            human.append(line)
        else:
            human.append(f"maturity pass run (--rerate): {len(report.maturity_changes)} moved")
    if report.notes:
        human.append(f"{len(report.notes)} item(s) could not be mapped (listed on stderr)")
    for old, new in report.ids.items():
        human.append(f"id {inert(old, one_line=True)} is now {new}")
    for bid, before, after in report.maturity_changes:
        human.append(f"{bid}: {before} -> {after}")
    return "\n".join(human)


_HOW = {
    "path": "that folder's identity here",
    "folder-name": "not a folder on this machine: its last folder's name",
    "kept": "kept as written",
}


def _scoped(ws: dict[str, Any]) -> list[str]:
    """What was scoped where: rules per scope, then each workspace mapping."""
    if not ws.get("scopes"):
        return []
    scopes = ", ".join(f"{n} {scope}" for scope, n in ws["scopes"].items())
    lines = [f"rules by scope (as imported): {scopes}"]
    for m in ws["mapped"]:
        n, how = m["rules"], m["how"]
        if how == "unkeyed":
            lines.append(
                f"  {n} workspace rule(s) name no workspace and no repository holds the file: "
                "they show in every workspace (--workspace scopes them)"
            )
            continue
        if how == "repository" and m.get("scope") == "global":
            what = "rule(s) marked global in the file"
            why = "cass-memory reads a repository's file only there; --keep-global keeps them"
        elif how == "repository":
            what, why = "workspace rule(s) without a key", ws.get("found_by") or "given"
        else:
            what, why = f"workspace rule(s) keyed {inert(m['from'], one_line=True)}", _HOW[how]
        lines.append(f"  {n} {what} -> {inert(m['to'], one_line=True)} ({why})")
    return lines
