"""What the hot commands load, and the shortcuts that keep them light giving exactly what
the full machinery gives (issue 15: start-up).

- `playbook mark`, `recall --json`, `--help` and the prompt hook never import pydantic,
  numpy, rapidfuzz, sqlite-utils, PyYAML or Textual (checked in a fresh interpreter);
- a plain vote read without pydantic (`curation.votes`) is what the delta union reads;
- a bullet printed from its row (`records.bullet_json`) is what its model dumps;
- `playbook --help` printed from the kept text (`cli.helptext`) is typer's, and the kept
  text is used only while every module that made it is unchanged;
- a store's first keyword recall (plain Python) ranks as the numpy path does: the same
  items in the same order with the same scores, to the last bit (`core/scoring.py`'s float
  and array forms).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playbook import recall
from playbook.core.deltas import InvalidDelta, delta_dict, parse_delta
from playbook.curation import curate
from playbook.curation.votes import vote_of
from playbook.store import PlaybookStore, connect, open_store
from playbook.store.records import bullet_json, bullet_of, iso

from .helpers import Clock
from .helpers.histories import WORDS
from .helpers.histories import random_history as _random_history
from .helpers.startup import two_rule_playbook

SRC = Path(__file__).resolve().parents[1] / "src"
HEAVY = ("pydantic", "numpy", "rapidfuzz", "sqlite_utils", "yaml", "textual")

_RUN = """
import io, sys, contextlib
argv = sys.argv[1:]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        if argv[0] == "hook":
            from playbook.launcher import run
            sys.argv = ["playbook", *argv[1:]]
            run()
        else:
            from playbook.cli import main
            main(argv)
    except SystemExit:
        pass
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
print(repr((loaded, len(out.getvalue()))))
"""


def _loaded(
    argv: list[str],
    stdin: str = "",
    env: dict[str, str] | None = None,
    watch: tuple[str, ...] = HEAVY,
) -> list[str]:
    """The heavy packages (of `watch`) a fresh `playbook ARGV` process has imported when
    it is done."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUN % (watch,), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "", **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr
    loaded, printed = eval(proc.stdout.strip().splitlines()[-1])
    assert printed > 0, proc.stderr  # the command did its work
    return loaded


@pytest.fixture(scope="module")
def playbook_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return two_rule_playbook(tmp_path_factory.mktemp("startup") / "pb.sqlite3")


def test_mark_loads_nothing_heavy(playbook_file: tuple[Path, str]) -> None:
    path, bid = playbook_file
    assert _loaded(["--db", str(path), "mark", bid, "helpful", "--context", "ok"]) == []
    assert _loaded(["--db", str(path), "mark", bid, "harmful", "--reason", "outdated"]) == []
    # in a session (the provenance read without the model: `core.origin`)
    session = ["--session", "s-17", "--context", "agent-1 loop-3"]
    assert _loaded(["--db", str(path), "mark", bid, "helpful", *session]) == []


def test_outcome_loads_nothing_heavy(playbook_file: tuple[Path, str]) -> None:
    path, bid = playbook_file
    line = ["--db", str(path), "outcome", "success", bid, "b-missing", "--receipt", "r-1"]
    assert _loaded([*line, "--context", "ci", "--session", "s-1", "--json"]) == []
    assert _loaded(["--db", str(path), "outcome", "failure", bid]) == []


def test_recall_and_help_load_nothing_heavy(playbook_file: tuple[Path, str]) -> None:
    path, _ = playbook_file
    assert _loaded(["--db", str(path), "recall", "npm release", "--json"]) == []
    assert _loaded(["--db", str(path), "recall", "npm release"]) == []
    assert _loaded(["--help"]) == []


