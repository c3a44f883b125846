"""where, workspace: which playbook and which workspace a command run here uses.

`playbook where` says which playbook a command run in this folder opens, and why (--db,
$PLAYBOOK_DB, the project's .playbook.toml, the default file), and the streaming replica
its reads go to when one is named (--read-db, $PLAYBOOK_READ_DB; a URL's password masked,
as the playbook's is). `playbook workspace` says
which workspace this folder is (`project.workspace`: the normalised remote URL, else the
folder's name): the key a rule scoped to it carries, and how many rules carry this
folder's bare name instead (keyed before that identity, they show only where the folder
name is the workspace).
"""

from __future__ import annotations

import os
from pathlib import Path

from .common import (
    CliError,
    emit,
    json_option,
    open_store,
    read_target,
    set_json,
    state,
    target,
)
from .registry import app


@app.command()
def where(json_out: bool = json_option()) -> None:
    """Which playbook a command run here uses, and why (it opens nothing)."""
    set_json(json_out)
    from ..project.config import ProjectConfigError, locate_playbook  # lazy: every typer command
    from ..store import resolve_target  # lazy: every typer command

    try:
        located = locate_playbook(state.db, Path.cwd())
    except ProjectConfigError as exc:
        raise CliError("invalid_input", str(exc)) from None
    source = located.source
    if source == "--db" and os.environ.get("PLAYBOOK_DB") == state.db:
        source = "$PLAYBOOK_DB"  # typer reads the variable into the option
    where_to = resolve_target(located.target) if located.target.strip() else None
    shown = str(where_to) if where_to is not None else ""
    data = {
        "playbook": shown,
        "source": source,
        "config": str(located.config.path) if located.config else None,
        "exists": bool(where_to and where_to.exists()),
    }
    read = read_target() if where_to is not None else None  # a wrong pair: a usage error
    data["read_db"] = str(read) if read is not None else None
    data["read_source"] = (
        None if read is None else "--read-db" if state.read_db else "$PLAYBOOK_READ_DB"
    )
    why = located.describe() if located.config else source
    lines = [f"{shown}  ({'from ' + why if located.config else why})"]
    if read is not None:
        lines.append(f"reads from the replica {read}  (from {data['read_source']})")
    emit(data, "\n".join(lines))


@app.command()
def workspace(json_out: bool = json_option()) -> None:
    """This folder's workspace: the key rules scoped to it carry (used by the hooks,
    `recall --scope workspace:.` and `add --scope workspace`)."""
    set_json(json_out)
    from ..project.workspace import workspace_of  # lazy: every typer command

    found = workspace_of(Path.cwd())
    if found is None:
        raise CliError("not_found", "this folder is no workspace")
    data: dict[str, object] = {"key": found.key, "name": found.name, "source": found.source}
    human = [
        f"{found.key}  (from the {'remote URL' if found.source == 'remote' else 'folder name'})"
    ]
    older = _rules_keyed(found.name) if found.source == "remote" else 0
    data["rules_keyed_by_folder_name"] = older
    if older:
        human.append(
            f"{older} rule(s) are scoped to the workspace {found.name!r}, this folder's name: "
            f"they do not show here (this workspace is {found.key})"
        )
    emit(data, "\n".join(human))


def _rules_keyed(name: str) -> int:
    """Active workspace rules keyed `name` in the playbook here (0 without one)."""
    from ..store import holds_playbook  # lazy: every typer command

    if not holds_playbook(target()):
        return 0
    with open_store(read_only=True) as store:
        return sum(
            1
            for b in store.bullets(state="active")
            if b.scope == "workspace" and (b.scope_key or "").lower() == name.lower()
        )
