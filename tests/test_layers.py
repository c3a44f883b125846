"""The layers are the folders (README, "How the code is laid out").

Surfaces (CLI, MCP, hooks, workbench) -> API -> store (the only SQL) -> the pure core.
The folders of `src/playbook` are those layers, lowest first in `LAYERS`; every rule
below reads the imports of every module with `ast` (`tests/helpers/imports.py`: an import
inside a function or under `TYPE_CHECKING` counts as much as one at the top) and names the
offending module and line.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path

from .helpers.imports import PACKAGE, SRC, Edge, cycles, edges, modules, syntax_tree


def imports(name: str, path: Path) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in the module, relative ones resolved."""
    from .helpers.imports import imports as found

    return [(i.target, i.line) for i in found(name, path)]


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


# ------------------------------------------------------------------------- the folders
# Lowest first. A module may import its own folder and any folder on a lower line, never
# one on its own line (folders side by side do not know each other) or above.
LAYERS: list[tuple[str, ...]] = [
    ("core",),  # the pure model: terms, deltas, scoring, policy, limits, text, errors
    ("store",),  # the only SQL: schema, repositories, read models, both backends
    ("project",),  # how a playbook meets a repository: workspace, protocol, config
    ("retrieval", "curation", "policy_eval"),  # recall · curate and outcomes · replay
    ("review",),  # what a reviewer reads and decides: the queue, proposals, history, topics
    ("interop",),  # import and export (cass diaries arrive as proposals in the queue)
    ("reflection",),  # reflect_session, the reflectors, the diaries
    ("demo",),  # the demo playbook
    ("tui", "mcp", "hooks"),  # the surfaces that run on their own
    ("cli",),  # the `playbook` command, which starts the others
]
# What sits at the top of the package: the public API, `python -m playbook`, the script.
TOP = {"playbook", "playbook.__main__", "playbook.launcher"}
# The CLI modules whose job is to start another surface (the only cli -> surface imports).
LAUNCHERS = {
    ("playbook.cli.serve", "mcp"),  # `playbook mcp`
    ("playbook.cli.workbench", "tui"),  # `playbook tui`, `playbook demo`
    ("playbook.cli.hooks", "hooks"),  # `playbook hook ...`, `playbook hooks install`
}


def folder(module: str) -> str | None:
    """ "playbook.review.queue" -> "review"; the top modules -> None."""
    if module in TOP:
        return None
    return module.split(".")[1]


def rank(name: str) -> tuple[int, int]:
    """(layer, position on its line) of a folder."""
    for layer, line in enumerate(LAYERS):
        if name in line:
            return layer, line.index(name)
    raise KeyError(name)


def going_up(all_edges: list[Edge]) -> list[str]:
    """Each edge that imports a top module, a folder on the importer's own layer, or above."""
    bad = []
    for e in all_edges:
        src, dst = folder(e.source), folder(e.target)
        if src is None or src == dst:
            continue
        if dst is None:
            bad.append(f"{e} (the top of the package: import the module itself)")
        elif rank(dst)[0] >= rank(src)[0] and (e.source, dst) not in LAUNCHERS:
            bad.append(f"{e} ({dst} is not below {src})")
    return bad


def test_every_module_is_in_the_folder_of_a_layer() -> None:
    loose = [n for n in modules() if n.count(".") == 1 and n not in TOP and "." in n]
    loose = [n for n in loose if not (PACKAGE / n.split(".")[1]).is_dir()]
    assert loose == [], "modules loose at the top of playbook/ (put each in its folder):\n" + (
        "\n".join(loose)
    )
    known = {f for line in LAYERS for f in line}
    unknown = sorted({folder(n) for n in modules() if folder(n) is not None} - known)
    assert unknown == [], (
        f"folders in no layer: {unknown}: add it to LAYERS (one line) "
        "or put the module in the folder of its job"
    )
    # (a folder left behind with only __pycache__ in it, after a move, is not a folder)
    on_disk = {p.name for p in PACKAGE.iterdir() if p.is_dir() and any(p.rglob("*.py"))}
    assert on_disk == known, f"LAYERS names folders that are not there: {known - on_disk}"