def test_the_workbench_paints_before_the_core_loads() -> None:
    """The workbench's first frame waits for every module imported before it: the delta
    models (pydantic), numpy and rapidfuzz load with the first read, in a worker, after it.
    (Before: `playbook.tui.app` imported the queue, and with it pydantic, ~130 ms.)"""
    proc = subprocess.run(
        [sys.executable, "-c", "import sys, playbook.tui.demo_app, playbook.tui.app; "
         f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"],
        capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert eval(proc.stdout) == ["textual"]


def test_the_prompt_hook_loads_nothing_heavy(
    playbook_file: tuple[Path, str], tmp_path: Path
) -> None:
    path, _ = playbook_file
    hook = json.dumps(
        {"session_id": "s1", "cwd": str(tmp_path), "prompt": "the npm release job fails"}
    )
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    assert _loaded(["hook", "--db", str(path), "hook", "prompt"], hook, env) == []


def test_the_prompt_hook_and_recall_load_neither_openssl_nor_traceback(
    playbook_file: tuple[Path, str], tmp_path: Path
) -> None:
    """hashlib loads OpenSSL (~2.5 ms) for the hook's one session digest; traceback (~1 ms)
    only a bug needs."""
    path, _ = playbook_file
    hook = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "prompt": "npm release"})
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    watch = ("hashlib", "_hashlib", "traceback")
    assert _loaded(["hook", "--db", str(path), "hook", "prompt"], hook, env, watch) == []
    recall_line = ["hook", "--db", str(path), "recall", "npm release", "--json"]
    assert _loaded(recall_line, watch=watch) == []


def test_mark_loads_neither_openssl_nor_traceback(playbook_file: tuple[Path, str]) -> None:
    """A mark hashes the policy (whether the maturity rules changed): with Python's own
    SHA-256, not OpenSSL's (~3 ms)."""
    path, bid = playbook_file
    watch = ("hashlib", "_hashlib", "traceback")
    assert _loaded(["hook", "--db", str(path), "mark", bid, "helpful"], watch=watch) == []


@pytest.mark.parametrize("session_id", ["s1", "", "ab/../c", "\ud800 é 😀", "x" * 500])
def test_a_session_key_is_the_start_of_its_sha256(session_id: str) -> None:
    """Kept session memories stay valid: the key is hashlib's digest, whatever computes it."""
    import hashlib

    from playbook.hooks.state import session_key

    raw = session_id.encode("utf-8", "surrogatepass")
    assert session_key(session_id) == hashlib.sha256(raw).hexdigest()[:24]


@pytest.mark.parametrize("text", ["Pin the lockfile", "", "\ud800 é 😀", "x" * 10_000])
def test_a_content_hash_is_its_sha256(text: str) -> None:
    """Stored content hashes (duplicate search, the vector cache's keys) stay valid."""
    import hashlib

    from playbook.core.text import content_hash

    raw = text.encode("utf-8", "surrogatepass")
    assert content_hash(text) == hashlib.sha256(raw).hexdigest()


# ------------------------------------------------------------------ votes without pydantic

_text = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["b-1", "", "\ud800", 'é ü \u2028 \x7f \x00 \n " \\ /', "😀"]),
)
_value = st.one_of(
    st.none(),
    _text,
    st.integers(),
    st.booleans(),
    st.sampled_from(["caused_bug", "outdated", "other", "nope"]),
    st.lists(st.integers(), max_size=2),
)
_item = st.dictionaries(
    st.sampled_from(["type", "bullet_id", "context", "reason", "content", "extra"]),
    _value,
    max_size=5,
).map(lambda d: {**d, "type": d.get("type", "helpful")})
_typed = st.tuples(st.sampled_from(["helpful", "harmful", "add", "x"]), _item).map(
    lambda p: {**p[1], "type": p[0]}
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_item, _typed))
def test_a_vote_read_without_pydantic_is_what_the_union_reads(item: dict[str, object]) -> None:
    vote = vote_of(item)
    try:
        parsed = parse_delta(item)
    except InvalidDelta:
        assert vote is None  # never accepts what the union refuses
        return
    if vote is None:
        return  # left to the union: always allowed
    assert vote.key() == parsed.model_dump_json()
    assert vote.as_dict() == delta_dict(parsed)
    assert (vote.type, vote.bullet_id) == (parsed.type, parsed.bullet_id)


def test_votes_take_the_light_path_only_for_plain_dicts() -> None:
    assert vote_of({"type": "helpful", "bullet_id": "b-1"}) is not None
    assert vote_of({"type": "harmful", "bullet_id": "b-1", "reason": "outdated"}) is not None
    assert vote_of({"type": "harmful", "bullet_id": "b-1", "reason": "bogus"}) is None
    assert vote_of({"type": "helpful", "bullet_id": "b-1", "reason": "outdated"}) is None
    assert vote_of({"type": "helpful", "bullet_id": "\ud800"}) is None
    assert vote_of({"type": "add", "content": "x"}) is None


