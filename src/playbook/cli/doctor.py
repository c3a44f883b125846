"""doctor: check a playbook file for damage and say how to recover; `--fix` folds again
the evidence kept at another half-life than the policy gives."""

from __future__ import annotations

from typing import Any

import typer

from ..core.inert import inert
from .common import (
    EXIT_DATABASE,
    EXIT_OK,
    db_target,
    emit,
    json_option,
    load_policy_option,
    open_store,
    set_json,
)
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
    fix: bool = typer.Option(
        False,
        "--fix",
        help="Fold again, at the half-life --policy gives each rule, the evidence cache and "
        "days of the rules noted as kept at another (one transaction; this writes), and "
        "check again",
    ),
) -> int:
    """Check the playbook (SQLite's quick page check; what each table still reads; rows that
    break a rule) and explain how to recover a damaged one. Only reads, unless --fix.
    Notes (exit 0) the rules whose evidence is kept at another half-life than --policy /
    $PLAYBOOK_POLICY gives them. Exits 3 when it finds a problem."""
    set_json(json_out)
    from ..store import diagnose  # lazy: every typer command

    policy = load_policy_option()
    found = diagnose(db_target(), full=full, policy=policy)
    folded = 0
    if fix and found.healthy and found.notes:  # (a damaged playbook is not written to)
        with open_store(create=False) as store:
            folded = store.refold()
        found = diagnose(db_target(), full=full, policy=policy)
    report = found.to_dict()
    if fix:
        report["folded_again"] = folded
    emit(report, _render(report))
    return EXIT_OK if report["healthy"] else EXIT_DATABASE


def _render(d: dict[str, Any]) -> str:
    lines = [f"playbook at {inert(d['path'], one_line=True)}"]
    if d.get("folded_again") is not None:
        n = d["folded_again"]
        lines.append(f"folded again: the evidence of {n} rule{'' if n == 1 else 's'}")
    if d["healthy"]:
        version = d["schema_version"]
        lines.append(f"ok: the checks passed (schema version {version})")
    else:
        lines.append("problems:" if d["problems"] else "not usable as a playbook")
        lines += [f"  {inert(p, one_line=True)}" for p in d["problems"]]
    if d["notes"]:
        lines.append("notes:")
        lines += [f"  {inert(n, one_line=True)}" for n in d["notes"]]
    if d["readable"]:
        lines.append("rows that still read:")
        lines += [
            f"  {table:<17} {inert(str(n), one_line=True)}" for table, n in d["readable"].items()
        ]
    if d["recovery"]:
        lines.append("to recover:")
        lines += [f"  {i}. {step}" for i, step in enumerate(d["recovery"], 1)]
    return "\n".join(lines)
