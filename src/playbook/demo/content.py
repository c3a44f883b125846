"""Content of the demo playbook, as pure data: its rules (the table in two halves,
`demo/rules_code.py` and `demo/rules_systems.py`, read with `demo/vocabulary.py`'s grammar),
conflicts, near-duplicates and blocked patterns (`demo/curation_cases.py`), gathered here
in load order (the history is drawn by `demo/history.py`, the sessions' diaries are in
`demo/diary.py`).

Everything here is plain Python: no database, no Textual, no numpy. The demo loader feeds it
through the public API (``curate``, ``store.block``, ``reflect_session``) so that the demo
exercises the same code paths as real use. What the loader is expected to do:

1. ``store.block(pattern, reason)`` for every entry of :data:`BLOCKED_PATTERNS`.
2. Add every rule of :data:`RULES` with :meth:`DemoRule.add_delta`, stamped with
   :func:`history.creation_time`, and keep the resulting bullet ids in ``RULES`` order.
3. Replay :func:`history.generate_history` (sorted oldest first) as helpful/harmful feedback on
   ``ids[event.rule_index]``.
4. Add the second member of each :data:`CONFLICT_PAIRS` pair and the extra members of each
   :data:`NEAR_DUPLICATES` group (same category and tags as the rule they echo).
5. Reflect :func:`diary.render_diary` ``(ids)`` so the review queue has proposals to approve.

Rule profiles name the history a rule gets, so the workbench shows every state:

========== =============================================================================
proven      many helpful events, most in the last 45 days
established steady helpful feedback, now and then one harmful event
candidate   created in the last month, at most two events
fading      helpful long ago, nothing in the last 110 days: decay is visible
contested   mixed feedback, roughly one harmful event for every three helpful ones
harmful     harm recent and dominant (decayed harm >= 3 and > 2x help): the curator
            inverts it into an ``AVOID:`` anti-pattern
stale       a little feedback, none in the last 200 days: flagged for re-validation
========== =============================================================================
"""

from typing import Final

from . import rules_code, rules_systems
from .curation_cases import BLOCKED_PATTERNS, CONFLICT_PAIRS, NEAR_DUPLICATES
from .vocabulary import (
    CATEGORIES,
    HARM_REASONS,
    KINDS,
    LANGUAGES,
    PROFILES,
    RULE_TYPES,
    SCOPES,
    DemoEvent,
    DemoRule,
    parse_rules,
)

__all__ = [
    "BLOCKED_PATTERNS",
    "CATEGORIES",
    "CONFLICT_PAIRS",
    "HARM_REASONS",
    "KINDS",
    "LANGUAGES",
    "NEAR_DUPLICATES",
    "PROFILES",
    "RULES",
    "RULE_TYPES",
    "SCOPES",
    "DemoEvent",
    "DemoRule",
    "index_by_prefix",
    "index_of",
]

#: The demo playbook, in load order. History events and diary placeholders refer to rules by
#: their index in this tuple.
RULES: Final[tuple[DemoRule, ...]] = parse_rules(rules_code.TABLE) + parse_rules(
    rules_systems.TABLE
)

_INDEX_BY_CONTENT: Final[dict[str, int]] = {rule.content: i for i, rule in enumerate(RULES)}


def index_of(content: str) -> int:
    """Index in :data:`RULES` of the rule with exactly this content (``KeyError`` if none)."""
    return _INDEX_BY_CONTENT[content]


def index_by_prefix(prefix: str) -> int:
    """Index in :data:`RULES` of the one rule whose content starts with `prefix`."""
    hits = [i for i, rule in enumerate(RULES) if rule.content.startswith(prefix)]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} rules start with {prefix!r}; expected exactly one")
    return hits[0]
