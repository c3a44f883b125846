"""pin, unpin, activate, block, unblock, blocked, stats, stale.

Pins, blocks and drafts made live here are human actions: the CLI is a person at a
terminal. (Agents reach Playbook over MCP, which has no tool for any of them.)
"""

from __future__ import annotations

from typing import Any

import typer

from ..core.inert import inert
from ..core.policy import DEFAULT_POLICY
from ..core.text import plural
from .common import CliError, emit, json_option, load_policy_option, open_store, set_json, target
from .hot import bounded
from .registry import app


def _one_line(text: str | None, width: int | None = None) -> str:
    out = inert(text or "", one_line=True)
    if width is not None and len(out) > width:
        out = out[: width - 1] + "…"
    return out


# ----------------------------------------------------------------------------- pins


@app.command()
def pin(
    bullet_id: str = typer.Argument(..., metavar="ID"),
    reason: str = typer.Option(..., "--reason", "-r", help="Why this rule must not move."),
    json_out: bool = json_option(),
) -> None:
    """Pin a rule: its maturity never moves and agents cannot retire or replace it."""
    set_json(json_out)
    bounded(("ID", bullet_id, "id"), ("--reason", reason, "text"))
    from .. import review  # lazy: every typer command

    if not reason.strip():
        raise CliError("invalid_input", "a pin needs a reason")
    with open_store() as store:
        was = review.pin(store, bullet_id, reason, actor="human")
    emit(
        {"bullet_id": bullet_id, "pinned": True, "reason": reason, "was_pinned": was},
        f"pinned {bullet_id}: {_one_line(reason)}",
    )


@app.command()
def unpin(
    bullet_id: str = typer.Argument(..., metavar="ID"), json_out: bool = json_option()
) -> None:
    """Unpin a rule: its maturity follows its evidence again."""
    set_json(json_out)
    bounded(("ID", bullet_id, "id"))
    from .. import review  # lazy: every typer command

    with open_store() as store:
        was = review.unpin(store, bullet_id, actor="human")
    emit(
        {"bullet_id": bullet_id, "pinned": False, "was_pinned": was},
        f"unpinned {bullet_id}" if was else f"{bullet_id} was not pinned",
    )


@app.command()
def activate(
    bullet_ids: list[str] = typer.Argument(None, metavar="ID...", help="Draft rules."),
    all_drafts: bool = typer.Option(False, "--all-drafts", help="Every draft in the playbook."),
    json_out: bool = json_option(),
) -> None:
    """Make draft rules live: agents are shown them from now on (session start, the
    AGENTS.md export, recall). A human decision; all or none (an unknown or retired id
    changes nothing)."""
    set_json(json_out)
    ids = list(bullet_ids or [])
    if not ids and not all_drafts:
        raise CliError("usage", "name the drafts to make live (IDs), or --all-drafts", None, 2)

    most = (load_policy_option() or DEFAULT_POLICY).max_batch
    if len(ids) > most:
        raise CliError("invalid_input", f"{len(ids):,} ids; at most {most:,} at once")
    bounded(*(("ID", bid, "id") for bid in ids))
    from .. import review  # lazy: every typer command

    with open_store(create=False) as store:
        if all_drafts:
            ids += [b.id for b in store.bullets(state="draft")]
        done = review.activate(store, ids, actor="human")
    lines = [f"activated {bid}" for bid in done.activated]
    lines += [f"{bid} was live already" for bid in done.already]
    emit(done.to_dict(), "\n".join(lines) or "no drafts to make live")


# ----------------------------------------------------------------------------- blocks


def _block_dict(b: Any) -> dict[str, Any]:
    from ..store import iso  # lazy: every typer command

    return {
        "id": b.id,
        "pattern": b.pattern,
        "reason": b.reason,
        "actor": b.actor,
        "created_at": iso(b.created_at),
        "active": b.active,
        "unblocked_at": iso(b.unblocked_at) if b.unblocked_at else None,
    }


