"""32 agents at once on one PostgreSQL playbook, each a realistic loop, for 5 minutes.

    run(url, agents=32, seconds=300) -> Load

Each agent is a thread that runs the real commands as an agent's hooks and tools do, one
process each: `playbook hook prompt` (Claude Code's UserPromptSubmit JSON on stdin, the
agent's own session), then `playbook mark` on three rules the prompt's context named
(helpful, or one in seven harmful), then `playbook outcome` citing the three with a
receipt of its own; then it thinks for 20-40 s and starts again. Agents start spread over
the first 30 s. Every command's wall time is kept; an error is a non-zero exit, anything
on stderr, or a hook that answered nothing.

`check(url, load)` reads the log afterwards: every mark that succeeded is one row (each
carries a context naming its agent, loop and position), every outcome one receipt and one
row per rule it cited, and nothing else was written in the agents' names.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field

ID = re.compile(r"\bb-[0-9a-f]{8}\b")
PROMPTS = (
    "The {a} step fails in {b}, fix it",
    "Add {a} to the {b} job",
    "Why is {a} slow when {b} runs?",
    "Refactor the {a} code around {b}",
)


@dataclass
class Load:
    prompt: list[float] = field(default_factory=list)
    mark: list[float] = field(default_factory=list)
    outcome: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)  # contexts of the marks that succeeded
    outcomes: dict[str, int] = field(default_factory=dict)  # receipt -> rules cited
    loops: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _run(
    argv: list[str], env: dict[str, str], stdin: bytes = b""
) -> tuple[float, int, bytes, bytes]:
    t = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, env=env, check=False)
    return time.perf_counter() - t, done.returncode, done.stdout, done.stderr


def _agent(
    n: int, base: list[str], env: dict[str, str], ids: list[str], terms: list[str],
    deadline: float, load: Load,
) -> None:  # fmt: skip
    rng = random.Random(1000 + n)
    session = f"agent-{n}-{os.getpid()}"
    time.sleep(rng.uniform(0, 30))
    loop = 0
    while time.monotonic() < deadline:
        loop += 1
        a, b = rng.sample(terms, 2)
        hook = {
            "session_id": session,
            "transcript_path": "/nonexistent/transcript.jsonl",
            "cwd": "/tmp",
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": rng.choice(PROMPTS).format(a=a, b=b),
        }
        wall, rc, out, err = _run([*base, "hook", "prompt"], env, json.dumps(hook).encode())
        named = list(dict.fromkeys(ID.findall(out.decode(errors="replace"))))
        with load.lock:
            load.prompt.append(wall)
            if rc != 0 or err.strip() or not out.strip():
                load.errors.append(f"hook prompt (exit {rc}): {err.decode()[-200:]}")
        cited = (named + rng.sample(ids, 3))[:3] if len(named) < 3 else rng.sample(named, 3)
        for m, bid in enumerate(cited):
            context = f"agent-{n} loop-{loop} mark-{m}"
            argv = [*base, "mark", bid, "helpful", "--context", context, "--session", session]
            if rng.random() < 1 / 7:
                argv[argv.index("helpful")] = "harmful"
                argv += ["--reason", "wasted_time"]
            wall, rc, out, err = _run(argv, env)
            with load.lock:
                load.mark.append(wall)
                if rc != 0 or err.strip():
                    load.errors.append(f"mark (exit {rc}): {err.decode()[-200:]}")
                else:
                    load.marks.append(context)
        receipt = f"agent-{n}-loop-{loop}-{os.getpid()}"
        argv = [*base, "outcome", "success", *cited, "--receipt", receipt, "--session", session]
        wall, rc, out, err = _run([*argv, "--json"], env)
        with load.lock:
            load.outcome.append(wall)
            load.loops += 1
            if rc != 0 or err.strip():
                load.errors.append(f"outcome (exit {rc}): {err.decode()[-200:]}")
            else:  # a rule retired meanwhile (inverted by others' marks) is skipped
                load.outcomes[receipt] = len(json.loads(out)["data"]["applied"])
        time.sleep(rng.uniform(20, 40))


def run(
    base: list[str], env: dict[str, str], ids: list[str], terms: list[str],
    agents: int = 32, seconds: float = 300,
) -> Load:  # fmt: skip
    """`base` is the command and its `--db URL`; `ids`, rules to cite when a prompt names
    fewer than three."""
    load = Load()
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=_agent, args=(n, base, env, ids, terms, deadline, load))
        for n in range(agents)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return load


def check(store: object, load: Load) -> tuple[int, int]:
    """(marks or outcome events missing or stored more than once, events written in the
    agents' names that no command reported): both 0 when every event is stored once."""
    sql = store.sql  # type: ignore[attr-defined]
    rows = sql.all(
        "SELECT context, COUNT(*) FROM feedback WHERE context LIKE 'agent-% loop-% mark-%' "
        "GROUP BY context"
    )
    stored = {c: n for c, n in rows}
    wrong = sum(1 for c in load.marks if stored.get(c) != 1)
    extra = sum(n for c, n in stored.items() if c not in set(load.marks))
    got = dict(
        sql.all(
            "SELECT receipt, COUNT(*) FROM feedback WHERE receipt LIKE 'agent-%' GROUP BY receipt"
        )
    )
    wrong += sum(1 for r, n in load.outcomes.items() if got.get(r) != n)
    extra += sum(n for r, n in got.items() if r not in load.outcomes)
    receipts = sql.scalar("SELECT COUNT(*) FROM receipts WHERE receipt LIKE 'agent-%'")
    wrong += abs(int(receipts) - len(load.outcomes))
    return wrong, extra
