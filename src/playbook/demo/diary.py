"""The demo's session diaries: the one reflected into the review queue (`DEMO_DIARY`,
`render_diary`) and the one a SessionEnd hook staged a few minutes before "now"
(`HOOK_SESSION`, `hook_session_deltas`).

Plain Python: no database, no Textual, no numpy.
"""

# The diaries keep their lines as written.
# ruff: noqa: E501

import re
from collections.abc import Callable, Sequence
from typing import Final

from .content import index_by_prefix

__all__ = ["DEMO_DIARY", "HOOK_SESSION", "HOOK_SESSION_NAME", "hook_session_deltas", "render_diary"]

# Markers refer to rules by a symbolic name here; at import they become ``{rule:N}`` with N the
# rule's index in RULES, so reordering the table cannot point a marker at the wrong rule.
_DIARY_REFS: Final[dict[str, str]] = {
    "agents-md": "Look for `AGENTS.md`",
    "first-error": "Read the first error in the CI log",
    "same-image": "Reproduce a CI-only failure in the same container image",
    "pytest-lf": "Run `pytest -x --lf` locally",
    "busy-timeout": "Raise the SQLite busy timeout to 60 seconds",
    "sleep-10": "Use `sleep 10` in CI scripts",
    "flaky-reruns": "Wrap flaky tests with `@pytest.mark.flaky",
    "xdist-isolation": "Make tests safe for `pytest -n auto`",
    "full-suite": "Run the full test suite before saying a change is done",
    "no-reruns": "AVOID: Re-running a failed CI job repeatedly",
}

_DIARY_TEMPLATE: Final = """\
# Session diary: flaky `release` workflow in payments-service

- agent: claude-code
- repository: acme/payments-service, branch `fix/release-flake`
- task: "The release workflow failed on 3 of the last 5 tags. Make it reliable. Do not skip tests."

## 09:02 Orientation

Read `AGENTS.md`, the `Makefile` and `.github/workflows/release.yml` before touching anything.
AGENTS.md says the release job must stay green without retries and that `make check` is the
canonical local gate.
[playbook: helpful {ref:agents-md}]

The release job: checkout, setup-python 3.11, setup-node 20, `make check`,
`pytest -n auto tests/`, `npm ci && npm run build` for the receipt templates, then
`twine upload` and `npm publish`. A retry wrapper reruns the whole job once on failure.

## 09:10 Reading the failures

Three failed runs. The last line of each log is `npm ERR! code EPUBLISHCONFLICT`: the retry
wrapper reran the job and tried to publish a version that had already gone out. That is a
cascade. The first error is much earlier, in the test step:

```
FAILED tests/integration/test_settlement_export.py::test_export_is_idempotent
sqlite3.OperationalError: database is locked
```

[playbook: helpful {ref:first-error}]
[playbook: helpful {ref:no-reruns}]

## 09:24 Reproducing

Pulled the runner image and ran the suite inside it:

```
docker run --rm -it -v "$PWD:/src" -w /src ghcr.io/acme/ci-python:3.11-2025.03 bash
make deps && pytest -n 4 tests/integration
```

Two failures in ten runs, the same `database is locked`. On the laptop it never failed
(fewer workers, faster disk), which explains why nobody could reproduce it.
[playbook: helpful {ref:same-image}]

`pytest -x --lf` then reran only the failing test: 4 seconds instead of the 6 minute suite.
[playbook: helpful {ref:pytest-lf}]

## 09:41 Root cause

`tests/integration/conftest.py` creates the settlement database at `build/test.sqlite3`, a
path inside the repository, so every xdist worker opens the same file. When two workers
export at once, one waits for the busy timeout and then fails.

Commit 3f9a1c2 (two weeks ago) had raised the busy timeout to 60 seconds, following a
playbook rule. It made the job four minutes slower and still failed whenever one worker
held the write lock for a whole export.
[playbook: harmful {ref:busy-timeout} wasted_time the longer timeout hid the shared file and slowed the job by four minutes]

The same commit had put `@pytest.mark.flaky(reruns=5)` on the export test, which is why the
failure only surfaced in the release job, where reruns are disabled.
[playbook: harmful {ref:flaky-reruns} caused_bug the reruns masked a real locking bug for two weeks]

Fix: the fixture now takes `tmp_path_factory` and builds one database per worker; the busy
timeout is back to 5 seconds and the `flaky` marker is gone.
[playbook: helpful {ref:xdist-isolation}]

RULE: Give each pytest-xdist worker its own SQLite file from `tmp_path_factory` instead of a path inside the repository #testing #sqlite #xdist

## 10:05 The Postgres wait

The job also ran `sleep 10` before the migration step "to let Postgres come up". Postgres
took 14 seconds on the shared runners twice last week, and the migration step then failed
with `connection refused`.
[playbook: harmful {ref:sleep-10} caused_bug the fixed sleep was shorter than Postgres startup on the shared runner]

Replaced it with a healthcheck on the service container plus `pg_isready` in a loop with a
60 second deadline; the step now reports how long it waited.

RULE: Wait for service containers with `pg_isready` in a loop with a deadline rather than a fixed sleep #ci #postgres

## 10:20 The npm publish step

The runner image moved to npm 10.9 last week. `npm ci` warned that the lockfile was written by
npm 11, and `npm publish` then packed a different file list. Pinned npm in the job with
`npm install -g npm@11.2.0` and added a version print at the top of the job.

RULE: Pin npm to 11 in the release jobs so lockfile format changes do not break publishing #ci #npm
RULE: Print `node --version` and `npm --version` at the start of every release job so toolchain drift shows up in the log #ci #release
AVOID: Letting a retry wrapper rerun a job that publishes packages; a second publish fails and buries the first error #ci #release

## 10:40 Pre-commit

The pre-commit hooks (gitleaks, ruff, mypy) took 90 seconds per commit on this machine, so
the hotfix commit went in with `git commit --no-verify`. The reviewer flagged it: the hooks
run the secret scanner and the skipped mypy run would have caught a wrong return type.

RULE: Use `--no-verify` to skip the pre-commit hooks #git

## 11:00 Verification

- `pytest -n auto tests/` twenty times inside the CI image: 20 of 20 green.
- `make check` green; `ruff check` and `mypy` clean.
- Release dry run on the branch (`workflow_dispatch`, publish disabled): green in 7m12s,
  down from 11m40s.
[playbook: helpful {ref:full-suite}]

AVOID: Trusting a flaky-test fix after one green run; repeat the job in the CI image until the old failure rate would have shown #testing #flaky

## Handoff

- Done: per-worker SQLite files, healthcheck wait for Postgres, npm pinned to 11.2.0,
  retry wrapper removed from the publish steps, `flaky` marker removed.
- Left: the receipt template build still downloads fonts at build time; tracked in #482.
- Verify: run the release workflow with `workflow_dispatch` and `publish=false`.
"""

