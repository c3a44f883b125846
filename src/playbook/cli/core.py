"""init, add, mark, curate, show."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import typer

from ..core.inert import inert
from ..core.terms import HARM_REASONS
from ..core.text import plural
from .common import CliError, emit, open_store, state, target
from .hot import (
    _json,
    _not_applied,
    _outcome_line,
    _provenance,
    _report_one,
    bounded,
    mark_command,
    recall_command,
)
from .registry import app

JSON = typer.Option(False, "--json", help="Print one JSON document on stdout.")


def _curate_one(
    delta: dict[str, Any], *, provenance: dict[str, Any] | None = None, quiet: bool = False
) -> None:
    """`add`: one delta, and a failure (non-zero exit) when it applied nothing. `quiet`
    prints only the id of the rule it added (or folded into), for a script."""
    from ..curation import curate  # lazy: every typer command

    with open_store() as store:
        result = curate(store, [delta], provenance=provenance)
    o = result.outcomes[0]
    if result.nothing_applied:
        raise _not_applied(o.status, o.reason, o.code)
    if quiet and not state.json:
        print(o.bullet_id)
        return
    _report_one(result)


@app.command()
def init(json_out: bool = JSON) -> None:
    """Create the playbook file (and its folder) if needed, and bring its schema up to date."""
    _json(json_out)

    with open_store() as store:
        path, bullets = str(target()), store.count_bullets()
    emit(
        {"path": path, "bullets": bullets},
        f"playbook ready at {path} ({plural(bullets, 'bullet')})",
    )


@app.command()
def add(
    content: str = typer.Argument(..., help="The rule, e.g. 'Pin npm to 11 in release jobs'."),
    tag: list[str] = typer.Option([], "--tag", "-t", help="A tag (repeatable)."),
    category: str | None = typer.Option(None, help="Category, e.g. ci, testing."),
    anti_pattern: bool = typer.Option(False, "--anti-pattern", help="Record an anti-pattern."),
    scope: str | None = typer.Option(None, help="global|workspace|language|framework|task."),
    scope_key: str | None = typer.Option(
        None,
        help="e.g. the language's name; a workspace rule without one is this folder's "
        "workspace ('playbook workspace').",
    ),
    session: str | None = typer.Option(None, help="Provenance: the session it came from."),
    offset: int | None = typer.Option(None, help="Provenance: byte offset in the session diary."),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="Print only the rule's id: id=$(playbook add ... -q)."
    ),
    json_out: bool = JSON,
) -> None:
    """Add a rule (curated: duplicates fold, blocked patterns are refused)."""
    _json(json_out)
    bounded(("--session", session, "ref"))
    delta: dict[str, Any] = {"type": "add", "content": content, "tags": tag}
    if category:
        delta["category"] = category
    if anti_pattern:
        delta["bullet_type"] = "anti-pattern"
    if scope:
        delta["scope"] = scope
    if scope_key:
        delta["scope_key"] = scope_key
    elif scope == "workspace":  # this folder's workspace, as the hooks know it
        from ..project.workspace import workspace_of  # lazy: every typer command

        here = workspace_of(Path.cwd())
        if here is not None:
            delta["scope_key"] = here.key
    _curate_one(delta, provenance=_provenance(session, offset), quiet=quiet)


@app.command()
def mark(
    bullet_id: str = typer.Argument(..., metavar="ID"),
    kind: str = typer.Argument(..., metavar="helpful|harmful"),
    reason: str | None = typer.Option(
        None,
        help=f"For harmful: {', '.join(HARM_REASONS[:-1])} or {HARM_REASONS[-1]}.",
    ),
    context: str | None = typer.Option(None, help="What happened, briefly."),
    session: str | None = typer.Option(None, help="Provenance: the session it came from."),
    json_out: bool = JSON,
) -> None:
    """Record that a rule helped or hurt."""
    mark_command(
        bullet_id, kind, reason=reason, context=context, session=session, json_out=json_out
    )


def read_json_input(source: str, max_bytes: int = 64 << 20) -> Any:
    """JSON from a file or '-' (stdin), read up to `max_bytes`; a user error when it is not
    JSON (an object naming a key twice included)."""
    from ..core.files import TooLarge, loads_json, read_capped  # lazy: every typer command

    try:
        data = read_capped(source, max_bytes, "the batch")
    except TooLarge as exc:
        raise CliError("invalid_input", str(exc)) from None
    except FileNotFoundError:
        raise CliError("file_not_found", f"no such file: {_short_source(source)}") from None
    except IsADirectoryError:
        raise CliError("file_error", f"{_short_source(source)} is a directory") from None
    except PermissionError:
        raise CliError("file_error", f"permission denied: {_short_source(source)}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise CliError("invalid_json", f"{_short_source(source)}: not UTF-8 text") from None
    try:
        return loads_json(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            "invalid_json",
            f"{_short_source(source)}: not valid JSON ({exc.msg} at line {exc.lineno})",
        ) from None
    except ValueError as exc:  # a key named twice, NaN or Infinity
        raise CliError("invalid_json", f"{_short_source(source)}: {exc}") from None
    except RecursionError:
        raise CliError("invalid_json", f"{_short_source(source)}: JSON nested too deeply") from None


def max_size_option(default: str) -> Any:
    return typer.Option(
        default, "--max-size", metavar="SIZE", help="Refuse input larger than this (e.g. 1G)."
    )


def max_size(text: str) -> int:
    """The bytes a --max-size option names (a usage error when it names none)."""
    from ..interop.formats import parse_size  # lazy: every typer command

    try:
        cap = parse_size(text)
    except ValueError as exc:
        raise CliError("invalid_input", f"--max-size: {exc}") from None
    if not 0 < cap <= 1 << 40:
        raise CliError("invalid_input", f"--max-size: {text!r} is not between 1 byte and 1T")
    return cap


def _json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words (a user wrote JSON, not Python)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an object" if isinstance(value, dict) else "a list"


# The six delta shapes, one example each, as `curate --help` prints them (and the README's
# "The command line" shows): each example is checked against the delta union by a test.
DELTA_EXAMPLES: tuple[tuple[str, str], ...] = (
    (
        '{"type": "add", "content": "Pin npm to 11 in release jobs", "tags": ["ci"]}',
        "optional: category, tags, scope (global, workspace, language, framework, task), "
        "scope_key, bullet_type (rule, anti-pattern; an AVOID: prefix makes an "
        "anti-pattern), kind, reason",
    ),
    (
        '{"type": "helpful", "bullet_id": "b-7f3a9c2e", "context": "release passed"}',
        "optional: context",
    ),
    (
        '{"type": "harmful", "bullet_id": "b-7f3a9c2e", "reason": "outdated"}',
        f"optional: reason ({', '.join(HARM_REASONS)}), context",
    ),
    (
        '{"type": "replace", "bullet_id": "b-7f3a9c2e", "content": "Pin npm to 11.4"}',
        "a new rule takes the old one's place and its evidence (not when it flips the "
        "rule: a leading Never, Don't, Avoid...); optional: reason",
    ),
    (
        '{"type": "deprecate", "bullet_id": "b-7f3a9c2e", "reason": "moved to pnpm"}',
        "reason is required",
    ),
    (
        '{"type": "merge", "bullet_ids": ["b-7f3a9c2e", "b-0c1d2e3f"],\n'
        ' "content": "Pin npm and node in CI"}',
        "two or more rules become one that carries the evidence of those of its "
        "polarity; optional: reason",
    ),
)
CURATE_HELP = (
    'Curate a batch of deltas (a JSON list, or {"deltas": [...]}) in one transaction.\n\n'
    "A delta is one of six shapes (ids are the ones `playbook recall` and `show` print):\n\n"
    "\b\n"
    + "\n".join(
        f"{example}\n" + textwrap.fill(fields, 76, initial_indent="    ", subsequent_indent="    ")
        for example, fields in DELTA_EXAMPLES
    )
    + "\n\nExits 1 (error code nothing_applied) when no delta applied, with each one's "
    "reason; a batch that applied in part says so and exits 0. Under an agent's login to a "
    "team's PostgreSQL playbook, replace, merge and deprecate are staged for a person's "
    "review."
)


@app.command("curate", help=CURATE_HELP)
def curate_cmd(
    source: str = typer.Argument(..., metavar="FILE|-", help="A JSON list of deltas."),
    session: str | None = typer.Option(None, help="Provenance: the session they came from."),
    offset: int | None = typer.Option(None, help="Provenance: byte offset in the diary."),
    max_bytes: str = max_size_option("64M"),
    json_out: bool = JSON,
) -> None:
    _json(json_out)
    from ..curation import curate  # lazy: every typer command
    from ..review.agent import agent_login  # lazy: every typer command

    bounded(("--session", session, "ref"))
    deltas = read_json_input(source, max_size(max_bytes))
    if isinstance(deltas, dict) and "deltas" in deltas:
        deltas = deltas["deltas"]
    if not isinstance(deltas, list):
        raise CliError(
            "invalid_input",
            f"{_short_source(source)}: a batch is a JSON list of deltas (or "
            f'{{"deltas": [...]}}), not {_json_kind(deltas)}',
        )
    if not deltas:
        raise CliError("nothing_applied", "the batch is empty: nothing to curate")
    with open_store() as store:
        if agent_login(store):
            _curate_as_agent(store, deltas, _provenance(session, offset))
            return
        result = curate(store, deltas, provenance=_provenance(session, offset))
    data = result.to_dict()
    lines = [f"[{o['index']}] {_outcome_line(o)}" for o in data["outcomes"]]
    _report_batch(data, lines, result.nothing_applied, result.summary(), result.reasons())


def _report_batch(
    data: dict[str, Any], lines: list[str], failed: bool, summary: str, reasons: str
) -> None:
    """A curate batch's report: a line per delta, then maturity changes and inversions;
    a batch that changed nothing is the error `nothing_applied` (exit 1)."""
    lines = [*lines, *(f"{b}: {a} -> {c}" for b, a, c in data["maturity_changes"])]
    lines += [f"{a} inverted into {b}" for a, b in data["inversions"]]
    if failed:
        if not state.json:
            sys.stdout.write("\n".join(lines) + "\n")
        err = CliError(
            "nothing_applied",
            f"{summary}: {reasons}",
            "invalid deltas changed nothing; refusals are in the decision log",
        )
        err.data = data  # with --json: every delta's outcome
        raise err
    emit(data, "\n".join([*lines, summary]))


def _curate_as_agent(store: Any, deltas: list[Any], provenance: dict[str, Any] | None) -> None:
    """`curate` under an agent's login: what applied, and what waits for a person."""
    from ..review.agent import STAGED, curate_as_agent  # lazy: every typer command

    result = curate_as_agent(store, deltas, provenance, origin="cli")
    data = result.to_dict()
    lines = []
    for o in data["outcomes"]:
        if o["status"] == STAGED:
            what = inert(f"{o['type']} {o['bullet_id'] or ''}".strip(), one_line=True)
            lines.append(f"[{o['index']}] staged {o['proposal_id']} ({what}): {o['reason']}")
        else:
            lines.append(f"[{o['index']}] {_outcome_line(o)}")
    if result.staged_count:
        lines.append(
            "this login is an agent's: replace, merge and deprecate wait for a person "
            "('playbook proposals')"
        )
    _report_batch(data, lines, result.nothing_done, result.summary(), result.reasons())


