"""doctor: check a playbook file for damage and say how to recover."""

from __future__ import annotations

from typing import Any

import typer

from ..core.inert import inert
from .common import EXIT_DATABASE, EXIT_OK, db_target, emit, json_option, set_json
from .registry import app


@app.command()
def doctor(
    json_out: bool = json_option(),
    full: bool = typer.Option(
        False,
        "--full",
        help="Read every row again, even those the database's rules vouch for; SQLite: "
        "look every row up in its indexes too (slow on big files)",
    ),
) -> int:
    """Check the playbook (SQLite's quick page check; what each table still reads; rows that
    break a rule) and explain how to recover a damaged one. Only reads. Exits 3 when it
    finds a problem."""
    set_json(json_out)
    from ..store import diagnose  # lazy: every typer command

    report = diagnose(db_target(), full=full)
    emit(report.to_dict(), _render(report.to_dict()))
    return EXIT_OK if report.healthy else EXIT_DATABASE


def _render(d: dict[str, Any]) -> str:
    lines = [f"playbook at {inert(d['path'], one_line=True)}"]
    if d["healthy"]:
        version = d["schema_version"]
        lines.append(f"ok: the checks passed (schema version {version})")
    else:
        lines.append("problems:" if d["problems"] else "not usable as a playbook")
        lines += [f"  {inert(p, one_line=True)}" for p in d["problems"]]
    if d["readable"]:
        lines.append("rows that still read:")
        lines += [
            f"  {table:<17} {inert(str(n), one_line=True)}" for table, n in d["readable"].items()
        ]
    if d["recovery"]:
        lines.append("to recover:")
        lines += [f"  {i}. {step}" for i, step in enumerate(d["recovery"], 1)]
    return "\n".join(lines)
