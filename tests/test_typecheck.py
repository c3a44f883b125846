"""The type checker's gate (issue 28): `mypy` runs over `src/playbook` in `.ci/run` with the
configuration of `pyproject.toml`, strict on `core/` and `store/`, and excuses nothing: the
list of modules not yet clean that phase 3 shrank is gone, no override silences an error
code, and the few `# type: ignore` the package may keep (at most 10) each say why."""

from __future__ import annotations

import re
import tokenize
import tomllib
from pathlib import Path

from .helpers.imports import PACKAGE, modules

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def mypy_config() -> dict:
    return tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["tool"]["mypy"]


def test_nothing_is_excused():
    """No module is skipped (`ignore_errors`) and no error code silenced
    (`disable_error_code`), anywhere in the configuration."""
    overrides = mypy_config().get("overrides", [])
    assert [o["module"] for o in overrides if o.get("ignore_errors")] == []
    assert [o["module"] for o in overrides if o.get("disable_error_code")] == []
    assert "ignore_errors" not in mypy_config() and "disable_error_code" not in mypy_config()


def test_mypy_checks_the_package_and_the_strict_layers():
    config = mypy_config()
    assert config["files"] == ["src/playbook"]
    strict = [o for o in config["overrides"] if o.get("strict")]
    assert {m for o in strict for m in o["module"]} == {"playbook.core.*", "playbook.store.*"}


def ignores_in(path: Path) -> list[tuple[int, str]]:
    """The `# type: ignore` comments of one file: (line, what follows it). Read with the
    tokenizer, so text that names one (a rule in `demo/rules_code.py`) is not one."""
    with path.open("rb") as f:
        return [
            (tok.start[0], tok.string.partition("type: ignore")[2])
            for tok in tokenize.tokenize(f.readline)
            if tok.type == tokenize.COMMENT and "type: ignore" in tok.string
        ]


def type_ignores() -> list[tuple[str, int, str]]:
    """Every `# type: ignore` comment of the package: (file, line, what follows it)."""
    return [
        (path.relative_to(PACKAGE).as_posix(), n, rest)
        for path in modules().values()
        for n, rest in ignores_in(path)
    ]


def test_at_most_ten_type_ignores_each_with_its_code_and_reason() -> None:
    """`# type: ignore[code]  # the reason`, on the line; at most 10 in the package."""
    found = type_ignores()
    assert len(found) <= 10, [f"{rel}:{n}" for rel, n, _ in found]
    bare = [f"{rel}:{n}" for rel, n, rest in found if not re.match(r"\[[a-z, -]+\]\s+#\s*\S", rest)]
    assert bare == []


def test_the_type_ignore_reader_finds_comments_not_text(tmp_path: Path) -> None:
    """The reader the rule above uses: a comment counts, a string naming one does not."""
    source = tmp_path / "m.py"
    source.write_text(
        'RULE = "Add `# type: ignore` to silence it"\n'
        "x: int = 'a'  # type: ignore[assignment]  # a reason\n"
        "y = 1  # type: ignore\n",
        encoding="utf-8",
    )
    assert ignores_in(source) == [(2, "[assignment]  # a reason"), (3, "")]