def _short_source(source: str) -> str:
    return "stdin" if source == "-" else inert(source, one_line=True)


@app.command()
def show(bullet_id: str = typer.Argument(..., metavar="ID"), json_out: bool = JSON) -> None:
    """A bullet: content, score, provenance, lineage and its feedback timeline."""
    _json(json_out)
    bounded(("ID", bullet_id, "id"))
    from ..review import NotFound, bullet_detail  # lazy: every typer command
    from .views import render_detail  # lazy: every typer command

    with open_store(read_only=True) as store:
        try:
            data = bullet_detail(store, bullet_id).to_dict()
        except NotFound as exc:
            raise CliError("not_found", str(exc), "see 'playbook recall'") from None
    emit(data, render_detail(data))


@app.command()
def recall(
    query: str = typer.Argument(..., help="What the task is about, e.g. 'release job npm'."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, help="Items per list."),
    as_of: str | None = typer.Option(
        None, "--as-of", help="Recall the playbook as it stood then (ISO date or datetime)."
    ),
    semantic: bool = typer.Option(
        False, "--semantic", help="Blend in hashed-trigram similarity (offline vectors)."
    ),
    scope: list[str] = typer.Option(
        [],
        "--scope",
        help="Caller scope like language:python, or workspace:. for this folder's workspace "
        "(repeatable).",
    ),
    explain_hidden: bool = typer.Option(
        False,
        "--explain-hidden",
        help="Also list the rules that matched but are not shown (outranked, deprecated, "
        "retired, out of scope), with the numbers and what would bring each back.",
    ),
    json_out: bool = JSON,
) -> None:
    """Rules, anti-patterns and deprecated warnings relevant to a task, with their scores."""
    recall_command(
        query,
        limit=limit,
        as_of=as_of,
        semantic=semantic,
        scope=scope,
        explain_hidden=explain_hidden,
        json_out=json_out,
    )
