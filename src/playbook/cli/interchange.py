"""export and import."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..inert import inert
from . import app
from .common import CliError, emit, json_option, note, open_store, set_json, target
from .core import bounded

if TYPE_CHECKING:
    from ..store import Target

EXPORT_FORMATS = ("json", "yaml", "agents-md")
IMPORT_FORMATS = ("auto", "json", "yaml", "cass")


def _write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` via a temporary file in the same folder, so a reader never
    sees half a file and a failed write leaves the old one intact."""
    path = path.expanduser()
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise CliError("file_error", f"no such folder: {folder}")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@app.command()
def export(
    fmt: str = typer.Option(
        "json", "--format", "-f", help="json or yaml (the whole database), or agents-md."
    ),
    output: str | None = typer.Option(
        None, "--output", "-o", help="Write to this file instead of stdout."
    ),
    title: str = typer.Option("Playbook", help="agents-md: the document's title."),
    json_out: bool = json_option(),
) -> None:
    """Export the playbook: json/yaml round-trip through 'playbook import'; agents-md is
    AGENTS.md / CLAUDE.md text (proven and established rules by category, anti-patterns
    as "Avoid", deprecated rules left out)."""
    set_json(json_out)
    if fmt not in EXPORT_FORMATS:
        raise CliError(
            "invalid_input",
            f"unknown export format {fmt!r}",
            f"use one of {', '.join(EXPORT_FORMATS)}",
        )
    counts: dict[str, int] | None = None
    content: Any
    with open_store(read_only=True) as store:
        if fmt == "agents-md":
            from ..interop.agents_md import render_store

            text = content = render_store(store, title=title)
        else:
            from ..interop.snapshot import counts as count_sections
            from ..interop.snapshot import export_snapshot, to_json, to_yaml

            doc = export_snapshot(store)
            counts = count_sections(doc)
            text = to_json(doc) if fmt == "json" else to_yaml(doc)
            content = doc if fmt == "json" else text
    if output is not None and output != "-":
        path = Path(output)
        _write_atomically(path, text)
        data = {"format": fmt, "path": str(path), "bytes": len(text.encode()), "counts": counts}
        what = f"{counts['bullets']} bullets, {counts['feedback']} events" if counts else fmt
        emit(data, f"exported {what} to {path}")
        return
    if sys.stdout.isatty() and not json_out and fmt != "agents-md":
        note("playbook: writing the export to the terminal; use -o FILE to save it")
    if json_out:
        emit({"format": fmt, "counts": counts, "content": content})
    else:
        sys.stdout.write(text)


class _ProgressBar:
    """A one-line progress bar on stderr, drawn only on a terminal and only once an
    import has run long enough to be worth watching."""

    DELAY = 0.3  # seconds before the bar appears
    WIDTH = 30

    def __init__(self, label: str, *, enabled: bool) -> None:
        self.label = label
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        finished = done >= total
        if now - self.start < self.DELAY and not (finished and self.drawn):
            return
        if not finished and now - self.last < 0.05:
            return
        self.last = now
        frac = done / total if total else 1.0
        filled = int(frac * self.WIDTH)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        sys.stderr.write(f"\r{self.label} [{bar}] {frac:4.0%} {done}/{total}")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _read_input(source: str, max_bytes: int) -> bytes:
    """The file's bytes; a file over the cap is refused before it is read (stdin: as soon as
    more than the cap has arrived)."""
    from ..interop.formats import too_large

    try:
        if source == "-":
            data = sys.stdin.buffer.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise CliError("invalid_import", f"stdin: {too_large(len(data), max_bytes)}")
            return data
        path = Path(source).expanduser()
        size = path.stat().st_size
        if size > max_bytes:
            raise CliError("invalid_import", f"{source}: {too_large(size, max_bytes)}")
        return path.read_bytes()
    except FileNotFoundError:
        raise CliError("file_not_found", f"no such file: {source}") from None
    except IsADirectoryError:
        raise CliError("file_error", f"{source} is a directory") from None
    except PermissionError:
        raise CliError("file_error", f"permission denied: {source}") from None


def _remove_database(where: Target) -> None:
    """Remove a playbook file the failed import created (a database on a server keeps its
    empty playbook: the import was one transaction, so it holds nothing of it)."""
    from ..store import remove_playbook_file

    remove_playbook_file(where)


