"""The type checker's gate (issue 28): `mypy` runs over `src/playbook` in `.ci/run` with the
configuration of `pyproject.toml`. Modules not yet clean are listed, one a line, in the
override with `ignore_errors = true`; the list only shrinks, and it names only modules that
exist (a module moved or deleted must leave it, or the list would hide nothing and mislead)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from .helpers.checked import checked
from .helpers.imports import PACKAGE, modules

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def mypy_config() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["mypy"]


def listed(key: str) -> list[str]:
    """The modules of the one override that sets `key` (ignore_errors, disable_error_code)."""
    lists = [o for o in mypy_config().get("overrides", []) if o.get(key)]
    assert len(lists) == 1, f"one override list of modules with {key}, not several"
    names = lists[0]["module"]
    return [names] if isinstance(names, str) else names


def test_the_lists_of_modules_not_yet_clean_name_only_modules_that_exist():
    existing = set(modules())
    named = listed("ignore_errors")
    assert [m for m in named if "*" in m] == [], "one module a line, no pattern"
    assert [m for m in named if m not in existing] == []
    assert len(named) == len(set(named)), "a module listed twice"


def test_nothing_waits_but_whole_modules():
    """The cli registry removed the one list that silenced error codes (`app` through the
    cli cycle): what is not clean yet is a whole module on the shrinking list, nothing else."""
    assert [o for o in mypy_config()["overrides"] if o.get("disable_error_code")] == []


def test_mypy_checks_the_package_and_the_strict_layers():
    config = mypy_config()
    assert config["files"] == ["src/playbook"]
    strict = [o for o in config["overrides"] if o.get("strict")]
    assert {m for o in strict for m in o["module"]} == {"playbook.core.*", "playbook.store.*"}


def test_each_type_ignore_in_the_checked_folders_says_why() -> None:
    """`# type: ignore[code]  # the reason`, on the line (the folders of
    tests/test_local_imports.py; the whole package once its owners are done)."""
    bare = []
    for path in modules().values():
        rel = path.relative_to(PACKAGE).as_posix()
        if not checked(rel) or rel == "demo/content.py":  # (its text names one: a rule)
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            _, ignore, rest = line.partition("# type: ignore")
            if ignore and not re.match(r"(\[[a-z, -]+\])?\s+#\s*\S", rest):
                bare.append(f"{rel}:{n}: {line.strip()}")
    assert bare == []
