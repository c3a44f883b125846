"""copy: move a whole playbook between a file and a database (either way, or file to file)."""

from __future__ import annotations

import sys

import typer

from ..core.errors import DatabaseNotEmptyError
from .common import CliError, emit, json_option, set_json
from .registry import app


@app.command()
def copy(
    source: str = typer.Argument(..., help="The playbook to copy: a file or a postgresql:// URL."),
    destination: str = typer.Argument(
        ..., help="Where to: a new file, or a postgresql:// URL whose database holds no playbook."
    ),
    json_out: bool = json_option(),
) -> None:
    """Copy a whole playbook: every rule with its full feedback log, blocks, edges, review
    queue, receipts, watermarks and caches, keys and order kept (its export is the same
    bytes). The source is only read; a destination that already holds a playbook is refused.
    `--db` plays no part: both ends are given."""
    set_json(json_out)
    from ..store import copy_playbook  # lazy: every typer command

    def tell(table: str, rows: int) -> None:
        if sys.stderr.isatty() and not json_out:
            sys.stderr.write(f"\rcopying {table}: {rows} rows\033[K")
            sys.stderr.flush()

    try:
        report = copy_playbook(source, destination, progress=tell)
    except DatabaseNotEmptyError as exc:  # (not --db's playbook: say so without it)
        raise CliError(exc.code, str(exc), "copy into a new file, or an empty database") from None
    if sys.stderr.isatty() and not json_out:
        sys.stderr.write("\r\033[K")
    c = report.counts
    human = (
        f"copied {c['bullets']} bullets, {c['feedback']} feedback events, "
        f"{c['decisions']} decisions from {report.source} to {report.destination}"
    )
    emit(report.to_dict(), human)