_LABELS = {
    "bullets": "bullets",
    "feedback": "feedback events",
    "edges": "edges",
    "maturity_log": "maturity-log entries",
    "blocked_patterns": "blocked patterns",
    "receipts": "receipts",
    "proposals": "proposals",
    "conflicts": "conflicts",
    "decisions": "decisions",
    "watermarks": "watermarks",
    "proposed": "proposals to review",
    "already_proposed": "already proposed",
}


@app.command("import")
def import_cmd(
    source: str = typer.Argument(..., metavar="FILE|-", help="The file to import ('-': stdin)."),
    fmt: str = typer.Option(
        "auto",
        "--format",
        "-f",
        help="json or yaml (a Playbook export), cass (a cass-memory playbook.yaml or "
        "blocked.log), or auto (decide from the content).",
    ),
    rerate: bool = typer.Option(
        False,
        "--rerate",
        help="Run the maturity pass over the imported rules (default: keep the maturity the "
        "file recorded).",
    ),
    max_size: str = typer.Option(
        "512M", "--max-size", metavar="SIZE", help="Refuse files larger than this (e.g. 1G)."
    ),
    workspace: str | None = typer.Option(
        None,
        "--workspace",
        metavar="PATH|KEY",
        help="cass-memory: the workspace whose rules the file holds (a folder here, a remote "
        "URL or a key). Default: the repository whose .cass folder holds the file.",
    ),
    json_out: bool = json_option(),
) -> None:
    """Import a Playbook export into an empty database, or a cass-memory playbook.yaml,
    blocked.log or diary into any playbook, in one transaction (a bad file changes
    nothing). Our own exports come back exactly; cass-memory rules already here merge into
    theirs, drafts come in live, workspace rules get their repository's identity, diaries
    become proposals to review; what has no home here is listed on stderr."""
    set_json(json_out)
    from ..interop import formats
    from ..interop.importing import InvalidImport, load, require_empty

    if fmt not in IMPORT_FORMATS:
        raise CliError(
            "invalid_input",
            f"unknown import format {fmt!r}",
            f"use one of {', '.join(IMPORT_FORMATS)}",
        )
    try:
        cap = formats.parse_size(max_size)
    except ValueError as exc:
        raise CliError("invalid_input", f"--max-size: {exc}") from None
    from ..store import holds_playbook

    path = target()  # a file or a database URL
    existed = holds_playbook(path)
    data = _read_input(source, cap)
    expected = formats.FORMAT_FOR.get(formats.sniff(data))
    if existed and expected in ("json", "yaml") and fmt in ("auto", expected):
        with open_store(create=False) as store:  # refuse before parsing a large export
            require_empty(store)
    if workspace is not None:
        bounded(("--workspace", workspace, "ref"))
    home = _home(source, workspace)
    reading = _ProgressBar("reading", enabled=sys.stderr.isatty())
    try:
        name = None if source == "-" else Path(source).name
        kind, parsed = load(data, fmt, max_bytes=cap, progress=reading, name=name)
    except InvalidImport as exc:
        reading.close()
        raise CliError("invalid_import", f"{source}: {exc}") from None
    reading.close()
    del data
    report = _write(path, existed, source, kind, parsed, rerate, home)
    for line in report.warnings:
        note(f"playbook: not imported: {line}")
    data_out = report.to_dict()
    data_out["path"] = str(path)
    emit(data_out, _summary(report, path))


def _name(source: str) -> str:
    return "stdin" if source == "-" else Path(source).name


def _home(source: str, workspace: str | None) -> Any:
    """The workspace a cass-memory file's rules without a key belong to: `--workspace`,
    else the repository whose `.cass` folder holds the file; (key, how it was found)."""
    from ..interop.cass.workspaces import home_of, workspace_key

    if workspace is not None:
        return workspace_key(workspace), "--workspace"
    found = home_of(source) if source != "-" else None
    return (found.key, "the repository holding the file") if found else (None, None)


