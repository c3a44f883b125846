"""The import rules that keep the layers apart (README, "How the code is laid out").

Surfaces (CLI, MCP, workbench) -> API -> store (the only SQL) -> pure scoring and models.
Each rule parses the imports of every module with `ast` (so an import inside a function
counts too) and names the offending module and line.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "playbook"


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(SRC).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in the module, relative ones resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            # `from . import x` imports the submodule x
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
    return found


def violations(allowed: Callable[[str], bool], forbidden: Callable[[str], bool]) -> list[str]:
    """'module (line n) imports target' for each import `forbidden` in a module not
    `allowed` to make it."""
    return [
        f"{name} (line {line}) imports {target}"
        for name, path in modules().items()
        if not allowed(name)
        for target, line in imports(name, path)
        if forbidden(target)
    ]


def top(module: str) -> str:
    return module.split(".")[0]


def test_only_the_store_package_speaks_to_the_database_driver() -> None:
    bad = violations(
        allowed=lambda name: name.startswith("playbook.store"),
        forbidden=lambda target: top(target) in ("sqlite3", "sqlite_utils", "_sqlite3"),
    )
    assert bad == [], "SQL and connections live in playbook.store only:\n" + "\n".join(bad)


def test_the_core_never_imports_textual() -> None:
    bad = violations(
        allowed=lambda name: name.startswith("playbook.tui"),
        forbidden=lambda target: top(target) == "textual",
    )
    assert bad == [], "only playbook.tui may import Textual:\n" + "\n".join(bad)


def test_the_core_loads_without_textual_in_a_fresh_interpreter() -> None:
    """What is really imported, not just what is written: nothing outside the workbench
    pulls Textual in indirectly."""
    code = (
        "import sys, importlib, pkgutil, playbook\n"
        "names = [m.name for m in pkgutil.walk_packages(playbook.__path__, 'playbook.')]\n"
        "for n in names:\n"
        "    if not n.startswith(('playbook.tui', 'playbook.cli.workbench')):\n"
        "        try:\n"
        "            importlib.import_module(n)\n"
        "        except ImportError as e:\n"  # optional extras (mcp) may be missing
        "            if 'mcp' not in str(e):\n"
        "                raise\n"
        "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'textual')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
        timeout=120,
    )
    assert out.stdout.strip() == ""


def test_no_module_outside_the_store_touches_its_executor() -> None:
    """`store.sql` is the store package's own handle on the database."""
    bad = []
    for name, path in modules().items():
        if name.startswith("playbook.store"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("sql", "_conn", "conn"):
                bad.append(f"{name} (line {node.lineno}) uses .{node.attr}")
    assert bad == [], "\n".join(bad)


# module prefix -> the surface it belongs to
SURFACES = {
    "playbook.cli": "cli",
    "playbook.mcp.server": "mcp",
    "playbook.mcp.stdio": "mcp",  # the MCP server's stdio transport
    "playbook.mcp.tools": "mcp",  # what its tools do, without the SDK
    "playbook.mcp.schemas": "mcp",  # what its tools answer
    "playbook.mcp.views": "mcp",  # the shapes of those answers
    "playbook.tui": "workbench",
    "playbook.hooks": "hooks",
}
# The CLI commands whose job is to start another surface.
LAUNCHERS = {
    ("playbook.cli.serve", "mcp"),  # `playbook mcp`
    ("playbook.cli.workbench", "workbench"),  # `playbook tui`, `playbook demo`
    ("playbook.cli.hooks", "hooks"),  # `playbook hook ...`, `playbook hooks install`
}


def surface_of(module: str) -> str | None:
    return next(
        (
            surface
            for prefix, surface in SURFACES.items()
            if module == prefix or module.startswith(prefix + ".")
        ),
        None,
    )


def test_a_surface_imports_no_other_surface() -> None:
    """Surfaces call the API (playbook.review, curate, recall...), never each other: the
    MCP server once borrowed the CLI's detail view."""
    bad = [
        f"{name} (line {line}) imports {target}"
        for name, path in modules().items()
        if (own := surface_of(name)) is not None
        for target, line in imports(name, path)
        if (other := surface_of(target)) is not None
        and other != own
        and (name, other) not in LAUNCHERS
    ]
    assert bad == [], "a surface imports another surface:\n" + "\n".join(bad)


def test_the_surface_rule_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    source = tmp_path / "server.py"
    source.write_text("def f():\n    from ..cli.views import render_detail\n")
    found = [t for t, _ in imports("playbook.mcp.server", source)]
    assert "playbook.cli.views" in found and surface_of("playbook.cli.views") == "cli"
    assert surface_of("playbook.mcp.stdio") == surface_of("playbook.mcp.server") == "mcp"


def test_the_harm_reasons_are_listed_once() -> None:
    """One canonical list (terms.HARM_REASONS, re-exported by model); the surfaces' help
    texts derive from it. A second spelled-out copy is a copy that can drift."""
    from playbook.core.model import HARM_REASONS, HarmReason

    assert tuple(HarmReason) == HARM_REASONS
    spelled = '"contradicted_requirements"'
    owners = {
        name for name, path in modules().items() if spelled in path.read_text(encoding="utf-8")
    }
    # terms: the list itself; copies left in other helpers' modules (issue 13)
    others = {
        "playbook.reflection.reflectors",
        "playbook.reflection.reflectors.heuristic",
        "playbook.reflection.reflectors.prompt",
        "playbook.interop.cass",
        "playbook.demo.content",
        "playbook.tui.screens.modals",
    }
    assert owners - others == {"playbook.core.terms"}


def test_nothing_below_the_surfaces_imports_a_surface() -> None:
    """The flow is one way: the API, the store and the pure modules never call up into the
    CLI, the MCP server, the hooks or the workbench."""
    bad = violations(
        allowed=lambda name: surface_of(name) is not None or name == "playbook.launcher",
        forbidden=lambda target: surface_of(target) is not None,
    )
    assert bad == [], "a module below the surfaces imports one:\n" + "\n".join(bad)


# What the store may import from the rest of the package: the pure layer beneath it.
BELOW_THE_STORE = {
    "playbook.core",  # the package itself (`from ..core import scoring`)
    "playbook.core.errors",
    "playbook.core.terms",
    "playbook.core.model",
    "playbook.core.scoring",
    "playbook.core.policy",
    "playbook.core.text",
    "playbook.core.authority",
    "playbook.core.lazy",
    "playbook.core.files",  # writing and reading the files a user names (a new database file)
    "playbook.core.inert",
}


def test_the_store_imports_only_the_pure_layer_beneath_it() -> None:
    bad = violations(
        allowed=lambda name: not name.startswith("playbook.store"),
        forbidden=lambda target: (
            target.startswith("playbook.")
            and not any(target == m or target.startswith(m + ".") for m in BELOW_THE_STORE)
            and not target.startswith("playbook.store")
        ),
    )
    assert bad == [], "the store imports from above it:\n" + "\n".join(bad)


# ------------------------------------------------------------------------------ the tests
TESTS = SRC.parent / "tests"


def test_a_test_module_imports_only_helpers_never_conftest_or_another_test() -> None:
    """Shared helpers live in `tests/helpers/`; conftest.py holds fixtures and hooks, which
    pytest hands to the tests; a test module imported by another is a helper in disguise."""
    bad = []
    for path in sorted(TESTS.rglob("*.py")):
        if ".venv" in path.parts:
            continue
        name = ".".join(path.relative_to(TESTS.parent).with_suffix("").parts)
        for target, line in imports(name, path):
            last = target.split(".")[-1]
            if target.startswith("tests.") and (
                last == "conftest" or (last.startswith("test_") and target != name)
            ):
                bad.append(f"{path.relative_to(TESTS.parent)} (line {line}) imports {target}")
    assert bad == [], "\n".join(bad)


def test_the_test_import_rule_sees_a_test_importing_another(tmp_path: Path) -> None:
    source = tmp_path / "test_x.py"
    source.write_text("from .conftest import Clock\nfrom .test_hostile import HOSTILE\n")
    found = [t for t, _ in imports("tests.test_x", source)]
    assert "tests.conftest" in found and "tests.test_hostile" in found
