"""reflect, outcome, topics: how the playbook learns. (Its review queue, `proposals`,
`approve` and `reject`, is `cli/proposals.py`.)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import typer

from ..core.text import plural
from .common import EXIT_USAGE, CliError, emit, open_store
from .core import JSON, max_size, max_size_option
from .hot import _json, _outcome_line, _short, outcome_command
from .registry import app

if TYPE_CHECKING:
    from ..store import PlaybookStore


# ------------------------------------------------------------------------ reflect


@app.command()
def reflect(
    diary: str = typer.Argument(
        ...,
        metavar="DIARY",
        help="Notes (text/Markdown) or a Claude Code / Codex transcript; a pipe such as "
        "<(cmd) works, and - reads stdin.",
    ),
    session: str = typer.Option(
        ..., "--session", help="The session's ref; reflection resumes from its watermark."
    ),
    reflector: str | None = typer.Option(
        None,
        "--reflector",
        metavar="CMD",
        help="A program that reads the prompt on stdin and prints JSON deltas, "
        "e.g. 'claude -p' or 'llm -m gpt-4o-mini'. Run without a shell.",
    ),
    heuristic: bool = typer.Option(
        False,
        "--heuristic",
        help="No model: read explicit RULE:, AVOID: and [playbook: helpful b-…] markers. "
        "The default when --reflector is not given.",
    ),
    timeout: float = typer.Option(120.0, help="Seconds the --reflector program may run."),
    apply: bool = typer.Option(
        False, "--apply", help="Curate at once instead of staging in the review queue."
    ),
    max_bytes: str = max_size_option("512M"),
    json_out: bool = JSON,
) -> None:
    """Turn a session diary into proposed deltas, staged for review (or curated with --apply).

    Only the part of the diary past the session's watermark is read (for a pipe or stdin,
    the bytes before it are skipped); the watermark advances when the results are stored,
    so running it again proposes nothing twice. Only whole lines are read: a last line
    without its newline yet is read next time.
    """
    _json(json_out)
    import sys  # lazy: every typer command

    from ..reflection.reflectors import (  # lazy: every typer command
        CommandReflector,
        HeuristicReflector,
        Reflector,
    )
    from ..reflection.session import reflect_session  # lazy: every typer command
    from ..review.agent import agent_login  # lazy: every typer command

    if reflector is not None and heuristic:
        raise CliError(
            "usage", "choose one of --reflector CMD and --heuristic", exit_code=EXIT_USAGE
        )
    if not session.strip():
        raise CliError("usage", "--session needs a session ref", exit_code=EXIT_USAGE)
    from ..reflection.reflectors.command import MAX_TIMEOUT  # lazy: every typer command

    if not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT):  # nan or inf: no bound
        raise CliError(
            "usage",
            f"--timeout is a number of seconds above 0, at most {MAX_TIMEOUT:g}, not {timeout!r}",
            exit_code=EXIT_USAGE,
        )
    chosen: Reflector
    if reflector is not None:
        try:
            chosen = CommandReflector(reflector, timeout=timeout)
        except ValueError as exc:
            raise CliError("usage", f"--reflector: {exc}") from None
    else:
        chosen = HeuristicReflector()
    # The diary is opened before the playbook, so a bad path changes nothing; it is read
    # through a cap, so /dev/zero or a huge stdin is refused instead of filling memory.
    from ..core.files import Capped, TooLarge  # lazy: every typer command

    cap = max_size(max_bytes)
    raw = _open_diary(diary) if diary != "-" else sys.stdin.buffer
    source = Capped(raw, cap, "the diary" if diary != "-" else "the diary on stdin")
    with source, open_store() as store:
        if isinstance(chosen, CommandReflector):
            chosen.max_prompt_chars = store.policy.reflect_prompt_chars
        as_agent = apply and agent_login(store)
        try:
            result = reflect_session(
                store,
                session,
                source,
                chosen,
                apply=apply,
                as_agent=as_agent,
            )
        except TooLarge as exc:
            raise CliError("invalid_input", str(exc), "nothing was stored") from None
        if not result.ok:
            raise CliError(
                "reflector_failed",
                "; ".join(result.errors),
                "nothing was stored and the watermark did not move",
            )
        data = result.to_dict()
        human = _render_reflection(store, data) if not json_out else None
    emit(data, human)


def _open_diary(diary: str) -> BinaryIO:
    """The diary file (or pipe) opened for reading; a user error if it cannot be."""
    path = Path(diary)
    if path.is_dir():
        raise CliError("file_error", f"the diary is a directory: {diary}")
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise CliError("file_not_found", f"no such diary file: {diary}") from None
    except OSError as exc:
        raise CliError("file_error", f"cannot read the diary {diary}: {exc.strerror}") from None


def _render_reflection(store: PlaybookStore, data: dict[str, Any]) -> str:
    from ..review.proposal_view import with_similar  # lazy: every typer command
    from ..review.queue import get  # lazy: every typer command
    from .proposals import render_proposal  # lazy: the cli cycle through `app`

    lines = [
        f"reflected on {_short(data['session_ref'], 60)}: "
        f"{plural(data['iterations'], 'iteration')}, "
        f"stopped: {data['stopped']}; watermark {data['watermark_before']} -> "
        f"{data['watermark_after']}"
    ]
    if data["applied"]:
        for batch in data["curated"]:
            for o in batch["outcomes"]:
                lines.append(f"  {_outcome_line(o)}")
        if data["staged"]:  # an agent's login: replace, merge and deprecate wait
            lines.append(
                f"this login is an agent's: {plural(len(data['staged']), 'proposal')} "
                "(replace, merge, deprecate) staged for a person ('playbook proposals')"
            )
    if not data["applied"] or data["staged"]:
        for pid in data["staged"]:
            p = get(store, pid)
            if p is not None:
                lines.extend(render_proposal(store, with_similar(store, p)))
        if data["duplicates"]:
            lines.append(f"{len(data['duplicates'])} already pending, not staged again")
    for r in data["rejected"]:
        lines.append(f"rejected (iteration {r['iteration']}): {_short(r['reason'])}")
    placed = data["truncated"] - data["unplaced"]
    if placed:
        lines.append(
            f"{placed} more left for the next run: the delta cap was reached; "
            f"run again to go on from byte {data['watermark_after']}"
        )
    if data["unplaced"]:
        lines.append(
            f"{data['unplaced']} more left out: the delta cap was reached and the reflector "
            "did not say where in the diary they came from"
        )
    if data["unfinished"]:
        lines.append(
            f"the last line ({data['unfinished']} bytes) has no newline yet: it is read next time"
        )
    if not data["proposed"]:
        lines.append("nothing new to propose")
    elif not data["applied"] and data["staged"]:
        lines.append("review with 'playbook proposals', then 'playbook approve ID'")
    return "\n".join(lines)


# ------------------------------------------------------------------------ outcomes


@app.command()
def outcome(
    result: str = typer.Argument(..., metavar="success|failure|partial"),
    bullet_ids: list[str] = typer.Argument(..., metavar="ID...", help="The bullets it cites."),
    receipt: str | None = typer.Option(
        None, "--receipt", help="Idempotency key: a report with a known receipt applies nothing."
    ),
    context: str | None = typer.Option(None, "--context", help="What the task was, briefly."),
    session: str | None = typer.Option(None, "--session", help="Provenance: the session."),
    json_out: bool = JSON,
) -> None:
    """Record a task outcome as feedback on the bullets it relied on.

    success = helpful, failure = harmful, partial = helpful at 1/3 weight. Each id counts
    once; unknown ids are skipped and counted.
    """
    outcome_command(
        result, bullet_ids, receipt=receipt, context=context, session=session, json_out=json_out
    )


# ------------------------------------------------------------------------ consolidation


@app.command()
def topics(
    stage: bool = typer.Option(False, "--stage", help="Stage each merge in the review queue."),
    threshold: float = typer.Option(0.6, help="Least subject similarity (token Jaccard)."),
    max_groups: int = typer.Option(50, help="Most topics to return."),
    max_group_size: int = typer.Option(8, help="Most bullets in one topic."),
    json_out: bool = JSON,
) -> None:
    """Groups of near-duplicate active bullets, each with a proposed merge."""
    _json(json_out)
    from ..review.topics import stage_topics  # lazy: every typer command
    from ..review.topics import topics as find_topics  # lazy: every typer command

    if not 0 < threshold <= 1:
        raise CliError("invalid_input", "--threshold must be in (0, 1]")
    if max_groups < 1 or max_group_size < 2:
        raise CliError("invalid_input", "--max-groups must be >= 1 and --max-group-size >= 2")
    with open_store(create=False) as store:
        found = find_topics(
            store, threshold=threshold, max_groups=max_groups, max_group_size=max_group_size
        )
        staged = stage_topics(store, found) if stage else None
        data: dict[str, Any] = {"topics": [t.to_dict() for t in found]}
        if staged is not None:
            data["staged"] = staged.to_dict()
        lines: list[str] = []
        if not json_out:
            for n, t in enumerate(found, 1):
                size, sim = len(t.bullet_ids), t.similarity
                lines.append(f"topic {n}: {plural(size, 'bullet')}, similarity {sim:.2f}")
                for bid in t.bullet_ids:
                    b = store.get_bullet(bid)
                    mark = "*" if bid == t.keep else " "
                    lines.append(f" {mark} {bid} {_short(b.content, 90) if b else ''}")
            lines.append(plural(len(found), "topic") if found else "no near-duplicates found")
            if staged is not None:
                lines.append(
                    f"staged {plural(len(staged.staged), 'merge')}; "
                    f"{len(staged.duplicates)} already proposed"
                )
            elif found:
                lines.append("* = wording kept; stage the merges with --stage")
    emit(data, "\n".join(lines))
