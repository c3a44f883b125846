"""Function-local imports only where a measured path needs them (issue 28): every import
inside a function says why on its line, `# lazy: <the path that would pay>` — the paths of
`bench/cli.py` and `bench/startup.py` (`mark`, `recall`, `hook prompt`, `--help`), every
typer command (`typer_app` loads every command module), a hook event that loads only its
own branch, an optional extra or a heavy library a command may not need, or an import cycle
not yet broken. Anything else belongs at the top of its module.

Checked over the folders listed in `CHECKED` (the rest of `src/playbook` joins the list as
its owners finish issue 28's phase 3; the end state is the whole package)."""

from __future__ import annotations

from .helpers.imports import PACKAGE, imports, modules

CHECKED = [
    "cli/admin.py",
    "cli/agents_export.py",
    "cli/common.py",
    "cli/conflicts.py",
    "cli/copy.py",
    "cli/core.py",
    "cli/doctor.py",
    "cli/fast.py",
    "cli/helptext.py",
    "cli/hooks.py",
    "cli/import_summary.py",
    "cli/index.py",
    "cli/interchange.py",
    "cli/learning.py",
    "cli/pg.py",
    "cli/policy.py",
    "cli/project.py",
    "cli/running.py",
    "cli/serve.py",
    "cli/views.py",
    "cli/workbench.py",
    "core/files.py",
    "core/inert.py",
    "core/lazy.py",
    "core/limits.py",
    "core/model.py",
    "core/policy.py",
    "core/text.py",
    "core/version.py",
    "demo/content.py",
    "demo/writer.py",
    "hooks/",
    "interop/",
    "mcp/schemas.py",
    "mcp/stdio.py",
    "mcp/views.py",
    "policy_eval/",
    "project/",
    "reflection/",
]
# In those folders, files another track reworks in this round (they join after its merge).
NOT_YET = {"interop/importing.py", "policy_eval/replay.py", "reflection/reflectors/prompt.py"}


def checked(rel: str) -> bool:
    if rel in NOT_YET:
        return False
    return any(rel == c or (c.endswith("/") and rel.startswith(c)) for c in CHECKED)


def test_every_function_local_import_in_the_checked_folders_says_why() -> None:
    bare = []
    for name, path in modules().items():
        rel = path.relative_to(PACKAGE).as_posix()
        if not checked(rel):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for line in sorted({i.line for i in imports(name, path) if i.kind == "local"}):
            if "# lazy:" not in lines[line - 1]:
                bare.append(f"{rel}:{line}: {lines[line - 1].strip()}")
    assert bare == []


def test_the_checked_list_names_what_exists() -> None:
    for c in [*CHECKED, *NOT_YET]:
        assert (PACKAGE / c).exists(), c
