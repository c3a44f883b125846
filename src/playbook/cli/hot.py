"""The bodies of the commands agents run on every task, `mark`, `recall` and `outcome`,
and the helpers every command shares, without the command-line framework.

`cli/core.py` declares these commands for typer (their arguments, options and help: the
one definition of each) and calls the functions here; `playbook.launcher` calls them
straight from a plain command line that `cli/fast.py` has read against that definition,
so a one-shot `playbook mark`, `recall` or `outcome` never loads typer.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..core.inert import inert
from ..core.policy import DEFAULT_POLICY
from ..core.terms import OUTCOMES
from ..core.text import plural
from .common import CliError, emit, load_policy_option, open_store, state


def _json(flag: bool) -> None:
    state.json = flag


def _short(text: str, width: int = 100) -> str:
    one = inert(" ".join(text.split()), one_line=True)
    return one if len(one) <= width else one[: width - 1] + "…"


def _outcome_line(o: dict[str, Any]) -> str:
    text = f"{o['status']}"
    if o.get("bullet_id"):  # for a rejected item, whatever the caller sent as an id
        text += f" {inert(o['bullet_id'], one_line=True)}"
    if o.get("reason"):
        text += f": {inert(o['reason'], one_line=True)}"
    return text


def _report_one(result: Any) -> None:
    data = result.to_dict()
    human = _outcome_line(data["outcomes"][0])
    for bid, old, new in result.maturity_changes:
        human += f"\n{bid}: {old} -> {new}"
    for old, new in result.inversions:
        human += f"\n{old} inverted into {new}"
    emit(data, human)


def _not_applied(status: str, reason: str | None, outcome: str | None) -> CliError:
    """The CLI error of one delta that applied nothing, by its outcome's code."""
    if outcome == "not_found":
        return CliError("not_found", reason or "no such bullet")
    if status == "rejected-invalid":
        return CliError("invalid_input", reason or "invalid delta")
    return CliError("nothing_applied", f"{status}: {reason}" if reason else status)


# `mark`'s parameters as its command line spells them (`review.actions.check_mark` names
# them in its messages).
MARK_NAMES = {
    "bullet_id": "ID",
    "kind": "KIND",
    "reason": "--reason",
    "context": "--context",
    "session_ref": "--session",
    "receipt": "--receipt",
}


def _policy() -> Any:
    """The policy a command's arguments are bounded by (`--policy`, or the default)."""

    return load_policy_option() or DEFAULT_POLICY


def bounded(*fields: tuple[str, Any, str]) -> None:
    """Refuse (invalid_input, one line) an argument over its bound in the policy: checked
    before anything is opened, never cut. Each field is (name, value, kind of limit)."""
    from ..core.limits import check  # lazy: --help

    check(_policy(), fields)


def _provenance(session: str | None, offset: int | None) -> dict[str, Any] | None:
    if session is None and offset is None:
        return None
    return {"session_ref": session, "byte_offset": offset}


def mark_command(
    bullet_id: str,
    kind: str,
    *,
    reason: str | None = None,
    context: str | None = None,
    session: str | None = None,
    json_out: bool = False,
) -> None:
    """Record that a rule helped or hurt."""
    _json(json_out)
    from ..review.actions import NotApplied, check_mark  # lazy: --help, recall, every typer command
    from ..review.actions import mark as mark_bullet  # lazy: --help, recall, every typer command

    # The API's own check, before anything is opened (`review.mark` makes it again).
    check_mark(
        _policy(),
        bullet_id,
        kind,
        reason=reason,
        context=context,
        session_ref=session,
        names=MARK_NAMES,
    )
    with open_store(create=False) as store:  # a vote needs a playbook that holds the rule
        try:
            result = mark_bullet(
                store,
                bullet_id,
                kind,
                reason=reason,
                context=context,
                provenance=_provenance(session, None),
                actor="agent",
            )
        except NotApplied as exc:
            raise _not_applied(exc.status, exc.reason, exc.outcome) from None
    _report_one(result)


