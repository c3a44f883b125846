"""No module of `src/playbook` passes 400 lines (issue 28: a file that grows past it is split
by responsibility). The demo's rule table was the one exception, as pure data; it is split
too (`demo/rules_code.py` and `demo/rules_systems.py`, gathered by `demo/content.py`)."""

from __future__ import annotations

from .helpers.imports import PACKAGE, modules

MOST = 400


def test_no_module_passes_400_lines() -> None:
    long = {}
    for path in modules().values():
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > MOST:
            long[path.relative_to(PACKAGE).as_posix()] = n
    assert long == {}
