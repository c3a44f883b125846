"""Only an agent's own transcripts are read, wherever the path an agent gives points."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from playbook.project.sessions import TranscriptRefused, check_transcript, session_roots


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".claude" / "projects" / "-repo").mkdir(parents=True)
    (folder / ".codex" / "sessions" / "2026" / "12" / "05").mkdir(parents=True)
    return folder


def test_claude_and_codex_transcripts_are_read(home: Path) -> None:
    claude = home / ".claude" / "projects" / "-repo" / "s1.jsonl"
    codex = home / ".codex" / "sessions" / "2026" / "12" / "05" / "rollout-x.jsonl"
    for f in (claude, codex):
        f.write_text("{}\n")
        assert check_transcript(f, env={}, home=home) == f.resolve()


def test_anything_else_is_refused_with_the_reason(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text("{}\n")
    with pytest.raises(TranscriptRefused, match="not under an agent's session folder"):
        check_transcript(outside, env={}, home=home)
    with pytest.raises(TranscriptRefused, match="not under"):
        check_transcript("/etc/passwd", env={}, home=home)
    sneaky = home / ".claude" / "projects" / "-repo" / ".." / ".." / ".." / "elsewhere.jsonl"
    with pytest.raises(TranscriptRefused, match="not under"):
        check_transcript(sneaky, env={}, home=home)
    link = home / ".claude" / "projects" / "-repo" / "link.jsonl"
    link.symlink_to(outside)
    with pytest.raises(TranscriptRefused, match="not under"):
        check_transcript(link, env={}, home=home)
    notes = home / ".claude" / "projects" / "-repo" / "notes.txt"
    notes.write_text("x")
    with pytest.raises(TranscriptRefused, match=r"not a \.jsonl"):
        check_transcript(notes, env={}, home=home)
    fifo = home / ".claude" / "projects" / "-repo" / "pipe.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(TranscriptRefused, match="not a regular file"):
        check_transcript(fifo, env={}, home=home)
    for bad in ("", "a\x00b"):
        with pytest.raises(TranscriptRefused):
            check_transcript(bad, env={}, home=home)


def test_config_dirs_and_extra_roots_come_from_the_environment(tmp_path: Path) -> None:
    env = {
        "CLAUDE_CONFIG_DIR": str(tmp_path / "cc"),
        "CODEX_HOME": str(tmp_path / "cx"),
        "PLAYBOOK_SESSION_DIRS": f"{tmp_path / 'extra'}{os.pathsep}relative/ignored",
    }
    roots = session_roots(env, home=tmp_path / "nohome")
    assert roots == [
        (tmp_path / "cc" / "projects").resolve(),
        (tmp_path / "cx" / "sessions").resolve(),
        (tmp_path / "cx" / "archived_sessions").resolve(),
        (tmp_path / "extra").resolve(),
    ]
    (tmp_path / "extra").mkdir()
    f = tmp_path / "extra" / "t.jsonl"
    f.write_text("{}\n")
    assert check_transcript(f, env=env, home=tmp_path / "nohome") == f.resolve()
