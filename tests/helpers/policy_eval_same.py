"""`policy eval`'s report against the whole-history reference, byte for byte, with pages,
batches and held-out batches of a few marks (so moments and sessions straddle them)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from playbook.policy_eval import evaluate
from playbook.policy_eval import replay as replay_module
from playbook.store import PlaybookStore

from .policy_eval_reference_stats import evaluate as reference_evaluate


def same_report(
    store: PlaybookStore, monkeypatch: pytest.MonkeyPatch, page: int, **kw: Any
) -> dict[str, Any]:
    monkeypatch.setattr(replay_module, "PAGE", page)
    monkeypatch.setattr(replay_module, "BATCH", page * 3)  # batches end within pages too
    monkeypatch.setattr(replay_module, "HELD_BATCH", page)
    got: dict[str, Any] = evaluate(store, **kw).to_dict()
    expected = reference_evaluate(store, **kw).to_dict()
    assert json.dumps(got) == json.dumps(expected)
    return got


def scoring_iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