# ------------------------------------------------------------------ outcomes without pydantic

_report = st.dictionaries(
    st.sampled_from(["outcome", "bullet_ids", "receipt", "context", "at", "extra"]),
    st.one_of(
        _value,
        st.sampled_from(["success", "failure", "partial", " ", "2026-01-01T00:00:00Z"]),
        st.lists(_text, max_size=3),
        st.tuples(_text),
    ),
    max_size=5,
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_report, _report.map(lambda d: {**d, "outcome": "success"})))
def test_a_report_read_without_pydantic_is_what_the_model_reads(item: dict[str, object]) -> None:
    from pydantic import ValidationError

    from playbook.curation.outcome_report import OutcomeReport
    from playbook.curation.outcomes import plain_report

    plain = plain_report(item)
    try:
        model = OutcomeReport.model_validate(item)
    except ValidationError:
        assert plain is None  # never accepts what the model refuses
        return
    if plain is None:
        return  # left to the model: always allowed
    fields = ("outcome", "bullet_ids", "receipt", "context", "at")
    assert [getattr(plain, f) for f in fields] == [getattr(model, f) for f in fields]


# ------------------------------------------------------------------ bullets without pydantic

_stamp = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda t: t.replace(microsecond=0) if t.second % 2 else t)


@settings(max_examples=200, deadline=None)
@given(
    content=st.text(max_size=30),
    tags=st.lists(st.text(max_size=8), max_size=3),
    scope_key=st.one_of(st.none(), st.text(max_size=8)),
    pinned=st.booleans(),
    half_life=st.one_of(st.none(), st.floats(min_value=0.5, max_value=1e4)),
    ref=st.one_of(st.none(), st.text(max_size=10)),
    offset=st.one_of(st.none(), st.integers(min_value=0, max_value=2**40)),
    created=_stamp,
    valid_to=st.one_of(st.none(), _stamp),
)
def test_a_bullet_printed_from_its_row_is_what_its_model_dumps(
    content: str,
    tags: list[str],
    scope_key: str | None,
    pinned: bool,
    half_life: float | None,
    ref: str | None,
    offset: int | None,
    created: datetime,
    valid_to: datetime | None,
) -> None:
    row = (
        "b-1", content, "ci", json.dumps(tags), "workspace", scope_key, "rule", "workflow_rule",
        "learned", "active", "proven", int(pinned), "why" if pinned else None, half_life, ref,
        offset, iso(created), iso(created + timedelta(seconds=1)),
        iso(valid_to) if valid_to else None, "hash",
    )  # fmt: skip
    assert bullet_json(row) == bullet_of(row).model_dump(mode="json")


# ------------------------------------------------------------------ the first recall


def _items(result: object) -> list[tuple[object, ...]]:
    return [
        (key, item.to_dict()["bullet"], item.keyword_score, item.similarity, item.relevance)
        for key in ("bullets", "anti_patterns", "deprecated_warnings")
        for item in getattr(result, key)
    ]


def _scores(result: object) -> list[float]:
    return [
        score
        for key in ("bullets", "anti_patterns", "deprecated_warnings")
        for item in getattr(result, key)
        for score in (item.effective_score, item.final_score)
    ]


