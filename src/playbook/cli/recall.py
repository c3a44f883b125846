"""recall: what an agent asks before a task."""

from __future__ import annotations

import typer

from ..inert import inert
from . import app
from .common import CliError, emit, json_option, open_store, set_json


def _render(data: dict) -> str:
    sections = (
        ("bullets", "Rules"),
        ("anti_patterns", "Avoid"),
        ("deprecated_warnings", "No longer recommended"),
    )
    lines: list[str] = []
    for key, title in sections:
        items = data[key]
        if not items:
            continue
        lines.append(f"{title}:")
        for item in items:
            b = item["bullet"]
            pin = " pinned" if b["pinned"] else ""
            lines.append(
                f"  {b['id']}  {item['final_score']:6.2f}  {b['maturity']}{pin}  "
                f"{inert(b['content'], one_line=True)}"
            )
    for reason in data["degraded"]:
        lines.append(f"(degraded: {inert(reason, one_line=True)})")
    return "\n".join(lines) if lines else "nothing recalled"


@app.command()
def recall(
    query: str = typer.Argument(..., help="The task, in words: 'release job npm'."),
    limit: int = typer.Option(10, "--limit", "-n", min=0, help="At most this many per list."),
    scope: list[str] = typer.Option(
        [], "--scope", "-s", help="Caller scope such as language:python (repeatable)."
    ),
    as_of: str | None = typer.Option(
        None, "--as-of", help="Recall the playbook as it stood then (ISO date or datetime)."
    ),
    semantic: bool = typer.Option(
        False, "--semantic", help="Also rank by similarity (hashed-trigram vectors, offline)."
    ),
    json_out: bool = json_option(),
) -> None:
    """Rules, anti-patterns and deprecation warnings relevant to a task, best first."""
    set_json(json_out)
    from ..retrieval import parse_when
    from ..retrieval import recall as run_recall

    when = None
    if as_of is not None:
        try:
            when = parse_when(as_of)
        except ValueError:
            raise CliError(
                "invalid_input", f"--as-of: not an ISO date or datetime: {as_of!r}"
            ) from None
    with open_store(create=False) as store:
        vectors = None
        if semantic:
            from ..vectors import HashTrigramEmbedder, MemoryVectors

            vectors = MemoryVectors(store, HashTrigramEmbedder())
        result = run_recall(
            store, query, vectors=vectors, limit=limit, as_of=when, scope=scope or None
        )
    data = result.to_dict()
    emit(data, _render(data))
