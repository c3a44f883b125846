"""Every public name of SPEC §2 is the object it says, however submodules were imported."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import playbook


def test_public_names_are_not_shadowed_by_submodules() -> None:
    for mod in pkgutil.walk_packages(playbook.__path__, "playbook."):
        if ".tui" not in mod.name and not mod.name.endswith("mcp_server"):
            importlib.import_module(mod.name)
    for name in playbook.__all__:
        value = getattr(playbook, name)
        assert not inspect.ismodule(value), f"playbook.{name} is a module"
    assert callable(playbook.curate) and callable(playbook.recall) and callable(playbook.topics)
