"""A cass-memory `playbook.yaml` (and its `blocked.log`) generated to cass-memory's real schema.

    python bench/import.py --write 10000 playbook.yaml [--blocked-log blocked.log]

The schema is cass-memory's `PlaybookSchema` / `PlaybookBulletSchema` / `FeedbackEventSchema`
(`src/types.ts` of Dicklesworthstone/cass_memory_system), with the keys in the order zod
writes them back (schema order) and the text laid out the way the npm `yaml` package's
`stringify` writes it: block style, two-space indents, `[]` for empty lists, ISO timestamps
as plain scalars, long plain strings folded at 80 columns. `blocked.log` is what `cm forget`
appends: one JSON object per line with `id`, `content`, `reason`, `forgottenAt`.

What a generated playbook holds, per rule (seeded, so the same arguments give the same
bytes): 0-14 feedback events (about 5 on average; a fifth harmful, with a reason, some with
context and `decayedValue`), one to three source sessions and their agents, two to five
tags (about 1 % with a tag written twice), all five scopes, every kind, anti-patterns
(`type`, `kind` and `isNegative`), pins with reasons, deprecated and retired rules with
their reasons, `replacedBy` chains of two to four rules, and about 1 % of rules as
`deprecatedPatterns`. About 1.4 KB per rule, as in playbooks cass-memory has written.
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_args

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from playbook.core.model import HarmReasonName

NOW = datetime(2026, 6, 1, tzinfo=UTC)
SPAN_DAYS = 540

WORDS = (
    "npm pnpm yarn node python pytest ruff mypy docker compose kubernetes helm terraform "
    "release deploy ci cache lockfile migration django flask fastapi sqlalchemy postgres "
    "sqlite redis queue worker retry timeout logging tracing metrics secret token auth "
    "branch rebase merge squash commit hook lint format test fixture mock snapshot build "
    "bundle webpack vite esbuild typescript eslint prettier go rust cargo clippy java maven "
    "env config schema index query transaction lock pool connection session cookie header "
    "upload download stream buffer parser encoder locale timezone date unicode path file"
).split()
VERBS = "Pin Run Use Prefer Check Keep Cache Split Retry Log Document Lock Always Never".split()
AVOID = "Calling Running Skipping Mocking Sleeping Catching Reusing Hardcoding".split()
CATEGORIES = "testing ci release database tooling git deploy security frontend backend".split()
KINDS = ("project_convention", "stack_pattern", "workflow_rule", "anti_pattern")
LANGUAGES = ("python", "typescript", "go", "rust", "java")
FRAMEWORKS = ("django", "react", "fastapi", "nextjs", "spring")
TASKS = ("deploy", "release", "migrate", "review", "debug")
REASONS = tuple(get_args(HarmReasonName))  # cass-memory's HarmfulReasonEnum: the same words
AGENT_DIRS = {
    "claude": "/home/dev/.claude/projects/app",
    "codex": "/home/dev/.codex/sessions/2026",
    "cursor": "/home/dev/.cursor/chats",
}


def _ts(t: datetime) -> str:
    """A JavaScript `Date.toISOString()`."""
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out or "0"


def _plain(text: str, indent: int, first: int) -> str:
    """A plain scalar folded at 80 columns the way npm `yaml` folds it: continuation lines
    indented two spaces past the key. `first` is how many columns the key already takes."""
    words = text.split(" ")
    lines: list[str] = []
    line = ""
    width = 80 - first
    for w in words:
        if line and len(line) + 1 + len(w) > width:
            lines.append(line)
            line = w
            width = 80 - indent - 2
        else:
            line = f"{line} {w}" if line else w
    lines.append(line)
    pad = " " * (indent + 2)
    return ("\n" + pad).join(lines)


class _Gen:
    def __init__(self, n: int, seed: int) -> None:
        self.n = n
        self.rng = random.Random(seed)
        self.start = NOW - timedelta(days=SPAN_DAYS)
        self.forgotten: list[tuple[str, str, str, datetime]] = []

    def when(self, after: datetime, within_days: float) -> datetime:
        t = after + timedelta(seconds=self.rng.uniform(0, within_days * 86400))
        return min(t, NOW - timedelta(minutes=5))

    def sentence(self, anti: bool) -> str:
        rng = self.rng
        words = rng.sample(WORDS, rng.randint(5, 16))
        head = rng.choice(AVOID if anti else VERBS)
        tail = ""
        if rng.random() < 0.25:  # a longer rule, folded over lines by the writer
            tail = " because " + " ".join(rng.sample(WORDS, rng.randint(10, 24)))
        return f"{head} {' '.join(words)}{tail}"

    def session(self) -> tuple[str, str]:
        agent = self.rng.choice(tuple(AGENT_DIRS))
        return agent, f"{AGENT_DIRS[agent]}/{_base36(self.rng.getrandbits(40))}.jsonl"

    def bullets(self) -> Iterator[tuple[dict[str, object], list[dict[str, object]]]]:
        rng = self.rng
        chain_left = 0
        prev_id = ""
        for i in range(self.n):
            created = self.when(self.start, SPAN_DAYS - 30)
            bid = f"b-{_base36(int(created.timestamp() * 1000))}-{_base36(rng.getrandbits(31))}"
            kind = rng.choices(KINDS, weights=(3, 4, 4, 1))[0]
            anti = kind == "anti_pattern" or rng.random() < 0.05
            scope = rng.choices(
                ("global", "workspace", "language", "framework", "task"), weights=(6, 2, 2, 1, 1)
            )[0]
            b: dict[str, object] = {"id": bid, "scope": scope}
            if scope == "workspace":
                b["workspace"] = f"/home/dev/src/app{rng.randint(1, 5)}"
            elif scope != "global":
                keys = {"language": LANGUAGES, "framework": FRAMEWORKS, "task": TASKS}[scope]
                b["scopeKey"] = rng.choice(keys)
            b["category"] = rng.choice(CATEGORIES)
            b["content"] = self.sentence(anti)
            b["source"] = "learned"
            b["type"] = "anti-pattern" if anti else "rule"
            b["isNegative"] = anti
            b["kind"] = kind

            events: list[dict[str, object]] = []
            t = created
            for _ in range(min(14, int(rng.expovariate(1 / 5.0)))):
                t = self.when(t, 40)
                ev: dict[str, object] = {"type": "helpful", "timestamp": _ts(t)}
                if rng.random() < 0.2:
                    ev["type"] = "harmful"
                if rng.random() < 0.7:
                    ev["sessionPath"] = self.session()[1]
                if ev["type"] == "harmful":
                    ev["reason"] = rng.choice(REASONS)
                if rng.random() < 0.3:
                    ev["context"] = " ".join(rng.sample(WORDS, rng.randint(3, 9)))
                if rng.random() < 0.1:
                    ev["decayedValue"] = round(rng.random(), 4)
                events.append(ev)
            helpful = sum(e["type"] == "helpful" for e in events)
            harmful = len(events) - helpful

            retired = False
            replaced_by = None
            if chain_left:  # this rule replaces the previous one
                chain_left -= 1
            if rng.random() < 0.03 and i + 1 < self.n:
                chain_left = rng.randint(1, 3)
            if chain_left:
                retired = True  # replaced by the next rule in the file
            deprecated = retired or rng.random() < 0.04
            if retired and rng.random() < 0.7:
                replaced_by = "next"
            total = helpful + harmful
            if deprecated:
                maturity = "deprecated"
            elif total < 3:
                maturity = "candidate"
            elif harmful / total > 0.3:
                maturity = rng.choice(("candidate", "established"))
            elif helpful >= 10 and harmful / total < 0.1:
                maturity = "proven"
            else:
                maturity = "established"
            b["state"] = "retired" if retired else rng.choices(("active", "draft"), (9, 1))[0]
            b["maturity"] = maturity
            if maturity in ("established", "proven") and rng.random() < 0.6:
                b["promotedAt"] = _ts(self.when(created, 30))
            b["helpfulCount"] = helpful
            b["harmfulCount"] = harmful
            b["feedbackEvents"] = events
            if events and rng.random() < 0.3:
                b["lastValidatedAt"] = events[-1]["timestamp"]
            b["confidenceDecayHalfLifeDays"] = 90 if rng.random() < 0.97 else 30
            b["createdAt"] = _ts(created)
            b["updatedAt"] = events[-1]["timestamp"] if events else _ts(created)
            pinned = rng.random() < 0.02
            b["pinned"] = pinned
            if pinned:
                b["pinnedReason"] = "Agreed with the team in review"
            b["deprecated"] = deprecated
            reason = None
            if deprecated:
                reason = "Replaced by a better rule" if retired else "No longer true since v3"
                if replaced_by:
                    b["replacedBy"] = "next"
                b["deprecationReason"] = reason
            sessions = [self.session() for _ in range(rng.randint(1, 3))]
            b["sourceSessions"] = [s for _, s in sessions]
            b["sourceAgents"] = list(dict.fromkeys(a for a, _ in sessions))
            if rng.random() < 0.15:
                b["reasoning"] = "Seen in " + " ".join(rng.sample(WORDS, rng.randint(4, 10)))
            tags = rng.sample(WORDS, rng.randint(2, 5))
            if rng.random() < 0.01:
                tags.append(tags[0])
            b["tags"] = tags
            if deprecated:
                at = self.when(created, 30)
                b["deprecatedAt"] = _ts(at)
                if rng.random() < 0.3:
                    self.forgotten.append((bid, str(b["content"]), str(reason), at))
            prev_id = bid
            yield b, events
        del prev_id

    def write(self, out: Path, blocked: Path | None) -> None:
        rng = self.rng
        with out.open("w", encoding="utf-8") as fh:
            fh.write("schema_version: 2\nname: playbook\n")
            fh.write("description: Auto-generated by cass-memory\nmetadata:\n")
            fh.write(f"  createdAt: {_ts(self.start)}\n  lastReflection: {_ts(NOW)}\n")
            fh.write(f"  totalReflections: {self.n // 3}\n")
            fh.write(f"  totalSessionsProcessed: {self.n // 2}\n")
            patterns = max(1, self.n // 100)
            fh.write("deprecatedPatterns:\n")
            for _ in range(patterns):
                words = " ".join(rng.sample(WORDS, rng.randint(2, 5)))
                fh.write(f"  - pattern: {words}\n")
                fh.write(f"    deprecatedAt: {_ts(self.when(self.start, SPAN_DAYS))}\n")
                fh.write("    reason: Broke the build twice\n")
                if rng.random() < 0.5:
                    fh.write(f"    replacement: {rng.choice(VERBS)} {rng.choice(WORDS)}\n")
            fh.write("bullets:\n")
            pending: list[str] = []  # the bullet whose replacedBy names the next one
            for b, _ in self.bullets():
                if pending:
                    pending[0] = pending[0].replace("replacedBy: next", f"replacedBy: {b['id']}")
                    fh.write(pending.pop())
                text = _bullet_text(b)
                if b.get("replacedBy") == "next":
                    pending.append(text)
                else:
                    fh.write(text)
            for text in pending:  # the last rule of the file replaces nothing
                fh.write(text.replace("    replacedBy: next\n", ""))
        if blocked is not None:
            with blocked.open("w", encoding="utf-8") as fh:
                for bid, content, reason, at in self.forgotten:
                    entry = {
                        "id": bid,
                        "content": content,
                        "reason": reason,
                        "forgottenAt": _ts(at),
                    }
                    fh.write(json.dumps(entry) + "\n")


_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def _scalar(value: object, indent: int, first: int) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if text.startswith("/") or text[:1].isalpha() or _ISO.fullmatch(text):
        return _plain(text, indent, first)
    return json.dumps(text)


def _bullet_text(b: dict[str, object]) -> str:
    out: list[str] = []
    first = True
    for key, value in b.items():
        lead = "  - " if first else "    "
        first = False
        if isinstance(value, list):
            if not value:
                out.append(f"{lead}{key}: []")
                continue
            out.append(f"{lead}{key}:")
            for item in value:
                if isinstance(item, dict):
                    inner = True
                    for k, v in item.items():
                        pre = "      - " if inner else "        "
                        inner = False
                        out.append(f"{pre}{k}: {_scalar(v, 8, len(pre) + len(k) + 2)}")
                else:
                    out.append(f"      - {_scalar(item, 8, 8)}")
            continue
        out.append(f"{lead}{key}: {_scalar(value, 4, len(lead) + len(key) + 2)}")
    return "\n".join(out) + "\n"


def generate(n: int, out: Path, *, blocked: Path | None = None, seed: int = 1) -> Path:
    """Write a cass-memory playbook of `n` rules to `out` (and its blocked.log)."""
    _Gen(n, seed).write(out, blocked)
    return out