def test_imports_go_down_a_layer_never_up_or_sideways() -> None:
    bad = going_up(edges())
    assert bad == [], "imports against the layers:\n" + "\n".join(bad)


def test_the_layer_rule_sees_an_import_up_inside_a_function(tmp_path: Path) -> None:
    source = tmp_path / "scoring.py"
    source.write_text("def f():\n    from ..review.queue import build_queue\n")
    mods = {"playbook.core.scoring": source, "playbook.review.queue": source}
    found = going_up(edges(mods))
    assert len(found) == 1 and "review is not below core" in found[0]
    source.write_text("from ..curation import curate\n")
    mods = {"playbook.retrieval.first_cut": source, "playbook.curation": source}
    assert "curation is not below retrieval" in going_up(edges(mods))[0]


def test_no_import_cycle_of_any_kind() -> None:
    """Tarjan over every import, at the top, in a function or for the type checker alone: a
    cycle hides a call route (and, once, a circular import error at run time)."""
    found = [sorted(c) for c in cycles(edges())]
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_cycle_rule_sees_a_cycle_through_a_function(tmp_path: Path) -> None:
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("from . import b\n")
    b.write_text("def f():\n    from . import a\n")
    assert cycles(edges({"playbook.x.a": a, "playbook.x.b": b})) == [
        {"playbook.x.a", "playbook.x.b"}
    ]


def test_no_public_name_is_a_sub_package() -> None:
    """`from playbook import recall` must give the function: once a sub-package of that
    name is imported, Python sets `playbook.recall` to the package instead."""
    import playbook

    clash = sorted(set(playbook.__all__) & {p.name for p in PACKAGE.iterdir() if p.is_dir()})
    assert clash == []


def test_only_the_cli_imports_typer_and_only_mcp_the_sdk() -> None:
    bad = violations(
        allowed=lambda name: name.startswith("playbook.cli"),
        forbidden=lambda target: top(target) in ("typer", "click"),
    )
    bad += violations(
        allowed=lambda name: name.startswith("playbook.mcp"),
        forbidden=lambda target: top(target) == "mcp",
    )
    assert bad == [], "\n".join(bad)


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
        for node in ast.walk(syntax_tree(path)):
            if isinstance(node, ast.Attribute) and node.attr in ("sql", "_conn", "conn"):
                bad.append(f"{name} (line {node.lineno}) uses .{node.attr}")
    assert bad == [], "\n".join(bad)


def free_functions_touching_sql(name: str, path: Path) -> list[str]:
    """'module.function (line n)' for each function at the top of a module that uses an
    attribute `.sql` anywhere in its body (nested functions included)."""
    return [
        f"{name}.{node.name} (line {node.lineno})"
        for node in syntax_tree(path).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(isinstance(n, ast.Attribute) and n.attr == "sql" for n in ast.walk(node))
    ]


# Raw SQL for the tests' own setups (writing what the API refuses, reading what it hides).
SQL_FUNCTIONS_ALLOWED = {"playbook.store.testing"}


def test_no_free_function_in_the_store_reaches_into_its_executor() -> None:
    """The store composes: SQL runs in its parts (repositories and read models, each built
    with the executor), never in a module-level function handed the store."""
    bad = [
        hit
        for name, path in modules().items()
        if name.startswith("playbook.store.") and name not in SQL_FUNCTIONS_ALLOWED
        for hit in free_functions_touching_sql(name, path)
    ]
    assert bad == [], "\n".join(bad)


def test_the_free_function_rule_sees_one(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "class Part:\n    def ok(self):\n        return self.sql.all('SELECT 1')\n\n"
        "def fine(store):\n    return store.part.ok()\n\n"
        "def bad(store):\n    def inner():\n        return store.sql.one('SELECT 1')\n"
        "    return inner()\n"
    )
    assert free_functions_touching_sql("playbook.store.m", source) == [
        "playbook.store.m.bad (line 8)"
    ]


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
        "playbook.demo.vocabulary",  # the demo content's closed lists
        "playbook.demo.history",  # its weights of the reasons (moved out of content)
        "playbook.tui.screens.modals",
    }
    assert owners - others == {"playbook.core.terms"}


