"""proposals, approve, reject: the review queue at the command line.

`approve` and `reject` act as a human (actor "human"): they are for a person at a terminal.
Agents propose (`playbook reflect`, the MCP propose tool) and never approve: an agent that
runs `playbook approve` is impersonating its reviewer. Several ids are decided one by one
(`review.approve_many` / `reject_many`): a bad id is reported and the others go on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from ..core.inert import inert
from ..core.terms import DELTA_TYPES
from ..core.text import plural
from .common import EXIT_USAGE, CliError, emit, open_store
from .core import JSON
from .hot import _json, _outcome_line, bounded
from .registry import app

if TYPE_CHECKING:
    from ..review import Decided
    from ..review.proposals import Proposal
    from ..store import PlaybookStore

_HINT = "see 'playbook proposals'"


def _short(text: str, width: int = 100) -> str:
    one = inert(" ".join(text.split()), one_line=True)
    return one if len(one) <= width else one[: width - 1] + "…"


def _queue_error(exc: Exception) -> CliError:
    """A queue error as the CLI reports it: by its code (`playbook.review.queue`'s types)."""
    code = getattr(exc, "code", "invalid_input")
    hint = _HINT if code in ("not_found", "not_pending", "stale_proposal") else None
    return CliError(code, str(exc), hint)


def _word_diff(ops: list[tuple[str, str]]) -> str:
    """A word diff on one line, as `git diff --word-diff` writes it: [-old-]{+new+}."""
    marks = {"equal": "{}", "delete": "[-{}-]", "insert": "{{+{}+}}"}
    return "".join(marks[op].format(inert(" ".join(text.split(" ")), one_line=True))
                   for op, text in ops)  # fmt: skip


def _describe_delta(store: PlaybookStore, delta: dict[str, Any]) -> list[str]:
    kind = delta.get("type")
    if "content" in delta:
        head = _short(str(delta["content"]), 200)
        tags = delta.get("tags") or []
        if tags:
            head += "  " + " ".join(f"#{_short(str(t), 30)}" for t in tags)
        lines = [f"  {head}"]
    else:
        lines = []
    targets = delta.get("bullet_ids") or ([delta["bullet_id"]] if "bullet_id" in delta else [])
    for bid in targets:
        b = store.get_bullet(bid)
        text = _short(b.content, 90) if b else "(no such bullet)"
        state = f"{b.state}/{b.maturity}" if b else "-"  # as it is now, not when proposed
        lines.append(f"  {'merges' if kind == 'merge' else 'on'} {bid} [{state}] {text}")
    for key in ("reason", "context"):
        if delta.get(key):
            lines.append(f"  {key}: {_short(str(delta[key]))}")
    return lines


def render_proposal(store: PlaybookStore, p: Proposal) -> list[str]:
    """A proposal for a reviewer: what it does, where it came from, the word diff of a
    replace or merge, and (from `pending`) the closest existing rules."""
    from ..review import proposal_diffs  # lazy: --help, every typer command

    prov = p.provenance
    where = ""
    if prov.session_ref:
        where = f"  from {_short(prov.session_ref, 60)}"
        if prov.byte_offset is not None:
            where += f" @ byte {prov.byte_offset}"
    lines = [f"{p.id}  {p.delta.get('type')}  ({p.origin}){where}"]
    lines += _describe_delta(store, p.delta)
    for bid, ops in proposal_diffs(store, p):
        lines.append(f"  diff {bid}: {_short(_word_diff(ops), 300)}")
    if p.stale:
        lines.append(f"  STALE: {_short(p.stale, 200)}; approving it will fail")
    for s in p.similar:
        lines.append(
            f"  similar {s.similarity:.2f}  {s.bullet_id} [{s.state}/{s.maturity}] "
            f"{_short(s.content, 80)}"
        )
    return lines


@app.command()
def proposals(
    limit: int | None = typer.Option(None, help="Show at most this many."),
    session: str | None = typer.Option(
        None, "--session", metavar="REF", help="Only those proposed from this session."
    ),
    type_: str | None = typer.Option(
        None, "--type", metavar="TYPE", help=f"Only this delta type: {', '.join(DELTA_TYPES)}."
    ),
    json_out: bool = JSON,
) -> None:
    """Proposed deltas awaiting review, oldest first, each with its word diff (replace,
    merge) and the closest existing rules."""
    _json(json_out)
    bounded(("--session", session, "ref"))
    if type_ is not None and type_ not in DELTA_TYPES:
        raise CliError(
            "usage",
            f"--type: {_short(type_, 40)!r} is not a delta type ({', '.join(DELTA_TYPES)})",
            exit_code=EXIT_USAGE,
        )
    from ..review.queue import count_pending, pending  # lazy: --help, every typer command

    with open_store(read_only=True) as store:
        items = pending(store, limit=limit, session=session, delta_type=type_)
        total = count_pending(store)
        data: dict[str, Any] = {"pending": total, "proposals": [p.to_dict() for p in items]}
        filtered = session is not None or type_ is not None
        if filtered:
            data["matching"] = len(pending(store, session=session, delta_type=type_,
                                           similar=False))  # fmt: skip
        lines: list[str] = []
        if not json_out:
            for p in items:
                lines += render_proposal(store, p)
            if filtered:
                lines.append(f"{data['matching']} of {total} pending match")
            else:
                lines.append(f"{total} pending" if total else "no proposals pending")
    emit(data, "\n".join(lines))


def _decided_lines(d: Decided, verb: str) -> list[str]:
    if not d.ok:
        return [f"refused {d.proposal_id}: {d.code}: {_short(d.message or '', 200)}"]
    lines = [f"{verb} {d.proposal_id}" + (f"; blocked as {d.block_id}" if d.block_id else "")]
    if d.result is not None:
        lines += [f"  {_outcome_line(o)}" for o in d.result.to_dict()["outcomes"]]
        lines += [f"  {b}: {a} -> {c}" for b, a, c in d.result.maturity_changes]
        lines += [f"  {a} inverted into {b}" for a, b in d.result.inversions]
    return lines


def _many(decided: list[Decided], verb: str) -> None:
    """Several proposals decided: one outcome each; exit 1 only when none was."""
    done = sum(1 for d in decided if d.ok)
    data = {
        "outcomes": [d.to_dict() for d in decided],
        verb: done,
        "refused": len(decided) - done,
    }
    lines = [line for d in decided for line in _decided_lines(d, verb)]
    if not done:
        reasons = "; ".join(f"{d.proposal_id}: {d.code}" for d in decided[:5])
        err = CliError(
            "nothing_applied", f"none of the {len(decided)} proposals was {verb}: {reasons}", _HINT
        )
        err.data = data  # with --json: every id's outcome
        raise err
    lines.append(f"{verb} {done} of {plural(len(decided), 'proposal')}")
    emit(data, "\n".join(lines))


@app.command()
def approve(
    proposal_ids: list[str] = typer.Argument(..., metavar="ID..."),
    edit: str | None = typer.Option(
        None, "--edit", metavar="TEXT", help="Approve with this content instead (both kept)."
    ),
    json_out: bool = JSON,
) -> None:
    """Approve proposals as a human reviewer: each is curated with its recorded provenance.

    Several ids are approved one by one; a refused one (unknown, decided, stale) is
    reported and the others go on. For people only: agents propose, never approve.
    """
    _json(json_out)
    bounded(*(("ID", pid, "id") for pid in proposal_ids), ("--edit", edit, "content"))
    if edit is not None and len(proposal_ids) > 1:
        raise CliError("usage", "--edit goes with one proposal id", exit_code=EXIT_USAGE)
    from ..review import approve_many  # lazy: --help, every typer command
    from ..review.queue import QueueError  # lazy: --help, every typer command
    from ..review.queue import approve as approve_proposal  # lazy: --help, every typer command

    with open_store(create=False) as store:
        if len(proposal_ids) > 1:
            _many(approve_many(store, proposal_ids, actor="human"), "approved")
            return
        (proposal_id,) = proposal_ids
        try:
            result = approve_proposal(store, proposal_id, actor="human", edited=edit)
        except QueueError as exc:
            raise _queue_error(exc) from None
    data: dict[str, Any] = {"proposal": proposal_id, "result": result.to_dict()}
    lines = [f"approved {proposal_id}" + (" (edited)" if edit is not None else "")]
    lines += [f"  {_outcome_line(o)}" for o in data["result"]["outcomes"]]
    lines += [f"  {b}: {a} -> {c}" for b, a, c in result.maturity_changes]
    lines += [f"  {a} inverted into {b}" for a, b in result.inversions]
    emit(data, "\n".join(lines))


@app.command()
def reject(
    proposal_ids: list[str] = typer.Argument(..., metavar="ID..."),
    reason: str = typer.Option(..., "--reason", "-r", help="Why (kept in the decision log)."),
    block: bool = typer.Option(
        False, "--block", help="Also block its content: never staged or added again."
    ),
    json_out: bool = JSON,
) -> None:
    """Reject proposals as a human reviewer, optionally blocking their patterns. Several
    ids are rejected one by one with the same reason."""
    _json(json_out)
    bounded(*(("ID", pid, "id") for pid in proposal_ids), ("--reason", reason, "text"))
    from ..review import reject_many  # lazy: --help, every typer command
    from ..review.queue import QueueError  # lazy: --help, every typer command
    from ..review.queue import reject as reject_proposal  # lazy: --help, every typer command

    with open_store(create=False) as store:
        if len(proposal_ids) > 1:
            try:
                decided = reject_many(store, proposal_ids, reason, block=block, actor="human")
            except QueueError as exc:
                raise _queue_error(exc) from None
            _many(decided, "rejected")
            return
        (proposal_id,) = proposal_ids
        try:
            block_id = reject_proposal(store, proposal_id, reason, block=block, actor="human")
        except QueueError as exc:
            raise _queue_error(exc) from None
    data = {"proposal": proposal_id, "status": "rejected", "block_id": block_id}
    human = f"rejected {proposal_id}" + (f"; blocked as {block_id}" if block_id else "")
    emit(data, human)