_REF_RE: Final = re.compile(r"\{ref:([a-z0-9-]+)\}")
_PLACEHOLDER_RE: Final = re.compile(r"\{rule:(\d+)\}")

#: A session diary for the heuristic reflector: ``RULE:``/``AVOID:`` lines (trailing ``#tags``)
#: and ``[playbook: helpful|harmful {rule:N} ...]`` markers, where ``{rule:N}`` stands for the
#: bullet id of ``RULES[N]``; :func:`render_diary` fills them in. One proposal nearly repeats an
#: existing rule (the review queue shows it as a near-duplicate) and one matches a blocked
#: pattern.
DEMO_DIARY: Final[str] = _REF_RE.sub(
    lambda m: f"{{rule:{index_by_prefix(_DIARY_REFS[m.group(1)])}}}", _DIARY_TEMPLATE
)


def render_diary(ids: Sequence[str], diary: str = DEMO_DIARY) -> str:
    """The diary with every ``{rule:N}`` placeholder replaced by ``ids[N]``.

    ``ids`` are the bullet ids the loader got for :data:`RULES`, in the same order. Raises
    ``ValueError`` if a placeholder points past the end of ``ids``."""

    def bullet_id(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if index >= len(ids):
            raise ValueError(f"diary refers to rule {index}, but only {len(ids)} ids were given")
        return ids[index]

    return _PLACEHOLDER_RE.sub(bullet_id, diary)


# --------------------------------------------------------------------------- a hook session
# A second session, ended a few minutes before "now" and staged by the SessionEnd hook
# (origin "hook"): the proposals a reviewer sees at the top of the queue, among them a
# rewrite and a merge, so the workbench shows word-level diffs.

HOOK_SESSION_NAME: Final = "claude-session-7f3a9c2e.md"
HOOK_SESSION: Final = """\
# Session 7f3a9c2e (Claude Code, SessionEnd hook)

The release job failed again; the first error was an npm auth failure, later ones were
cascades. Quoting the first error in the PR saved the reviewer a re-run.
REPLACE first-error: Read the first error in the CI log and quote it in the pull request; later failures are usually cascades

Go changes: vet and the race detector caught two different bugs in the same package.
MERGE go-vet + go-race: Run `go vet ./...` and `go test -race ./...` before committing Go changes

Publishing twice from a retried job broke the release notes.
RULE: Make package publishing idempotent: check whether the version exists before `npm publish`
"""
HOOK_PROPOSALS: Final[tuple[tuple[str, tuple[str, ...], str], ...]] = (
    # (delta type, the rules it rewrites by prefix, the marker line's start in HOOK_SESSION)
    ("replace", ("Read the first error in the CI log",), "REPLACE first-error:"),
    ("merge", ("Run `go vet ./...`", "Run `go test -race`"), "MERGE go-vet"),
    ("add", (), "RULE: Make package publishing"),
)


def hook_session_deltas(
    live_id_of: Callable[[str], str | None],
) -> list[tuple[dict[str, object], int]]:
    """(delta, byte offset of its line in HOOK_SESSION) for each hook proposal, with the
    ids of the rules it rewrites as they are live now (`live_id_of(prefix)`)."""
    raw = HOOK_SESSION.encode("utf-8")
    out: list[tuple[dict[str, object], int]] = []
    for kind, prefixes, marker in HOOK_PROPOSALS:
        start = raw.index(marker.encode("utf-8"))
        line = raw[start : raw.index(b"\n", start)].decode("utf-8")
        content = line.split(": ", 1)[1]
        ids = [live_id_of(p) for p in prefixes]
        if any(i is None for i in ids):
            continue
        delta: dict[str, object]
        if kind == "replace":
            delta = {"type": "replace", "bullet_id": ids[0], "content": content}
        elif kind == "merge":
            delta = {"type": "merge", "bullet_ids": ids, "content": content}
        else:
            delta = {"type": "add", "content": content, "tags": ["release", "npm"]}
        out.append((delta, start))
    return out
