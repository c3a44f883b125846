"""init, add, mark, curate, show."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from ..inert import inert
from ..terms import HARM_REASONS
from ..text import plural
from . import app
from .common import CliError, emit, open_store, state

JSON = typer.Option(False, "--json", help="Print one JSON document on stdout.")


def _json(flag: bool) -> None:
    state.json = flag


def _outcome_line(o: dict[str, Any]) -> str:
    text = f"{o['status']}"
    if o.get("bullet_id"):  # for a rejected item, whatever the caller sent as an id
        text += f" {inert(o['bullet_id'], one_line=True)}"
    if o.get("reason"):
        text += f": {inert(o['reason'], one_line=True)}"
    return text


def _curate_one(delta: dict[str, Any], *, provenance: dict[str, Any] | None = None) -> None:
    """`add`: one delta, and a failure (non-zero exit) when it applied nothing."""
    from ..curation import curate

    with open_store() as store:
        result = curate(store, [delta], provenance=provenance)
    if result.nothing_applied:
        o = result.outcomes[0]
        raise _not_applied(o.status, o.reason)
    _report_one(result)


def _report_one(result: Any) -> None:
    data = result.to_dict()
    human = _outcome_line(data["outcomes"][0])
    for bid, old, new in result.maturity_changes:
        human += f"\n{bid}: {old} -> {new}"
    for old, new in result.inversions:
        human += f"\n{old} inverted into {new}"
    emit(data, human)


def _not_applied(status: str, reason: str | None) -> CliError:
    if status == "rejected-invalid":
        code = "not_found" if (reason or "").startswith("no bullet") else "invalid_input"
        return CliError(code, reason or "invalid delta")
    return CliError("nothing_applied", f"{status}: {reason}" if reason else status)


def bounded(*fields: tuple[str, Any, str]) -> None:
    """Refuse (invalid_input, one line) an argument over its bound in the policy: checked
    before anything is opened, never cut. Each field is (name, value, kind of limit)."""
    from ..limits import check
    from ..policy import DEFAULT_POLICY
    from .common import load_policy_option

    check(load_policy_option() or DEFAULT_POLICY, fields)


def _provenance(session: str | None, offset: int | None) -> dict[str, Any] | None:
    if session is None and offset is None:
        return None
    return {"session_ref": session, "byte_offset": offset}


@app.command()
def init(json_out: bool = JSON) -> None:
    """Create the playbook file (and its folder) if needed, and bring its schema up to date."""
    _json(json_out)
    from .common import db_path

    with open_store() as store:
        data = {"path": str(db_path()), "bullets": store.count_bullets()}
    emit(data, f"playbook ready at {data['path']} ({plural(data['bullets'], 'bullet')})")


@app.command()
def add(
    content: str = typer.Argument(..., help="The rule, e.g. 'Pin npm to 11 in release jobs'."),
    tag: list[str] = typer.Option([], "--tag", "-t", help="A tag (repeatable)."),
    category: str | None = typer.Option(None, help="Category, e.g. ci, testing."),
    anti_pattern: bool = typer.Option(False, "--anti-pattern", help="Record an anti-pattern."),
    scope: str | None = typer.Option(None, help="global|workspace|language|framework|task."),
    scope_key: str | None = typer.Option(None, help="e.g. the repo or language name."),
    session: str | None = typer.Option(None, help="Provenance: the session it came from."),
    offset: int | None = typer.Option(None, help="Provenance: byte offset in the session diary."),
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
    _curate_one(delta, provenance=_provenance(session, offset))


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
    _json(json_out)
    bounded(("ID", bullet_id, "id"), ("--context", context, "text"), ("--session", session, "ref"))
    from ..review import NotApplied
    from ..review import mark as mark_bullet

    if kind not in ("helpful", "harmful"):
        raise CliError("invalid_input", f"expected helpful or harmful, not {kind!r}")
    if reason and kind != "harmful":
        raise CliError("invalid_input", "--reason goes with harmful marks")
    with open_store() as store:
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
            raise _not_applied(exc.status, exc.reason) from None
    _report_one(result)


def read_json_input(source: str) -> Any:
    """JSON from a file or '-' (stdin); a user error when it is not JSON."""
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
    except FileNotFoundError:
        raise CliError("file_not_found", f"no such file: {_short_source(source)}") from None
    except UnicodeDecodeError:
        raise CliError("invalid_json", f"{_short_source(source)}: not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            "invalid_json",
            f"{_short_source(source)}: not valid JSON ({exc.msg} at line {exc.lineno})",
        ) from None
    except RecursionError:
        raise CliError("invalid_json", f"{_short_source(source)}: JSON nested too deeply") from None


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


@app.command("curate")
def curate_cmd(
    source: str = typer.Argument(..., metavar="FILE|-", help="A JSON list of deltas."),
    session: str | None = typer.Option(None, help="Provenance: the session they came from."),
    offset: int | None = typer.Option(None, help="Provenance: byte offset in the diary."),
    json_out: bool = JSON,
) -> None:
    """Curate a batch of deltas (a JSON list, or {"deltas": [...]}) in one transaction.

    Exits 1 (error code nothing_applied) when no delta applied, with each one's reason; a
    batch that applied in part says so and exits 0.
    """
    _json(json_out)
    from ..curation import curate

    bounded(("--session", session, "ref"))
    deltas = read_json_input(source)
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
        result = curate(store, deltas, provenance=_provenance(session, offset))
    data = result.to_dict()
    lines = [f"[{o['index']}] {_outcome_line(o)}" for o in data["outcomes"]]
    lines += [f"{b}: {a} -> {c}" for b, a, c in result.maturity_changes]
    lines += [f"{a} inverted into {b}" for a, b in result.inversions]
    if result.nothing_applied:
        if not state.json:
            sys.stdout.write("\n".join(lines) + "\n")
        err = CliError(
            "nothing_applied",
            f"{result.summary()}: {result.reasons()}",
            "invalid deltas changed nothing; refusals are in the decision log",
        )
        err.data = data  # type: ignore[attr-defined]  # with --json: every delta's outcome
        raise err
    emit(data, "\n".join([*lines, result.summary()]))


def _short_source(source: str) -> str:
    return "stdin" if source == "-" else inert(source, one_line=True)


@app.command()
def show(bullet_id: str = typer.Argument(..., metavar="ID"), json_out: bool = JSON) -> None:
    """A bullet: content, score, provenance, lineage and its feedback timeline."""
    _json(json_out)
    bounded(("ID", bullet_id, "id"))
    from ..review import NotFound, bullet_detail
    from .views import render_detail

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
        [], "--scope", help="Caller scope like language:python or workspace:web (repeatable)."
    ),
    json_out: bool = JSON,
) -> None:
    """Rules, anti-patterns and deprecated warnings relevant to a task, with their scores."""
    _json(json_out)
    from ..retrieval import parse_when
    from ..retrieval import recall as run_recall

    bounded(("query", query, "query"))

    when = None
    if as_of:
        try:
            when = parse_when(as_of)
        except ValueError:
            raise CliError("invalid_input", f"--as-of: not a date: {as_of!r}") from None
    with open_store(read_only=True) as store:
        vectors = None
        if semantic:
            from ..vectors import HashTrigramEmbedder, MemoryVectors

            vectors = MemoryVectors(store, HashTrigramEmbedder())
        result = run_recall(
            store, query, vectors=vectors, limit=limit, as_of=when, scope=scope or None
        )
    for reason in result.degraded:
        sys.stderr.write(f"playbook: degraded: {reason}\n")
    emit(result.to_dict(), _render_recall(result))


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
