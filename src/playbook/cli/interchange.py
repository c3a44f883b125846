"""export and import."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..core.inert import inert
from .common import CliError, emit, json_option, note, open_store, set_json, target
from .hot import bounded
from .registry import app

if TYPE_CHECKING:
    from ..store import Target

EXPORT_FORMATS = ("json", "yaml", "agents-md")
IMPORT_FORMATS = ("auto", "json", "yaml", "cass")


@app.command()
def export(
    fmt: str = typer.Option(
        "json", "--format", "-f", help="json or yaml (the whole database), or agents-md."
    ),
    output: str | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Write to this file instead of stdout (agents-md: merged into it, between "
        "the playbook's markers; the rest of the file is kept).",
    ),
    title: str = typer.Option("Playbook", help="agents-md: the block's heading."),
    max_bytes: int | None = typer.Option(
        None, "--max-bytes", min=1, help="agents-md: the block's size at most (default 8192)."
    ),
    top: int | None = typer.Option(None, "--top", min=0, help="agents-md: at most N rules."),
    workspace: str | None = typer.Option(
        None,
        "--workspace",
        metavar="PATH|KEY",
        help="agents-md: whose rules (default: the repository the output file is in).",
    ),
    json_out: bool = json_option(),
) -> None:
    """Export the playbook: json/yaml round-trip through 'playbook import'; agents-md is a
    block for AGENTS.md / CLAUDE.md (the agent's protocol and this workspace's live rules,
    best first, within a byte budget), merged into the file between its markers."""
    set_json(json_out)
    if fmt not in EXPORT_FORMATS:
        raise CliError(
            "invalid_input",
            f"unknown export format {fmt!r}",
            f"use one of {', '.join(EXPORT_FORMATS)}",
        )
    if fmt == "agents-md":
        from .agents_export import export_agents_md  # lazy: every typer command

        export_agents_md(
            output,
            title=title,
            workspace=workspace,
            max_bytes=max_bytes,
            top=top,
            json_out=json_out,
        )
        return
    if max_bytes is not None or top is not None or workspace is not None:
        raise CliError("usage", "--max-bytes, --top and --workspace go with --format agents-md")
    from ..interop.snapshot import counts as count_sections  # lazy: every typer command
    from ..interop.snapshot import export_snapshot, to_json, to_yaml  # lazy: every typer command

    with open_store(read_only=True, replica=True) as store:
        doc = export_snapshot(store)
    counts = count_sections(doc)
    text = to_json(doc) if fmt == "json" else to_yaml(doc)
    content: Any = doc if fmt == "json" else text
    if output is not None and output != "-":
        from ..core.files import write_file  # lazy: every typer command

        path = Path(output)
        write_file(path, text)  # a device or a pipe is written through, never replaced
        data = {"format": fmt, "path": str(path), "bytes": len(text.encode()), "counts": counts}
        emit(data, f"exported {counts['bullets']} bullets, {counts['feedback']} events to {path}")
        return
    if sys.stdout.isatty() and not json_out:
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
    """The file's bytes (a file, `-`, a device or a pipe), refused as soon as more than the
    cap has arrived (a file whose size says so, before it is read)."""
    from ..core.files import TooLarge, read_capped  # lazy: every typer command
    from ..interop.formats import too_large  # lazy: every typer command

    try:
        return read_capped(source, max_bytes, "the import")
    except TooLarge as exc:
        where = "stdin" if source == "-" else inert(source, one_line=True)
        raise CliError("invalid_import", f"{where}: {too_large(exc.size, exc.limit)}") from None
    except FileNotFoundError:
        raise CliError("file_not_found", f"no such file: {inert(source, one_line=True)}") from None
    except IsADirectoryError:
        raise CliError("file_error", f"{inert(source, one_line=True)} is a directory") from None
    except PermissionError:
        raise CliError("file_error", f"permission denied: {inert(source, one_line=True)}") from None


def _remove_database(where: Target) -> None:
    """Remove a playbook file the failed import created (a database on a server keeps its
    empty playbook: the import was one transaction, so it holds nothing of it)."""
    from ..store import remove_playbook_file  # lazy: every typer command

    remove_playbook_file(where)


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
    keep_global: bool = typer.Option(
        False,
        "--keep-global",
        help="cass-memory: keep a repository's global rules global (default: they are that "
        "repository's, as cass-memory reads its .cass/playbook.yaml only there).",
    ),
    json_out: bool = json_option(),
) -> None:
    """Import a Playbook export into an empty database, or a cass-memory playbook.yaml,
    blocked.log or diary into any playbook, in one transaction (a bad file changes
    nothing). Our own exports come back exactly; cass-memory rules already here merge into
    theirs, drafts come in live, workspace rules get their repository's identity, diaries
    become proposals to review; what has no home here is listed on stderr."""
    set_json(json_out)
    from ..interop import formats  # lazy: every typer command
    from ..interop.import_common import InvalidImport  # lazy: every typer command
    from ..interop.importing import load, require_empty  # lazy: every typer command

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
    from ..store import holds_playbook  # lazy: every typer command

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
    report = _write(path, existed, source, kind, parsed, rerate, home, keep_global)
    for line in report.warnings:
        note(f"playbook: not imported: {line}")
    data_out = report.to_dict()
    data_out["path"] = str(path)
    from .import_summary import summary  # lazy: every typer command

    emit(data_out, summary(report, path))


def _name(source: str) -> str:
    return "stdin" if source == "-" else Path(source).name


def _home(source: str, workspace: str | None) -> Any:
    """The workspace a cass-memory file's rules without a key belong to: `--workspace`,
    else the repository whose `.cass` folder holds the file; (key, how it was found)."""
    from ..interop.cass.workspaces import home_of, workspace_key  # lazy: every typer command

    if workspace is not None:
        return workspace_key(workspace), "given with --workspace"
    found = home_of(source) if source != "-" else None
    if found is None:
        return None, None
    return found.key, "the repository whose .cass folder holds the file"


def _write(
    path: Target,
    existed: bool,
    source: str,
    kind: str,
    parsed: Any,
    rerate: bool,
    home: tuple[str | None, str | None],
    keep_global: bool,
) -> Any:
    """Import what was read, with a progress bar; a new database file is removed again
    if the import fails."""
    from ..interop.import_common import InvalidImport  # lazy: every typer command
    from ..interop.importing import import_snapshot  # lazy: every typer command
    from ..interop.snapshot_rows import Snapshot  # lazy: every typer command

    bar = _ProgressBar("importing", enabled=sys.stderr.isatty())
    try:
        with open_store(create=True) as store:
            if isinstance(parsed, Snapshot):
                report = import_snapshot(store, parsed, progress=bar, rerate=rerate)
                report.format = kind
            elif parsed.kind == "diary":
                from ..interop.diary_import import import_diary  # lazy: every typer command

                report = import_diary(store, parsed, source=_name(source), workspace=home[0])
                report.workspaces["found_by"] = home[1]
            else:
                from ..interop.cass_import import import_cass  # lazy: every typer command

                name = _name(source)
                report = import_cass(
                    store,
                    parsed,
                    progress=bar,
                    source=name,
                    rerate=rerate,
                    workspace=home[0],
                    keep_global=keep_global,
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
