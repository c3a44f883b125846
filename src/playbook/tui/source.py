"""The playbook the workbench shows, opened with the policy it was started with.

`data.Source` opens every store with the default policy; the workbench must score with
the one `--policy` / `$PLAYBOOK_POLICY` names, exactly as the CLI does, or the two show
different numbers for the same rule. (When `open_store(target, policy=...)` replaces
`Source`, this becomes that one call.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..policy import DEFAULT_POLICY, Policy
from ..store import PlaybookStore
from .data import Source


@dataclass(frozen=True)
class PolicySource(Source):
    policy: Policy = DEFAULT_POLICY

    @contextmanager
    def open(self, *, migrate: bool = True) -> Iterator[PlaybookStore]:
        with super().open(migrate=migrate) as store:
            store.policy = self.policy
            yield store
