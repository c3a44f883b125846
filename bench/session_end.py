"""The session-end reflection of a very long transcript: its peak memory stays bounded.

    python bench/session_end.py [--mb 256]

Writes a synthetic Claude Code transcript of about `--mb` megabytes (turns of a few lines
of text and a tool call whose result is 200 KB of output, the way a long session that
reads big files or logs looks), with a `RULE:` line every 50 turns, then runs the detached
worker of `playbook hook session-end` on it (`python -m playbook.hooks.worker`, the
heuristic reflector) and reports its wall time and peak resident memory, whole process.
The worker reads the transcript 16 MB at a time (`hooks.session_work.SESSION_READ_BYTES`);
it used to read it whole (2.1 GB of memory for a 1 GB transcript). Target (issue 26/29):
≤ 200 MB at any size.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import environment, figure, note, run_measured

PEAK_MB = 200.0
OUTPUT = "x" * 199 + "\n"  # a line of tool output


def transcript(path: Path, megabytes: int) -> int:
    """Write the transcript; how many RULE: lines it holds."""
    rules = 0
    result = OUTPUT * 1000  # 200 KB
    with path.open("w", encoding="utf-8") as f:
        turn = 0
        while f.tell() < megabytes << 20:
            text = f"Step {turn}: reading the build log."
            if turn % 50 == 0:
                text += f"\nRULE: Check the build log of step {turn} before retrying"
                rules += 1
            for role, content in (
                ("assistant", [{"type": "text", "text": text}]),
                ("user", [{"type": "tool_result", "tool_use_id": f"t{turn}", "content": result}]),
            ):
                record = {
                    "type": role,
                    "message": {"role": role, "content": content},
                    "uuid": f"u-{turn}-{role}",
                    "sessionId": "bench",
                }
                f.write(json.dumps(record) + "\n")
            turn += 1
    return rules


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=256)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "session.jsonl"
        started = time.perf_counter()
        rules = transcript(path, args.mb)
        note(f"wrote {path.stat().st_size / 2**20:.0f} MB in {time.perf_counter() - started:.1f} s")
        db = folder / "pb.sqlite3"
        from playbook.store import open_store

        open_store(db).close()
        env = environment(XDG_STATE_HOME=str(folder / "state"), PLAYBOOK_SESSION_DIRS=tmp)
        argv = [sys.executable, "-m", "playbook.hooks.worker", "--db", str(db)]
        argv += ["--session-id", "bench", "--transcript", str(path)]
        wall, peak, _ = run_measured(argv, env)
        log = (folder / "state" / "playbook" / "reflect.log").read_text(encoding="utf-8")
        note(log.strip())
        if f"staged {rules}" not in log:
            raise SystemExit(f"expected {rules} staged: {log}")
        size = f"{args.mb} MB transcript"
        figure(f"session end of a {size}: wall", wall, "s")
        figure(f"session end of a {size}: peak memory", peak, "MB", PEAK_MB)
    return 0


if __name__ == "__main__":
    sys.exit(main())
