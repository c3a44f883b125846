"""Function-local imports only where a measured path needs them (issue 28): every import
inside a function says why on its line, `# lazy: <the path that would pay>` — the paths of
`bench/cli.py` and `bench/startup.py` (`mark`, `recall`, `hook prompt`, `--help`), every
typer command (`typer_app` loads every command module), a hook event that loads only its
own branch, an optional extra or a heavy library a command may not need, or an import cycle
not yet broken. Anything else belongs at the top of its module.

Checked over every module of `src/playbook` (the folders joined one by one through issue
28's phase 3; the last, `demo/build.py`, with a rebuilt demo template)."""

from __future__ import annotations

from .helpers.imports import PACKAGE, imports, modules


def test_every_function_local_import_says_why() -> None:
    bare = []
    for name, path in modules().items():
        rel = path.relative_to(PACKAGE).as_posix()
        lines = path.read_text(encoding="utf-8").splitlines()
        for line in sorted({i.line for i in imports(name, path) if i.kind == "local"}):
            if "# lazy:" not in lines[line - 1]:
                bare.append(f"{rel}:{line}: {lines[line - 1].strip()}")
    assert bare == []
