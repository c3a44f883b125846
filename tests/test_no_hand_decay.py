"""No module of `src/` but `core/scoring.py` writes the decay by hand (issue 28: one scoring
definition that every reader calls). The PL/pgSQL copy of `store/postgres/scoring_sql.py`
is SQL text, not Python, and is the one sanctioned second form (`core/scoring.py` names it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .helpers.imports import syntax_tree

SRC = Path(__file__).resolve().parents[1] / "src" / "playbook"

# A decay by hand: `0.5 ** x`, `2 ** -x` (or `2.0 ** (-x)`), `exp2(...)`, `pow(0.5, x)`
_HALF = (0.5,)
_TWO = (2, 2.0)


def _variable(node: ast.AST) -> bool:
    """Whether an expression names anything (a constant power such as 2.0**-900 does not)."""
    return any(isinstance(n, ast.Name | ast.Attribute | ast.Subscript) for n in ast.walk(node))


def _decay_by_hand(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            base = node.left
            if (
                isinstance(base, ast.Constant)
                and (base.value in _HALF or base.value in _TWO)
                and _variable(node.right)
            ):
                lines.append(node.lineno)
        elif isinstance(node, ast.Call):
            f = node.func
            name = (
                f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            )
            half = any(isinstance(a, ast.Constant) and a.value in _HALF for a in node.args)
            if name == "exp2" or (half and name in ("float_power", "power", "pow")):
                lines.append(node.lineno)
    return sorted(lines)


def test_no_module_but_scoring_writes_the_decay_by_hand() -> None:
    allowed = {SRC / "core" / "scoring.py"}
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path in allowed:
            continue
        for line in _decay_by_hand(syntax_tree(path)):
            found.append(f"{path.relative_to(SRC.parent)}:{line}")
    assert found == [], "decay written out of core/scoring.py:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "code",
    [
        "f = 0.5 ** ((now - ref) / hl)",
        "f = 2 ** -(age / hl)",
        "f = 2.0 ** (-(age / hl))",
        "f = 2 ** halvings",
        "f = np.exp2((at - t0) / hl)",
        "f = math.pow(0.5, x)",
        "f = np.float_power(0.5, x)",
    ],
)
def test_the_rule_sees_a_decay_by_hand(code: str) -> None:
    assert _decay_by_hand(ast.parse(code)) == [1]


def test_the_rule_lets_other_powers_be() -> None:
    assert _decay_by_hand(ast.parse("a = 2**31\nb = x ** 0.5\nc = 2.0**-900\nd = 10 ** n")) == []
