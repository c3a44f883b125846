"""Reflectors: turn a session diary into raw proposed deltas (SPEC §7).

A reflector reads a ``Diary`` (plus the current playbook and the deltas proposed in earlier
iterations) and returns ``ProposedItem``s: the raw item as produced and the byte offset of the
diary line it came from. Nothing here validates a delta beyond parsing it, and nothing here
touches the store: the caller (``playbook.reflection.session``) validates each item
(invalid ones land in ``rejected``), attaches provenance, and loops up to three iterations
until nothing new is proposed.

The offset of an item is always decided here, from the diary, never taken from what a model
printed, so a proposal cannot claim a source it did not have.

Modules:

- ``base``: the ``Reflector`` protocol, ``ProposedItem``, ``ReflectorError``.
- ``heuristic``: ``HeuristicReflector``, no model; reads explicit markers written in the diary.
- ``prompt``: ``build_prompt``, what a model is asked.
- ``lenient_json``: ``parse_deltas``, the deltas in what a model printed.
- ``offsets``: ``match_offset``, the diary line a model's item came from.
- ``command``: ``CommandReflector``, runs any program (``claude -p``, ``llm -m …``) with the
  prompt on stdin, never through a shell, with a timeout and an output cap.
"""

from .base import ProposedItem, Reflector, ReflectorError
from .command import CommandReflector
from .heuristic import HARMFUL_REASONS, HeuristicReflector
from .lenient_json import DELTA_TYPES, parse_deltas
from .offsets import match_offset
from .prompt import PROMPT_TEMPLATE, build_prompt

__all__ = [
    "DELTA_TYPES",
    "HARMFUL_REASONS",
    "PROMPT_TEMPLATE",
    "CommandReflector",
    "HeuristicReflector",
    "ProposedItem",
    "Reflector",
    "ReflectorError",
    "build_prompt",
    "match_offset",
    "parse_deltas",
]
