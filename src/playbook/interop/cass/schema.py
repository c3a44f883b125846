"""cass-memory's files as found, and how each field maps to Playbook.

What cass-memory writes
=======================

Source: ``Dicklesworthstone/cass_memory_system``:

* ``src/types.ts`` at 95d5b7beb46a0a676db15b26572879d3ecf8d870 (the zod schemas);
* ``src/playbook.ts`` at 26560da0a8575b3e8dd5e25b70c62232ff816592 (``createEmptyPlaybook``,
  ``loadPlaybook``, ``deprecateBullet``, ``getActiveBullets``, ``exportToMarkdown``);
* ``src/commands/context.ts`` at 178af69c79b9c9f1595e0d1e78f0a9857b3429fb (how
  ``deprecatedPatterns`` and ``isNegative`` are used);
* ``src/playbook.ts`` and ``src/commands/forget.ts`` at 9e023eba82442671ba86cbaa4bb349402181a41e
  (``BlockedEntry``, ``appendBlockedLog``, ``loadBlockedLog``: the ``blocked.log``).

Later versions add a bullet ``source`` field and drop the legacy per-type event lists.

* ``playbook.yaml``: YAML written by the npm ``yaml`` package (YAML 1.2), read back with
  ``yaml.parse`` and validated by ``PlaybookSchema``.
* ``PlaybookSchema``: ``schema_version`` (number, default 2; ``createEmptyPlaybook`` writes 2),
  ``name`` (default "playbook"), ``description``, ``metadata`` {``createdAt``,
  ``lastReflection?``, ``totalReflections``, ``totalSessionsProcessed``},
  ``deprecatedPatterns`` (list, default []), ``bullets`` (list, default []).
* ``PlaybookBulletSchema``: ``id``, ``scope`` (global|workspace|language|framework|task,
  default global), ``scopeKey?``, ``workspace?``, ``category``, ``content``, ``source``
  (learned|community|manual|custom, newer versions only), ``searchPointer?``, ``type``
  (rule|anti-pattern, default rule), ``isNegative`` (default false), ``kind``
  (project_convention|stack_pattern|workflow_rule|anti_pattern, default stack_pattern),
  ``state`` (draft|active|retired, default draft), ``maturity``
  (candidate|established|proven|deprecated, default candidate), ``promotedAt?``,
  ``helpfulCount``/``harmfulCount`` (default 0), ``feedbackEvents`` (list),
  ``helpfulEvents``/``harmfulEvents`` (legacy lists, older versions only),
  ``lastValidatedAt?``, ``confidenceDecayHalfLifeDays`` (default 90), ``createdAt``,
  ``updatedAt``, ``pinned`` (default false), ``pinnedReason?``, ``deprecated`` (default
  false), ``replacedBy?``, ``deprecationReason?``, ``sourceSessions`` and ``sourceAgents``
  (lists), ``reasoning?``, ``tags`` (list), ``embedding?`` (numbers), ``effectiveScore?``,
  ``deprecatedAt?``.
* ``FeedbackEventSchema``: ``type`` (helpful|harmful), ``timestamp`` (ISO string),
  ``sessionPath?``, ``reason?`` (caused_bug|wasted_time|contradicted_requirements|
  wrong_context|outdated|other), ``context?``, ``decayedValue?``.
* ``DeprecatedPatternSchema``: ``pattern``, ``deprecatedAt``, ``reason``, ``replacement?``.
  cass-memory matches ``pattern`` as a case-insensitive regular expression against the task
  text and session history (``context.ts``); Playbook matches blocked patterns as text
  against new bullet content, so regex-looking patterns are flagged in the notes.
* ``deprecateBullet`` sets ``deprecated``, ``deprecatedAt``, ``deprecationReason``,
  ``replacedBy``, ``state: retired`` and ``maturity: deprecated`` together; a bullet counts as
  inactive if any of ``state == retired``, ``maturity == deprecated`` or ``deprecated`` holds.
  A bullet is an anti-pattern when ``type == "anti-pattern"`` or ``kind == "anti_pattern"``
  (``exportToMarkdown``) or ``isNegative`` is true (``context.ts`` splits rules from pitfalls
  on ``isNegative || kind == "anti_pattern"``); the import treats any of the three as one.
* ``blocked.log`` (and the legacy ``toxic.log``): what ``cm forget ID --reason R`` appends,
  one JSON object per line: ``{"id", "content", "reason", "forgottenAt"}``. ``loadBlockedLog``
  skips lines that are not JSON and entries without ``id`` and ``content``; a bullet whose
  content equals an entry's, or shares more than 85 % of its tokens, is deprecated with
  reason ``BLOCKED_CONTENT`` when the playbook loads. That is what a Playbook blocked pattern
  does to new bullets, so each entry becomes one (its reason and time kept).

Mapping decisions (beyond the obvious renames)
==============================================

* Maturity is kept as recorded (SPEC §4: an imported bullet keeps the maturity its source
  recorded until its own evidence moves it); ``playbook import --rerate`` runs the maturity
  pass over the imported bullets instead.
* Feedback is imported as events (weight 1.0); ``helpfulCount``/``harmfulCount`` are derived
  in Playbook, so a count that disagrees with the events is reported, not imported.
  ``decayedValue``, ``effectiveScore`` and ``embedding`` are derived and dropped with a note.
* ``deprecationReason`` (with ``deprecatedAt`` and ``replacedBy``) becomes a ``deprecate``
  entry in the decision log, which ``playbook show`` and the workbench display.
* Timestamps become aware UTC datetimes (naive ones are read as UTC). Unquoted ISO
  timestamps are read as timestamps, quoted ones as text; both forms are accepted. An
  unparseable event time falls back to the bullet's creation time; an unparseable
  ``createdAt`` falls back to the earliest other time known for the bullet, then to
  ``metadata.createdAt`` (when it comes before the bullets, as cass-memory writes it), then to
  the Unix epoch, always with a note.
* ``valid_to`` is set only for retired bullets (``deprecatedAt``, else ``updatedAt``): in
  Playbook a closed interval means "retired", and a deprecated bullet that is not retired must
  stay visible to recall as a deprecation warning.
* ``confidenceDecayHalfLifeDays`` equal to cass-memory's default (90) becomes ``None`` (follow
  Playbook's policy): cass-memory writes the default on every bullet and never reads it, so it
  carries no user intent. Other positive values are kept.
* ``replacedBy`` becomes a ``supersedes`` edge only when the successor is in the file and the
  chain does not loop back on itself.
* A tag written twice on one bullet is kept once, with a note.
* Missing ``bullets`` is an error even though cass-memory defaults it to []: every file
  cass-memory writes has the key, so a mapping without it is not a cass-memory playbook.
* ``state: draft`` is read as found, and the import writes it ``active``: cass-memory's
  active set is "not retired, not deprecated", so its drafts are shown to agents, and
  Playbook shows none (``cass_import``).
* ``scope: project`` is not in cass-memory's enum but is written by hand in repositories'
  files (theirongolddev/gitlab-insights): it is read as ``workspace``, this project's.
* A workspace rule's key is mapped to Playbook's workspace identity after parsing, since
  that reads the file system (``workspaces``); so are a repository file's global rules.
* An empty ``blocked.log`` (what ``cm init --repo`` leaves) holds no blocks; it is not an
  error. Diaries (``diary``) are a file of their own.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import get_args

from ...core.model import HarmReasonName, MaturityName, ScopeName, StateName

SUPPORTED_SCHEMA_VERSION = 2
CASS_DEFAULT_HALF_LIFE_DAYS = 90

# cass-memory's enums and Playbook's are the same words; what a value may be is what
# Playbook can store, so the lists are Playbook's own.
SCOPES = frozenset(get_args(ScopeName))
STATES = frozenset(get_args(StateName))
MATURITIES = frozenset(get_args(MaturityName))
HARMFUL_REASONS = frozenset(get_args(HarmReasonName))
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

TOP_LEVEL_KEYS = frozenset(
    {"schema_version", "name", "description", "metadata", "deprecatedPatterns", "bullets"}
)
# Keys the bullet reader reads or reports deliberately; anything else is "not in the schema".
BULLET_KEYS = frozenset(
    {
        "id", "scope", "scopeKey", "workspace", "category", "content", "source",
        "searchPointer", "type", "isNegative", "kind", "state", "maturity", "promotedAt",
        "helpfulCount", "harmfulCount", "feedbackEvents", "helpfulEvents", "harmfulEvents",
        "lastValidatedAt", "confidenceDecayHalfLifeDays", "createdAt", "updatedAt", "pinned",
        "pinnedReason", "deprecated", "replacedBy", "deprecationReason", "sourceSessions",
        "sourceAgents", "reasoning", "tags", "embedding", "effectiveScore", "deprecatedAt",
    }
)  # fmt: skip
EVENT_KEYS = frozenset({"type", "timestamp", "sessionPath", "reason", "context", "decayedValue"})
PATTERN_KEYS = frozenset({"pattern", "deprecatedAt", "reason", "replacement"})
BLOCKED_ENTRY_KEYS = frozenset({"id", "content", "reason", "forgottenAt"})
REGEX_HINT = re.compile(r"[\\^$|*+?()\[\]{}]|\.\*")
