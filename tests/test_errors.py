"""Errors are classified by type and code: each library error carries a stable code that
the CLI knows and the README documents, with the same exit code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from playbook.cli.common import ERROR_CODES, CliError
from playbook.core import errors

README = Path(__file__).resolve().parents[1] / "README.md"


def all_subclasses(cls: type) -> list[type]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *all_subclasses(sub)]
    return out


def readme_codes() -> dict[str, int]:
    """`code` -> exit, from the README's error-code table."""
    table = README.read_text(encoding="utf-8").split("### Error codes", 1)[1].split("\n## ")[0]
    out = {}
    for codes, exit_code in re.findall(r"^\| (`[^|]+) \| (\d) \|", table, flags=re.M):
        for code in re.findall(r"`([a-z_]+)`", codes):
            out[code] = int(exit_code)
    return out


def test_every_library_error_code_is_known_to_the_cli_and_documented() -> None:
    import playbook.interop.importing  # (their error subclasses are defined on import)
    import playbook.review.queue  # noqa: F401

    documented = readme_codes()
    codes = {cls.code for cls in all_subclasses(errors.PlaybookError)}
    assert codes - set(ERROR_CODES) == set()
    for code, exit_code in ERROR_CODES.items():
        assert documented.get(code) == exit_code, code


@pytest.mark.parametrize(
    "error",
    [
        errors.NotAPlaybook("x is not a playbook database"),
        errors.ReadOnlyPlaybook("the playbook at x is read-only"),
        errors.DatabaseDamaged("the playbook at x is damaged"),
        errors.DiskFull("the disk is full"),
        errors.UsageError("the playbook location is empty"),
    ],
)
def test_the_cli_reports_a_library_error_by_its_code(error: errors.PlaybookError) -> None:
    cli = CliError.from_exception(error)
    assert cli is not None
    assert (cli.code, cli.exit_code, cli.message) == (
        error.code,
        ERROR_CODES[error.code],
        str(error),
    )
    assert cli.hint == error.hint
