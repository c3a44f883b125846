"""`playbook demo`: the cached demo, a first screen that does not wait for the build, a
terminal closed under it, and what the README says about it."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import ProgressBar

from playbook.demo.cache import (
    DEMO_FILE,
    MAX_AGE_SECONDS,
    build_cached_demo,
    cache_root,
    cached_demo,
    copy_demo,
    demo_folder,
)
from playbook.demo.diary import HOOK_SESSION_NAME
from playbook.review import queue
from playbook.tui.demo_app import DemoWorkbench

from .helpers import store_at
from .helpers.cli import SRC
from .helpers.tui import async_test, screen_lines, wait_for

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[float]]:
    """A cache root with the demo made in it (the build shipped with the package, dated
    now: `test_demo_template` holds it to the builder)."""
    root = tmp_path_factory.mktemp("cache") / "playbook"
    stale = root / "demo-0000000000000000"  # a demo of another version or content
    stale.mkdir(parents=True)
    (stale / DEMO_FILE).write_bytes(b"old")
    seen: list[float] = []
    info = build_cached_demo(root, progress=lambda fraction, what: seen.append(fraction))
    return root, info.path, seen


def test_the_demo_is_built_once_into_the_cache_and_found_again(cache) -> None:
    root, path, seen = cache
    assert path == demo_folder(root) / DEMO_FILE and path.is_file()
    assert not (root / "demo-0000000000000000").exists()  # other demos are removed
    assert not list(path.parent.glob("*.partial*"))
    assert cached_demo(root) == path
    assert cached_demo(root, now=path.stat().st_mtime + MAX_AGE_SECONDS + 1) is None
    assert seen == [0.0]  # restored from the shipped build: one report, no replay
    store = store_at(path)
    diary = path.parent / "session-release-flake.md"
    hook_session = path.parent / HOOK_SESSION_NAME
    refs = {p.provenance.session_ref for p in queue.pending(store)}
    assert refs == {str(diary), str(hook_session)}  # the reflected diary and the hook's session


def test_cache_root_follows_xdg(tmp_path: Path) -> None:
    assert cache_root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "playbook"
    assert cache_root({"XDG_CACHE_HOME": "relative"}) == Path.home() / ".cache" / "playbook"
    assert cache_root({}) == Path.home() / ".cache" / "playbook"


def test_no_demo_event_is_later_than_the_stores_clock(cache) -> None:
    _, path, _ = cache
    built = datetime.fromtimestamp(path.stat().st_mtime, UTC)  # the build's "now" is before
    store = store_at(path)
    latest = max(e.at for b in store.bullets() for e in store.timeline(b.id))
    assert latest <= built
    assert latest <= max(p.created_at for p in queue.pending(store))  # before the reflection
    assert built - latest < timedelta(days=2)  # and the history runs up to recent days


def _demo_app(path: Path, source: Path, gate: threading.Event) -> DemoWorkbench:
    def prepare(progress) -> None:
        progress(0.25, "replaying March")
        assert gate.wait(20)
        copy_demo(source, path)

    return DemoWorkbench(path, prepare=prepare, label=f"demo: {path}", poll_seconds=0.2)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@async_test
async def test_the_frame_paints_at_once_and_fills_in_when_the_demo_is_ready(
    cache, tmp_path: Path, size
) -> None:
    _, source, _ = cache
    path = tmp_path / "demo.sqlite3"
    gate = threading.Event()
    app = _demo_app(path, source, gate)
    async with app.run_test(size=size) as pilot:
        bar = app.query_one("#building-bar", ProgressBar)
        await wait_for(pilot, lambda: bar.progress == 25)
        lines = screen_lines(app)
        assert any("Bullets" in line and "Blocked" in line for line in lines)  # the frame
        assert any("replaying March" in line for line in lines)
        # The demo says where its database is (here a long test path: at 80 columns its
        # middle gives way, the start and the file name stay).
        if size[0] < 100:
            assert f"demo: {str(path)[:8]}" in lines[0] and "…" in lines[0]
            assert lines[0].split("…")[1].split()[0].endswith("/demo.sqlite3")
        else:
            assert str(path) in lines[0]
        assert app.loads == 0 and not path.exists()  # nothing read or created before it is
        gate.set()
        await wait_for(pilot, lambda: app.loads >= 1)
        assert app.bullets_pane.table.row_count > 300
        assert not app.query_one("#building").display


def _run_demo(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[bytes], list[bytes]]:
    """`playbook demo` in a pseudo-terminal of 100x30, its output drained into a list."""
    master, slave = pty.openpty()
    os.set_blocking(master, False)
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-c", "from playbook.cli import run; run()", "demo", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    out: list[bytes] = []

    def drain() -> None:
        while True:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                out.append(chunk)
            elif proc.poll() is not None:
                break
        os.close(master)

    threading.Thread(target=drain, daemon=True).start()
    proc.master = master  # type: ignore[attr-defined]
    return proc, out


def _env(tmp_path: Path, cache_root_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAYBOOK_")}
    env.update(
        PYTHONPATH=SRC,
        TERM="xterm-256color",
        TMPDIR=str(tmp_path),
        XDG_CACHE_HOME=str(cache_root_dir.parent),
    )
    return env


def _wait(predicate, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {predicate}")


def _demo_folders(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("playbook-demo-*"))


def test_a_demo_ended_by_sighup_leaves_no_folder_behind(cache, tmp_path: Path) -> None:
    root, _, _ = cache
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc, _ = _run_demo([], _env(tmp, root))
    try:
        _wait(lambda: any((f / "demo.sqlite3").exists() for f in _demo_folders(tmp)))
        os.killpg(proc.pid, signal.SIGHUP)  # the terminal closed
        assert proc.wait(30) == -signal.SIGHUP
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _demo_folders(tmp) == []


def test_keep_keeps_the_demo_and_says_where(cache, tmp_path: Path) -> None:
    root, _, _ = cache
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc, out = _run_demo(["--keep"], _env(tmp, root))
    try:
        _wait(lambda: b"live" in b"".join(out))  # the workbench shows the demo
        os.write(proc.master, b"q")  # type: ignore[attr-defined]
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    time.sleep(0.3)
    (folder,) = _demo_folders(tmp)
    kept = folder / "demo.sqlite3"
    assert kept.is_file()
    text = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", b"".join(out)).decode("utf-8", "replace")
    assert f"demo playbook kept at {kept}" in text


def test_readme_numbers_about_the_demo_are_true(cache) -> None:
    """Any count the README's workbench section gives for the demo matches the demo."""
    _, path, _ = cache
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The workbench", 1)[1].split("\n## ", 1)[0]
    store = store_at(path)
    facts = {
        "rules": sum(1 for b in store.bullets() if b.state != "retired"),
        "bullets": sum(1 for b in store.bullets() if b.state != "retired"),
        "proposals": queue.count_pending(store),
        "conflicts": len(store.conflicts()),
        "blocked patterns": len(store.blocked()),
        "feedback events": store.event_count(),
    }
    claims = re.findall(
        r"(\d[\d,]*)\s+(rules|bullets|proposals|conflicts|blocked patterns|"
        r"feedback events)",
        section,
    )
    for number, noun in claims:
        assert int(number.replace(",", "")) == facts[noun], (number, noun)
    assert "--keep" in section  # documented where the demo is described