@pytest.mark.parametrize("seed", range(3))
def test_a_first_recall_ranks_exactly_as_the_numpy_path(
    store: PlaybookStore, clock: Clock, db_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    _random_history(store, clock, rng)
    clock.advance(seconds=1)
    warm = PlaybookStore(connect(db_path), clock=clock)
    recall(warm, "warm up")  # its first query
    for _ in range(8):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        scope = rng.choice([None, ["workspace:web"], ["language:python"]])
        limit = rng.choice([1, 3, 50])
        fresh = PlaybookStore(connect(db_path), clock=clock)
        first = recall(fresh, query, limit=limit, scope=scope)
        assert fresh.rank_cache.table is None  # it took the first-query path
        numpy_path = recall(warm, query, limit=limit, scope=scope)
        assert warm.rank_cache.table is not None
        assert _items(first) == _items(numpy_path), query
        assert _scores(first) == _scores(numpy_path), query  # to the last bit
        fresh.close()
    warm.close()


# ------------------------------------------------------------------ the launcher's fast path


def test_the_fast_reader_knows_each_hot_command_as_typer_declares_it() -> None:
    """`cli/fast.py` mirrors `cli/core.py`: the same arguments in the same order, the same
    options with the same names and kinds, the same root options, and the command function
    it calls takes exactly those parameters."""
    import inspect

    import typer.main

    from playbook.cli import app, hot
    from playbook.cli.fast import COMMANDS, GLOBAL_OPTIONS

    group = typer.main.get_command(app)
    root = {p.opts[0] for p in group.params if not getattr(p, "is_flag", False)}
    assert root == set(GLOBAL_OPTIONS)
    for name, spec in COMMANDS.items():
        command = group.commands[name]  # type: ignore[attr-defined]
        declared_arguments = [p for p in command.params if p.param_type_name == "argument"]
        arguments = [p.name for p in declared_arguments]
        assert tuple(arguments) == spec.arguments, name
        assert [p.nargs == -1 for p in declared_arguments] == [
            spec.variadic and i == len(arguments) - 1 for i in range(len(arguments))
        ], name
        options = {p.name: p for p in command.params if p.param_type_name == "option"}
        assert {o.dest for o in spec.options} == set(options), name
        for option in spec.options:
            declared = options[option.dest]
            assert set(option.names) == {*declared.opts, *declared.secondary_opts}
            kind = (
                "flag"
                if declared.is_flag
                else "many"
                if declared.multiple
                else "int"
                if declared.type.name.startswith("int")
                else "text"
            )
            assert option.kind == kind, (name, option.dest)
            assert option.minimum == getattr(declared.type, "min", None), (name, option.dest)
        function = getattr(hot, spec.function)
        assert list(inspect.signature(function).parameters) == [*arguments, *options]


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["mark", "-h"],
        ["mark", "b-1"],
        ["mark", "b-1", "helpful", "extra"],
        ["mark", "b-1", "helpful", "--bogus"],
        ["mark", "b-1", "helpful", "--json=yes"],
        ["mark", "b-1", "helpful", "--context"],
        ["mark", "b-1", "helpful", "--context", "-x"],
        ["mark", "b-1", "helpful", "--context", "a", "--context", "b"],
        ["mark", "-", "helpful"],
        ["--db", "", "mark", "b-1", "helpful"],
        ["--db", "a", "--db", "b", "mark", "b-1", "helpful"],
        ["--json", "mark", "b-1", "helpful"],
        ["recall", "q", "-n", "0"],
        ["recall", "q", "-n", "two"],
        ["recall", "q", "-n3"],
        ["recall", "q", "--limit", "2", "--limit", "3"],
        ["recall", "--", "q"],
        ["show", "b-1"],
        ["outcome", "success"],
        ["outcome", "success", "b-1", "--receipt"],
        ["outcome", "success", "b-1", "--bogus"],
        ["outcome", "success", "b-1", "--receipt", "a", "--receipt", "b"],
        ["outcome", "success", "-b-1"],
        ["hook"],
        ["hook", "prompt", "--json"],
    ],
)
def test_anything_but_a_plain_hot_command_line_goes_to_the_full_reader(argv: list[str]) -> None:
    from playbook.cli.fast import read

    assert read(argv) is None


_T = datetime(2026, 11, 5, 12, tzinfo=UTC)


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same clock and batch id for both runs of a command line."""
    import playbook.core.terms as terms
    import playbook.curation.pipeline as pipeline

    monkeypatch.setattr(terms, "utcnow", lambda: _T)
    monkeypatch.setattr(pipeline, "new_batch_id", lambda: "batch-1")
    for name in ("PLAYBOOK_DB", "PLAYBOOK_POLICY"):
        monkeypatch.delenv(name, raising=False)


def _both_ways(
    argv: list[str], capsys: pytest.CaptureFixture[str], fast_argv: list[str] | None = None
) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(exit code, stdout, stderr) of `argv` through the full command line, then of
    `fast_argv` (the same by default) through the launcher's fast path (which must take
    it)."""
    from playbook.cli import main
    from playbook.cli.fast import read
    from playbook.launcher import run

    fast_argv = argv if fast_argv is None else fast_argv
    assert read(fast_argv) is not None, fast_argv
    capsys.readouterr()
    full = (main(argv), *capsys.readouterr())
    old = sys.argv
    sys.argv = ["playbook", *fast_argv]
    try:
        with pytest.raises(SystemExit) as done:
            run()
    finally:
        sys.argv = old
    fast = (done.value.code, *capsys.readouterr())
    return full, fast


