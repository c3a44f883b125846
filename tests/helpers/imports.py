"""The import graph of `src/playbook`, read with `ast` (nothing is imported or run).

Every import statement counts, wherever it stands: at module level (`top`), inside a
function or method (`local`: it runs later, it is still a dependency), or under
`if TYPE_CHECKING:` (`typing`: it never runs, a reader and a type checker still follow it).
An import of `a.b.c` is an edge to the deepest module of the package the name names
(`from x import y` is an edge to `x.y` when `x.y` is a module, else to `x`); the package
`__init__`s Python runs on the way are not edges (a package that re-exports its own
submodules would otherwise be a cycle with each of them).
"""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "playbook"


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    src = package.parent
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


@dataclass(frozen=True)
class Import:
    """One name an import statement brings in: `target` absolute (relative ones resolved),
    and for `from x import y` both `x` and `x.y` (one of them is the module)."""

    target: str
    line: int
    kind: str  # top | local | typing


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.source} (line {self.line}, {self.kind}) imports {self.target}"


class _Collector(ast.NodeVisitor):
    def __init__(self, package: str) -> None:
        self.package = package
        self.func = 0
        self.typing = 0
        self.found: list[Import] = []

    def kind(self) -> str:
        return "typing" if self.typing else "local" if self.func else "top"

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.func += 1
        self.generic_visit(node)
        self.func -= 1

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            self.typing += 1
            for child in node.body:
                self.visit(child)
            self.typing -= 1
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found += [Import(a.name, node.lineno, self.kind()) for a in node.names]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")
            base = base[: len(base) - node.level + 1]
            target = ".".join([*base, node.module] if node.module else base)
        else:
            target = node.module or ""
        kind = self.kind()
        self.found.append(Import(target, node.lineno, kind))
        self.found += [Import(f"{target}.{a.name}", node.lineno, kind) for a in node.names]


def syntax_tree(path: Path) -> ast.Module:
    """The module's syntax tree, read only (a dozen tests walk every module of the package:
    parsing them all is most of each one's time, so a process parses each text once)."""
    return _parse(path.read_text(encoding="utf-8"))


@functools.cache
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def imports(name: str, path: Path) -> list[Import]:
    """Every name the module's import statements bring in, relative imports resolved."""
    collector = _Collector(name if path.name == "__init__.py" else name.rpartition(".")[0])
    collector.visit(syntax_tree(path))
    return collector.found


def edges(mods: dict[str, Path] | None = None) -> list[Edge]:
    """Every import of one module of the package by another, as (source, target) edges."""
    mods = modules() if mods is None else mods
    known = set(mods)
    out = []
    for name, path in mods.items():
        found = imports(name, path)
        for imp in found:
            target = imp.target
            if target not in known:
                continue
            # `from x import y`: the statement names `x` and `x.y`; when `x.y` is a module
            # the edge is to it alone, else to `x`
            subs = [i for i in found if i.line == imp.line and i.target.startswith(target + ".")]
            if subs and all(i.target in known for i in subs):
                continue
            if target != name:
                out.append(Edge(name, target, imp.line, imp.kind))
    return sorted(set(out), key=lambda e: (e.source, e.target, e.line, e.kind))


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components with more than one module: the cycles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def cycles(all_edges: list[Edge]) -> list[set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for e in all_edges:
        graph[e.source].add(e.target)
    return strongly_connected(graph)