def _write(
    path: Target,
    existed: bool,
    source: str,
    kind: str,
    parsed: Any,
    rerate: bool,
    home: tuple[str | None, str | None],
) -> Any:
    """Import what was read, with a progress bar; a new database file is removed again
    if the import fails."""
    from ..interop.importing import InvalidImport, import_snapshot
    from ..interop.snapshot import Snapshot

    bar = _ProgressBar("importing", enabled=sys.stderr.isatty())
    try:
        with open_store(create=True) as store:
            if isinstance(parsed, Snapshot):
                report = import_snapshot(store, parsed, progress=bar, rerate=rerate)
                report.format = kind
            elif parsed.kind == "diary":
                from ..interop.diary_import import import_diary

                report = import_diary(store, parsed, source=_name(source))
            else:
                from ..interop.cass_import import import_cass

                name = _name(source)
                report = import_cass(
                    store, parsed, progress=bar, source=name, rerate=rerate, workspace=home[0]
                )
                if report.workspaces:
                    report.workspaces["found_by"] = home[1]
    except InvalidImport as exc:
        bar.close()
        if not existed:
            _remove_database(path)
        raise CliError("invalid_import", f"{source}: {exc}") from None
    except BaseException:
        bar.close()
        if not existed:
            _remove_database(path)
        raise
    bar.close()
    return report


def _summary(report: Any, path: Target) -> str:
    c = {k: n for k, n in report.counts.items() if k != "already_proposed"}
    parts = [f"{n} {_LABELS.get(k, k)}" for k, n in c.items() if n or k in ("bullets", "feedback")]
    what = ", ".join(parts) if any(c.values()) else "nothing new"
    human = [f"imported {what} ({report.format}) into {path}"]
    if report.format == "cass-diary":
        if report.counts.get("already_proposed"):
            n = report.counts["already_proposed"]
            human.append(f"{n} lesson(s) already proposed from this session: not proposed again")
        if report.counts.get("proposed"):
            human.append(
                "nothing is a rule until a person approves it: 'playbook proposals' lists "
                "them, 'playbook approve ID' or the workbench decides"
            )
    if report.merged:
        human.append(f"{len(report.merged)} rule(s) already here: their new events were added")
    live = report.live
    if live.get("from_draft"):
        human.append(
            f"{live['rules']} imported rule(s) are live; {live['from_draft']} were drafts in "
            "cass-memory, which uses its drafts, so they came in active"
        )
    elif live.get("rules"):
        human.append(f"{live['rules']} imported rule(s) are live")
    human += _scoped(report.workspaces)
    m = report.maturity
    if m.get("rated"):
        if m["kept"] == "as recorded":
            line = (
                f"maturity kept as recorded; the maturity pass (--rerate) would move "
                f"{m['would_move']} of {m['rated']} rules"
            )
            if m["earned_differs"] != m["would_move"]:
                line += (
                    f" (their evidence earns another rung on {m['earned_differs']}, but the "
                    "pass lowers a rung only on a negative score)"
                )
            human.append(line)
        else:
            human.append(f"maturity pass run (--rerate): {len(report.maturity_changes)} moved")
    if report.notes:
        human.append(f"{len(report.notes)} item(s) could not be mapped (listed on stderr)")
    for old, new in report.ids.items():
        human.append(f"id {inert(old, one_line=True)} is now {new}")
    for bid, before, after in report.maturity_changes:
        human.append(f"{bid}: {before} -> {after}")
    return "\n".join(human)


_HOW = {
    "repository": "the file names none: {found_by}",
    "path": "that folder's identity here",
    "folder-name": "not a folder on this machine: its last folder's name",
    "kept": "kept as written",
}


def _scoped(ws: dict[str, Any]) -> list[str]:
    """What was scoped where: rules per scope, then each workspace mapping."""
    if not ws.get("scopes"):
        return []
    scopes = ", ".join(f"{n} {scope}" for scope, n in ws["scopes"].items())
    lines = [f"scopes: {scopes}"]
    for m in ws["mapped"]:
        n, how = m["rules"], m["how"]
        if how == "unkeyed":
            lines.append(
                f"  {n} workspace rule(s) name no workspace and no repository holds the file: "
                "they show in every workspace (--workspace scopes them)"
            )
            continue
        why = _HOW[how].format(found_by=ws.get("found_by") or "given")
        source = "" if m["from"] is None else f" keyed {inert(m['from'], one_line=True)}"
        lines.append(f"  {n} workspace rule(s){source} -> {inert(m['to'], one_line=True)} ({why})")
    return lines