@pytest.fixture
def two_copies(tmp_path: Path) -> tuple[Path, Path, str]:
    first = tmp_path / "a.sqlite3"
    clock = Clock(_T - timedelta(days=30))
    with open_store(first, clock=clock) as store:
        ids = curate(
            store,
            [
                {"type": "add", "content": "Pin npm to 11 in release jobs", "tags": ["ci"]},
                {"type": "add", "content": "AVOID: npm install in release jobs"},
                {"type": "add", "content": "Cache the npm folder in CI", "scope": "workspace",
                 "scope_key": "web"},
            ],
        ).added  # fmt: skip
        for bid in ids:
            clock.advance(days=3)
            curate(store, [{"type": "helpful", "bullet_id": bid}])
    second = tmp_path / "b.sqlite3"
    second.write_bytes(first.read_bytes())
    return first, second, ids[0]


MARKS = [
    ["mark", "{id}", "helpful"],
    ["mark", "{id}", "harmful", "--reason", "outdated", "--context", "broke it", "--json"],
    ["mark", "--json", "{id}", "helpful", "--session=s-1"],
    ["mark", "b-missing", "helpful"],
    ["mark", "b-missing", "helpful", "--json"],
    ["mark", "{id}", "meh"],
    ["mark", "{id}", "helpful", "--reason", "outdated"],
    ["mark", "{id}", "harmful", "--reason", "bogus"],
]