def outcome_command(
    result: str,
    bullet_ids: list[str],
    *,
    receipt: str | None = None,
    context: str | None = None,
    session: str | None = None,
    json_out: bool = False,
) -> None:
    """Record a task outcome as feedback on the bullets it relied on."""
    _json(json_out)
    bounded(("--session", session, "ref"))
    from ..curation.outcomes import InvalidOutcome, apply_outcome  # lazy: --help, mark, recall

    if result not in OUTCOMES:
        raise CliError(
            "invalid_input", f"expected success, failure or partial, not {_short(result, 40)!r}"
        )
    report = {"outcome": result, "bullet_ids": bullet_ids, "receipt": receipt, "context": context}
    with open_store(create=False) as store:
        try:
            res = apply_outcome(
                store, report, provenance={"session_ref": session} if session else None
            )
        except InvalidOutcome as exc:
            raise CliError("invalid_input", str(exc)) from None
    data = res.to_dict()
    if res.replayed:
        human = f"receipt {_short(receipt or '', 60)} already recorded: nothing applied"
    else:
        human = f"{result}: applied to {plural(len(res.applied), 'bullet')}"
        if res.applied:
            human += ": " + ", ".join(res.applied)
        if res.skipped:
            human += f"\nskipped {len(res.skipped)} unknown or retired: " + ", ".join(
                _short(s, 40) for s in res.skipped
            )
        if res.duplicate_citations:
            human += f"\n{plural(res.duplicate_citations, 'repeated citation')} counted once"
        human += "".join(f"\n{b}: {a} -> {c}" for b, a, c in res.maturity_changes)
        human += "".join(f"\n{a} inverted into {b}" for a, b in res.inversions)
    emit(data, human)


def recall_command(
    query: str,
    *,
    limit: int = 10,
    as_of: str | None = None,
    semantic: bool = False,
    scope: list[str] | tuple[str, ...] = (),
    explain_hidden: bool = False,
    json_out: bool = False,
) -> None:
    """Rules, anti-patterns and deprecated warnings relevant to a task, with their scores."""
    _json(json_out)
    from ..retrieval.query import parse_when  # lazy: --help, mark, every typer command
    from ..retrieval.query import recall as run_recall  # lazy: --help, mark, every typer command

    bounded(("query", query, "query"))

    when = None
    if as_of is not None:  # an empty --as-of is a mistake, not "now"
        try:
            when = parse_when(as_of)
        except ValueError:
            raise CliError("invalid_input", f"--as-of: not a date: {as_of!r}") from None
    scope = _here(scope)
    with open_store(read_only=True, replica=True) as store:
        vectors = None
        if semantic:
            from ..retrieval.vectors import (  # lazy: --help, mark, recall, every typer command
                HashTrigramEmbedder,
                MemoryVectors,
            )

            vectors = MemoryVectors(store, HashTrigramEmbedder())
        result = run_recall(
            store, query, vectors=vectors, limit=limit, as_of=when, scope=list(scope) or None
        )
        hidden = None
        if explain_hidden:
            from ..review import explain_hidden as explain  # lazy: --help, mark, recall, typer

            hidden = explain(
                store, query, limit=limit, scope=list(scope) or None, as_of=when, vectors=vectors
            ).to_dict()
    for reason in result.degraded:
        sys.stderr.write(f"playbook: degraded: {reason}\n")
    data = result.to_dict()
    human = _render_recall(result)
    if hidden is not None:
        from .views import render_hidden  # lazy: --help, mark, recall, every typer command

        data["hidden"] = hidden
        human += "\n\n" + render_hidden(hidden)
    emit(data, human)


def _here(scope: list[str] | tuple[str, ...]) -> list[str] | tuple[str, ...]:
    """``workspace:.`` in a recall's scope: this folder's workspace (`project.workspace`,
    the key the hooks recall with)."""
    if "workspace:." not in scope:
        return scope

    from ..project.workspace import workspace_of  # lazy: --help, mark, recall, every typer command

    here = workspace_of(Path.cwd())
    if here is None:
        raise CliError("invalid_input", "--scope workspace:.: this folder is no workspace")
    return [f"workspace:{here.key}" if s == "workspace:." else s for s in scope]


def _render_recall(result: Any) -> str:
    sections = [
        ("Rules", result.bullets),
        ("Anti-patterns", result.anti_patterns),
        ("Deprecated: don't do this any more", result.deprecated_warnings),
    ]
    lines: list[str] = []
    for title, items in sections:
        if not items:
            continue
        lines.append(f"{title}:")
        for it in items:
            sim = f" sim {it.similarity:.2f}" if it.similarity is not None else ""
            content = inert(it.record.content, one_line=True)
            lines.append(f"  {it.final_score:7.2f}  {it.record.id}  {content}")
            lines.append(
                f"           keyword {it.keyword_score:g}{sim}  relevance {it.relevance:.2f}  "
                f"confidence {it.effective_score:.2f}  ({it.record.maturity})"
            )
    return "\n".join(lines) if lines else "nothing in the playbook matches"
