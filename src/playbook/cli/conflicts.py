"""restore, conflicts, resolve: the reviewer's decisions the workbench also offers.

Human actions (actor "human"), each a thin wrapper over one `playbook.review` function.
"""

from __future__ import annotations

from typing import Any

import typer

from ..core.inert import inert
from .common import EXIT_USAGE, CliError, emit, json_option, open_store, set_json
from .hot import bounded
from .registry import app


def _short(text: str | None, width: int = 90) -> str:
    one = inert(" ".join((text or "").split()), one_line=True)
    return one if len(one) <= width else one[: width - 1] + "…"


@app.command()
def restore(
    bullet_id: str = typer.Argument(..., metavar="ID"),
    reason: str = typer.Option("", "--reason", "-r", help="Why (kept in the decision log)."),
    json_out: bool = json_option(),
) -> None:
    """Undo a deprecation: the rule returns to the rung its evidence earns (at least
    candidate). A human decision; pin it as well to keep it from moving again."""
    set_json(json_out)
    bounded(("ID", bullet_id, "id"), ("--reason", reason, "text"))
    from .. import review  # lazy: every typer command

    with open_store(create=False) as store:
        done = review.restore(store, bullet_id, reason or None, actor="human")
    emit(done.to_dict(), f"restored {bullet_id}: deprecated -> {done.maturity}")


def _side(side: dict[str, Any]) -> str:
    b = side["bullet"]
    if b is None:
        return f"{side['id']}  (no such bullet)"
    score = side["score"]["effective"] if side["score"] else 0.0
    return f"{b['id']}  {b['maturity']:<11} {score:6.2f}  {_short(b['content'])}"


@app.command()
def conflicts(
    all_: bool = typer.Option(False, "--all", "-a", help="Include resolved conflicts."),
    json_out: bool = json_option(),
) -> None:
    """Open conflict flags: pairs of rules with the same subject and opposite polarity."""
    set_json(json_out)
    from .. import review  # lazy: every typer command

    with open_store(read_only=True) as store:
        views = review.conflicts(store, include_resolved=all_)
    items = [v.to_dict() for v in views]
    lines: list[str] = []
    for c in items:
        status = "" if c["status"] == "open" else f"  ({_short(c['resolution'], 60)})"
        lines.append(f"conflict {c['id']}: {_short(c['reason'], 80)}{status}")
        lines.append(f"  a {_side(c['a'])}")
        lines.append(f"  b {_side(c['b'])}")
    if items and not all_:
        lines.append("resolve with 'playbook resolve ID keep|deprecate|merge'")
    emit(items, "\n".join(lines) if lines else "no open conflicts")


@app.command()
def resolve(
    conflict_id: int = typer.Argument(..., metavar="ID", help="From 'playbook conflicts'."),
    action: str = typer.Argument(..., metavar="keep|deprecate|merge"),
    bullet: str | None = typer.Option(
        None, "--bullet", "-b", help="deprecate: which side (a bullet id of the pair)."
    ),
    reason: str | None = typer.Option(None, "--reason", "-r", help="deprecate: why."),
    content: str | None = typer.Option(
        None, "--content", "-c", help="merge: the one rule that replaces both."
    ),
    keep_pin: bool = typer.Option(
        False, "--keep-pin", help="merge: pin the new rule if a side was pinned."
    ),
    json_out: bool = json_option(),
) -> None:
    """Resolve a conflict: keep both, deprecate one side, or merge both into one rule.

    A merge keeps the evidence of the side whose meaning the new rule shares; the other
    side's feedback is not carried over (its harm would read as harm of the new rule).
    """
    set_json(json_out)
    bounded(
        ("--bullet", bullet, "id"), ("--reason", reason, "text"), ("--content", content, "content")
    )
    from .. import review  # lazy: every typer command

    if action not in ("keep", "deprecate", "merge"):
        raise CliError(
            "usage", f"expected keep, deprecate or merge, not {_short(action, 40)!r}", None, 2
        )
    needs = {"deprecate": ("--bullet", bullet), "merge": ("--content", content)}
    if action in needs and not needs[action][1]:
        raise CliError("usage", f"{action} needs {needs[action][0]}", exit_code=EXIT_USAGE)
    if action == "deprecate" and not (reason or "").strip():
        raise CliError("usage", "deprecate needs --reason", exit_code=EXIT_USAGE)
    with open_store(create=False) as store:
        if action == "keep":
            done = review.keep_both(store, conflict_id, actor="human")
        elif action == "deprecate":
            assert bullet is not None and reason is not None
            done = review.deprecate_one(store, conflict_id, bullet, reason, actor="human")
        else:
            assert content is not None
            done = review.merge(store, conflict_id, content, keep_pin=keep_pin, actor="human")
    human = f"conflict {conflict_id}: {done.resolution}"
    if done.result is not None:
        for o in done.result.outcomes:
            if o.code == "not_carried" and o.reason:
                human += f"\n{_short(o.reason, 200)}"
    emit(done.to_dict(), human)
