"""Import rules of the layers (README, "How the code is laid out").

Surfaces (the CLI, the MCP server, the workbench) call the API; a surface never imports
another surface, at module level or inside a function. The only exceptions are the CLI
commands whose job is to start another surface (`playbook mcp`, `playbook tui`/`demo`).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "playbook"
# module prefix -> the surface it belongs to
SURFACES = {
    "playbook.cli": "cli",
    "playbook.mcp_server": "mcp",
    "playbook.mcp_stdio": "mcp",  # the MCP server's stdio transport
    "playbook.tui": "workbench",
}
LAUNCHERS = {
    ("playbook.cli.serve", "mcp"),  # `playbook mcp` starts the server
    ("playbook.cli.workbench", "workbench"),  # `playbook tui` / `demo` open the workbench
}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, name: str) -> set[str]:
    """Every module `path` (module `name`) imports, relative imports resolved, wherever
    the import statement is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def surface_of(module: str) -> str | None:
    return next(
        (
            name
            for prefix, name in SURFACES.items()
            if module == prefix or module.startswith(prefix + ".")
        ),
        None,
    )


def test_a_surface_imports_no_other_surface() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        own = surface_of(name)
        if own is None:
            continue
        for target in imports(path, name):
            other = surface_of(target)
            if other is not None and other != own and (name, other) not in LAUNCHERS:
                found.append(f"{name} imports {target}")
    assert found == []


def test_the_rule_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    source = tmp_path / "mcp_server.py"
    source.write_text("def f():\n    from .cli.views import render_detail\n")
    found = imports(source, "playbook.mcp_server")
    assert "playbook.cli.views" in found
    assert surface_of("playbook.cli.views") == "cli"
    assert surface_of("playbook.mcp_stdio") == surface_of("playbook.mcp_server") == "mcp"


def test_the_harm_reasons_are_listed_once() -> None:
    """One canonical list (model.HARM_REASONS); the surfaces' help texts derive from it.
    A second spelled-out copy in a module this test covers is a copy that can drift."""
    from playbook.model import HARM_REASONS, HarmReason

    assert tuple(HarmReason) == HARM_REASONS
    spelled = '"contradicted_requirements"'
    owners = [
        module_name(p)
        for p in sorted(PACKAGE.rglob("*.py"))
        if spelled in p.read_text(encoding="utf-8")
    ]
    # model: the list itself; the rest are other helpers' (removal tracked in issue 13)
    others = {
        "playbook.reflectors",
        "playbook.interop.cass",
        "playbook.demo_content",
        "playbook.tui.screens.modals",
    }
    assert set(owners) - others == {"playbook.model"}