@app.command()
def block(
    pattern: str = typer.Argument(..., help="Text that new rules must not resemble."),
    reason: str = typer.Option(..., "--reason", "-r", help="Why it is blocked."),
    json_out: bool = json_option(),
) -> None:
    """Block a pattern: adds that match it (exactly, by tokens or fuzzily) are refused."""
    set_json(json_out)
    bounded(("PATTERN", pattern, "content"), ("--reason", reason, "text"))
    if not reason.strip():
        raise CliError("invalid_input", "a block needs a reason")
    with open_store() as store:
        block_id = store.block(pattern, reason, actor="human")
        (made,) = [b for b in store.blocked() if b.id == block_id]
    emit(_block_dict(made), f"blocked {block_id}: {_one_line(pattern)}")


@app.command()
def unblock(
    block_id: str = typer.Argument(..., metavar="ID", help="A block id from 'playbook blocked'."),
    json_out: bool = json_option(),
) -> None:
    """Lift a block (it stays in the record, inactive)."""
    set_json(json_out)
    bounded(("ID", block_id, "id"))
    with open_store() as store:
        store.unblock(block_id, actor="human")
    emit({"id": block_id, "active": False}, f"unblocked {block_id}")


@app.command()
def blocked(
    all_: bool = typer.Option(False, "--all", "-a", help="Include lifted blocks."),
    json_out: bool = json_option(),
) -> None:
    """List blocked patterns."""
    set_json(json_out)
    with open_store(read_only=True) as store:
        items = [_block_dict(b) for b in store.blocked(include_inactive=all_)]
    lines = []
    for b in items:
        flag = "" if b["active"] else "  (lifted)"
        lines.append(
            f"{b['id']}  {_one_line(b['pattern'], 60)}  — {_one_line(b['reason'], 60)}{flag}"
        )
    emit(items, "\n".join(lines) if lines else "no blocked patterns")


# ----------------------------------------------------------------------------- stats


@app.command()
def stats(json_out: bool = json_option()) -> None:
    """Counts: bullets by state, maturity and type; score buckets; stale rules; the queue."""
    set_json(json_out)
    from ..review.stats import playbook_stats  # lazy: every typer command

    with open_store(read_only=True, replica=True) as store:
        data = {"path": str(target()), **playbook_stats(store)}
    buckets = {b["label"]: b["count"] for b in data["score_buckets"]}
    feedback, pending = data["feedback"], data["pending_proposals"]
    stale, stale_days = data["stale"], data["stale_after_days"]
    conflicts, blocks = data["open_conflicts"], data["blocked_patterns"]
    b = data["bullets"]

    def row(values: dict[str, int]) -> str:
        return "  ".join(f"{k} {v}" for k, v in values.items())

    human = [
        f"playbook at {_one_line(data['path'])} ({plural(b['total'], 'bullet')})",
        f"state      {row(b['by_state'])}",
        f"maturity   {row(b['by_maturity'])}   (not retired)",
        f"type       {row(b['by_type'])}",
        f"pinned     {b['pinned']}",
        "scores     " + "  ".join(f"[{k}] {v}" for k, v in buckets.items()),
        f"stale      {stale} (no feedback for {stale_days:g} days)",
        f"feedback   {plural(data['feedback']['events'], 'event')} "
        f"({feedback['helpful']} helpful, {feedback['harmful']} harmful)",
        f"review     {plural(pending, 'proposal')} pending, "
        f"{plural(conflicts, 'open conflict')}, {plural(blocks, 'blocked pattern')}",
    ]
    emit(data, "\n".join(human))


@app.command()
def stale(
    limit: int = typer.Option(50, "--limit", "-n", min=0, help="Show at most this many."),
    json_out: bool = json_option(),
) -> None:
    """Rules with no feedback for a long time (policy: stale_after_days): re-validate them."""
    set_json(json_out)
    from .. import review  # lazy: every typer command

    with open_store(read_only=True, replica=True) as store:
        found = review.stale(store, limit)
    data = found.to_dict()
    lines = [
        f"{i['bullet']['id']}  {plural(round(i['days_silent']), 'day')}  "
        f"{_one_line(i['bullet']['content'], 80)}"
        for i in data["items"]
    ]
    if found.total > len(found.items):
        lines.append(f"… and {found.total - len(found.items)} more (--limit)")
    threshold = found.stale_after_days
    emit(data, "\n".join(lines) if lines else f"nothing stale (threshold {threshold:g} days)")
