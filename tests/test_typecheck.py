"""The type checker's gate (issue 28): `mypy` runs over `src/playbook` in `.ci/run` with the
configuration of `pyproject.toml`. Modules not yet clean are listed, one a line, in the
override with `ignore_errors = true`; the list only shrinks, and it names only modules that
exist (a module moved or deleted must leave it, or the list would hide nothing and mislead)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from .helpers.imports import modules

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def mypy_config() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["mypy"]


def not_yet_clean() -> list[str]:
    lists = [o for o in mypy_config().get("overrides", []) if o.get("ignore_errors")]
    assert len(lists) == 1, "one override list of modules with ignore_errors, not several"
    names = lists[0]["module"]
    return [names] if isinstance(names, str) else names


def test_the_list_of_modules_not_yet_clean_names_only_modules_that_exist():
    existing = set(modules())
    named = not_yet_clean()
    assert [m for m in named if "*" in m] == [], "one module a line, no pattern"
    assert [m for m in named if m not in existing] == []
    assert len(named) == len(set(named)), "a module listed twice"


def test_mypy_checks_the_package_and_the_strict_layers():
    config = mypy_config()
    assert config["files"] == ["src/playbook"]
    strict = [o for o in config["overrides"] if o.get("strict")]
    assert {m for o in strict for m in o["module"]} == {"playbook.core.*", "playbook.store.*"}