def _delta_type_lists(tree: ast.AST, names: frozenset[str]) -> list[int]:
    """Lines of the literal tuples, lists, sets and dicts that spell out three or more delta
    types (a closed list of them)."""
    found = []
    for node in ast.walk(tree):
        items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if not isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) or items is None:
            continue
        spelled = {i.value for i in items if isinstance(i, ast.Constant)} & names
        if len(spelled) >= 3:
            found.append(node.lineno)
    return found


def test_the_delta_types_are_listed_once() -> None:
    """One vocabulary (terms.DeltaTypeName): the models are keyed by it, and no other module
    spells out a list of delta types (the reflector's parser once dropped a type its own
    copy did not know). A new type touches terms, deltas, curation/batch and, for its
    colour, the workbench (README, "A new delta type")."""
    from playbook.core.deltas import DELTA_CLASSES, PlaybookDelta
    from playbook.core.terms import AGENT_APPLIES, DELTA_TYPES, EVIDENCE, STRUCTURAL, DeltaType

    assert tuple(DeltaType) == DELTA_TYPES
    assert list(DELTA_CLASSES) == list(DELTA_TYPES)
    union = typing.get_args(typing.get_args(PlaybookDelta)[0])
    assert set(union) == set(DELTA_CLASSES.values())
    for name, cls in DELTA_CLASSES.items():
        assert typing.get_args(cls.model_fields["type"].annotation) == (name,)
        assert cls.shape.startswith(f'{{"type": "{name}"')
    assert set(AGENT_APPLIES) | set(STRUCTURAL) == set(DELTA_TYPES)
    assert not set(AGENT_APPLIES) & set(STRUCTURAL) and set(EVIDENCE) <= set(AGENT_APPLIES)
    names = frozenset(DELTA_TYPES)
    owners = {
        name for name, path in modules().items() if _delta_type_lists(syntax_tree(path), names)
    }
    # (core.deltas keys the models by the vocabulary's members, not by spelled names)
    assert owners == {"playbook.core.terms"}


def test_the_delta_type_rule_sees_a_copy() -> None:
    names = frozenset({"add", "merge", "replace"})
    found = _delta_type_lists(ast.parse('X = ("add", "merge", "replace")\nY = {"add": 1}'), names)
    assert found == [1]


_MESSAGE_ATTRS = {"reason", "message", "msg"}
_EXCEPTION_NAMES = {"exc", "e", "err", "error"}


def _is_message(node: ast.AST) -> bool:
    """`reason`, `x.reason`, `x.message`, `str(exc)`, or `(x.reason or "")`: a text for a
    person."""
    if isinstance(node, ast.Attribute):
        return node.attr in _MESSAGE_ATTRS
    if isinstance(node, ast.Name):  # (not `message`/`msg`: a JSON-RPC message is a dict)
        return node.id == "reason"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str":
        arg = node.args[0] if len(node.args) == 1 else None
        return isinstance(arg, ast.Name) and arg.id in _EXCEPTION_NAMES
    if isinstance(node, ast.BoolOp):
        return any(_is_message(v) for v in node.values)
    return False


def _branches_on_text(tree: ast.AST) -> list[int]:
    """Lines that test a message's text: `.startswith` / `.endswith` on one, or `in` it."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("startswith", "endswith")
            and _is_message(node.func.value)
        ) or (
            isinstance(node, ast.Compare)
            and any(
                isinstance(op, ast.In | ast.NotIn) and _is_message(right)
                for op, right in zip(node.ops, node.comparators, strict=True)
            )
        ):
            found.append(node.lineno)
    return found


def test_no_code_branches_on_a_message() -> None:
    """An outcome or an error is told apart by its code (`DeltaOutcome.code`, `exc.code`),
    never by the words of its message: they are for a person and may change (errors.py)."""
    bad = {
        name: lines
        for name, path in modules().items()
        if (lines := _branches_on_text(syntax_tree(path)))
    }
    assert bad == {}


def test_the_message_rule_sees_a_branch() -> None:
    code = (
        'a = (o.reason or "").startswith("no bullet")\n'
        'b = "not carried" in o.reason\n'
        'c = "gone" in str(exc)\n'
        "d = o.reason in KNOWN\n"
    )
    assert _branches_on_text(ast.parse(code)) == [1, 2, 3]


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
