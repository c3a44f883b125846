"""Names a package exports but loads only when first used, so that a one-shot command pays
only for the modules it touches (`playbook`, `playbook.store`, `playbook.review`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_exports(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `package`: `table` maps each name to the module (absolute,
    or relative to `package` when it starts with a dot) that defines it. The first use
    imports that module and keeps the value in the package, so later uses cost nothing."""
    namespace = vars(import_module(package))

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module, package), name)
        namespace[name] = value
        return value

    return __getattr__