def _writes_the_same_either_way(
    argv: list[str], two_copies: tuple[Path, Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """`argv` (`{id}` for the rule) through the full command line on one copy, through the
    fast path on the other: the same exit code and output, and the copies end up the same."""
    from playbook.store.testing import dump

    first, second, bid = two_copies
    line = [a.replace("{id}", bid) for a in argv]
    full, fast = _both_ways(
        ["--db", str(first), *line], capsys, fast_argv=["--db", str(second), *line]
    )
    code, out, err = full
    assert fast == (
        code,
        out.replace(str(first), str(second)),
        err.replace(str(first), str(second)),
    )
    with open_store(first, mode="read") as a, open_store(second, mode="read") as b:
        assert dump(a) == dump(b)


@pytest.mark.parametrize("argv", MARKS)
def test_a_mark_runs_the_same_either_way(
    argv: list[str],
    two_copies: tuple[Path, Path, str],
    pinned: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _writes_the_same_either_way(argv, two_copies, capsys)


OUTCOMES = [
    ["outcome", "success", "{id}"],
    ["outcome", "partial", "{id}", "{id}", "b-missing", "--receipt", "job-1", "--json"],
    ["outcome", "--json", "failure", "{id}", "--context=ci broke", "--session", "s-1"],
    ["outcome", "meh", "{id}"],
    ["outcome", "success", "b-missing", "--json"],
    ["outcome", "success", "{id}", "--session", "x" * 5000],
]


@pytest.mark.parametrize("argv", OUTCOMES)
def test_an_outcome_runs_the_same_either_way(
    argv: list[str],
    two_copies: tuple[Path, Path, str],
    pinned: None,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import playbook.curation.outcomes as outcomes

    monkeypatch.setattr(outcomes, "new_batch_id", lambda: "batch-2")
    _writes_the_same_either_way(argv, two_copies, capsys)


RECALLS = [
    ["recall", "npm release"],
    ["recall", "npm release", "--json", "-n", "1"],
    ["recall", "--limit=2", "npm", "--scope", "workspace:web", "--scope=language:go", "--json"],
    ["recall", "npm", "--as-of", "2026-10-20", "--json"],
    ["recall", "npm", "--as-of", "not a date"],
    ["recall", "the", "--json"],
    ["recall", "npm cache", "--semantic", "--json"],
]


@pytest.mark.parametrize("argv", RECALLS)
def test_a_recall_runs_the_same_either_way(
    argv: list[str],
    two_copies: tuple[Path, Path, str],
    pinned: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first, _, _ = two_copies
    full, fast = _both_ways(["--db", str(first), *argv], capsys)
    assert fast == full


# ------------------------------------------------------------------ --help from typer's kept text

_HELP = """
import sys
from playbook.launcher import run
sys.argv = ["playbook", *sys.argv[1:]]
try:
    run()
except SystemExit as done:
    print(repr(("typer" in sys.modules, done.code)), file=sys.stderr)
"""


def _launch_help(argv: list[str], cache: Path) -> tuple[str, bool, int]:
    """(stdout, whether typer was loaded, exit code) of a fresh `playbook ARGV`."""
    proc = subprocess.run(
        [sys.executable, "-c", _HELP, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "", "XDG_CACHE_HOME": str(cache), "COLUMNS": "72"},
    )
    loaded, code = eval(proc.stderr.strip().splitlines()[-1])
    return proc.stdout, loaded, code


def test_help_is_typers_text_rendered_once_then_kept(tmp_path: Path) -> None:
    # typer's own help, in a fresh interpreter (in this one, the order of the commands
    # depends on which command module a test imported first)
    typers = subprocess.run(
        [sys.executable, "-c", "from playbook.cli import main; main(['--help'])"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "", "COLUMNS": "72"},
    ).stdout
    assert "Usage: playbook" in typers and "recall" in typers
    first = _launch_help(["--help"], tmp_path)
    assert first == (typers, True, 0)  # rendered by typer, and kept
    assert len(list((tmp_path / "playbook").glob("help-72-*.json"))) == 1
    assert _launch_help(["--help"], tmp_path) == (typers, False, 0)  # the kept text
    assert _launch_help(["-h"], tmp_path) == (typers, False, 0)


def test_kept_help_into_a_closed_pipe_exits_quietly(tmp_path: Path) -> None:
    """`playbook --help | head -0`: the contract of every command (exit 1, no traceback),
    whether the help is rendered or kept."""
    env = {"PYTHONPATH": str(SRC), "PATH": "", "XDG_CACHE_HOME": str(tmp_path)}
    for _ in range(2):  # rendered, then kept
        read, write = os.pipe()
        os.close(read)
        try:
            proc = subprocess.run(
                [sys.executable, "-c", "from playbook.launcher import run; run()", "--help"],
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
                env=env,
            )
        finally:
            os.close(write)
        assert (proc.returncode, proc.stderr) == (1, "")
    assert list((tmp_path / "playbook").glob("help-*.json"))


def test_kept_help_is_used_only_while_what_made_it_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playbook.cli import helptext

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    source = tmp_path / "some_module.py"
    source.write_text("X = 1\n")
    monkeypatch.setitem(sys.modules, "some_module", type(sys)("some_module"))
    sys.modules["some_module"].__file__ = str(source)
    assert helptext.cached(72) is None
    helptext.remember(72, "the kept text\n")
    assert helptext.cached(72) == "the kept text\n"
    assert helptext.cached(73) is None  # another width is rendered again
    source.write_text("X = 22\n")  # a module it was made from changed
    assert helptext.cached(72) is None
    helptext.remember(72, "rendered again\n")
    assert helptext.cached(72) == "rendered again\n"
    source.unlink()  # or went away
    assert helptext.cached(72) is None
    helptext.cache_file(72).write_text("{not json")
    assert helptext.cached(72) is None


# ------------------------------------------------------------------ a table's first page


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("include_retired", [True, False])
def test_a_first_page_is_the_top_of_the_full_read(
    store: PlaybookStore, clock: Clock, seed: int, include_retired: bool
) -> None:

    _random_history(store, clock, random.Random(seed))
    clock.advance(days=1)
    full = store.views.bullet_rows(include_retired=include_retired)
    ranked = sorted(full, key=lambda r: (-r.effective, r.seq))
    assert any(r.state == "retired" for r in full) == include_retired
    for n in (0, 1, 7, len(full), len(full) + 5):
        assert store.views.bullet_rows(include_retired=include_retired, first=n) == ranked[:n]
