"""The workspace identity: one key for a repository wherever it was cloned."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playbook.project import workspace
from playbook.project.workspace import normalise_remote, same_workspace, workspace_of


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("git@github.com:Org/Repo.git", "github.com/org/repo"),
        ("https://github.com/org/repo", "github.com/org/repo"),
        ("https://alice:s3cret@github.com/Org/Repo.git/", "github.com/org/repo"),
        ("ssh://git@github.com:22/org/repo.git", "github.com/org/repo"),
        ("git://GitHub.com/org/repo", "github.com/org/repo"),
        ("https://gitlab.example.com/grp/sub/app.git", "gitlab.example.com/grp/sub/app"),
        ("gitserver:team/app", "gitserver/team/app"),
        ("/srv/git/app.git", None),
        ("../app.git", None),
        ("file:///srv/git/app.git", None),
        ("", None),
        ("https://github.com/org/re po", None),
    ],
)
def test_every_spelling_of_a_remote_is_one_key(url: str, key: str | None) -> None:
    assert normalise_remote(url) == key


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _clone_like(folder: Path, remote: str | None, *, upstream: bool = False) -> Path:
    folder.mkdir(parents=True)
    _git(folder, "init", "-q")
    if upstream:  # named before origin: origin still wins
        _git(folder, "remote", "add", "upstream", "https://example.org/someone/fork.git")
    if remote:
        _git(folder, "remote", "add", "origin", remote)
    return folder


def test_two_clones_under_different_names_are_one_workspace(tmp_path: Path) -> None:
    a = _clone_like(
        tmp_path / "alice" / "payments", "git@github.com:Acme/Payments.git", upstream=True
    )
    b = _clone_like(tmp_path / "bob" / "pay-svc", "https://github.com/acme/payments")
    (a / "src" / "deep").mkdir(parents=True)
    wa, wb = workspace_of(a / "src" / "deep"), workspace_of(b)
    assert wa is not None and wb is not None
    assert (wa.key, wa.source, wa.name) == ("github.com/acme/payments", "remote", "payments")
    assert wb.key == wa.key and wb.name == "pay-svc"
    assert same_workspace("GitHub.com/Acme/Payments", wb)


def test_same_folder_name_different_remote_is_another_workspace(tmp_path: Path) -> None:
    a = _clone_like(tmp_path / "one" / "app", "git@github.com:acme/app.git")
    b = _clone_like(tmp_path / "two" / "app", "git@github.com:other/app.git")
    wa, wb = workspace_of(a), workspace_of(b)
    assert wa is not None and wb is not None
    assert wa.key != wb.key
    assert not same_workspace(wa.key, wb)


def test_no_remote_or_no_repository_is_the_folder_name(tmp_path: Path) -> None:
    repo = _clone_like(tmp_path / "scratch", None)
    (repo / "sub").mkdir()
    plain = tmp_path / "notes"
    plain.mkdir()
    assert workspace_of(repo / "sub") is not None
    assert workspace_of(repo / "sub").key == "scratch"  # type: ignore[union-attr]
    assert workspace_of(plain).source == "folder"  # type: ignore[union-attr]
    assert workspace_of(None) is None and workspace_of("") is None


def test_a_worktree_finds_the_shared_config(tmp_path: Path) -> None:
    repo = _clone_like(tmp_path / "main", "git@github.com:acme/app.git")
    _git(
        repo,
        "-c",
        "user.email=a@b",
        "-c",
        "user.name=a",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    )
    _git(repo, "worktree", "add", "-q", str(tmp_path / "feature"))
    w = workspace_of(tmp_path / "feature")
    assert w is not None and (w.key, w.name) == ("github.com/acme/app", "feature")


def test_a_local_path_remote_falls_back_to_the_folder(tmp_path: Path) -> None:
    repo = _clone_like(tmp_path / "tool", "/srv/git/tool.git")
    w = workspace_of(repo)
    assert w is not None and (w.key, w.source) == ("tool", "folder")


def test_a_huge_or_binary_config_is_read_within_its_bound(tmp_path: Path) -> None:
    repo = tmp_path / "big"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_bytes(
        b"\xff\x00" * (1 << 20) + b'[remote "origin"]\nurl = git@h.io:a/b\n'
    )
    w = workspace_of(repo)
    assert w is not None and w.source == "folder"  # the remote lies past the bound: not read


# ------------------------------------------------------------------ the config's lines
# The patterns `workspace` read a config's lines with before issue 31 (a hook compiled them
# on every prompt); its string methods must say what they said.
SECTION = re.compile(r'^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]')
OTHER_SECTION = re.compile(r"^\s*\[")
URL = re.compile(r"^\s*url\s*=\s*(.*?)\s*$", re.IGNORECASE)

_pieces = st.sampled_from(
    ["[", "]", '"', "\\", "remote", "url", "URL", "uRl", "=", " ", "\t", "\n", "\x0b",
     "\u00a0", "\u2028", "\x1c", "origin", "a", "\u212a", "\u0131", "#", '[remote "',
     '[ remote\t"', '[remote"', "[remote", '"]', '" ]', '\\"', "url =", " url= "]
)  # fmt: skip
_lines = st.lists(st.one_of(_pieces, st.text(max_size=3)), max_size=12).map("".join)


def check_config_line(line: str) -> None:
    section = SECTION.match(line)
    assert workspace._remote_section(line) == (section.group(1) if section else None)
    assert workspace._is_section(line) == bool(OTHER_SECTION.match(line))
    url = URL.match(line)
    assert workspace._url_value(line) == (url.group(1) if url else None)


@settings(max_examples=300, deadline=None)
@given(line=_lines)
def test_a_config_line_is_read_as_its_pattern_read_it(line: str) -> None:
    check_config_line(line)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(line=_lines)
def test_a_config_line_is_read_as_its_pattern_read_it_long(line: str) -> None:
    check_config_line(line)


def check_url_name(code_points: Iterable[int]) -> None:
    """What the pattern's IGNORECASE lets through: each letter of `url` in either case, no
    other character."""
    for i, letter in enumerate("url"):
        for c in map(chr, code_points):
            name = "url"[:i] + c + "url"[i + 1 :]
            ok = workspace._url_value(f"{name}=x") == "x"
            assert ok == bool(URL.match(f"{name}=x")), (letter, hex(ord(c)))


def test_url_is_the_name_in_any_case_and_nothing_else() -> None:
    """Over Latin-1 and every code point with a case mapping (any character IGNORECASE could
    take for a letter of `url` has one: the sweep of every code point is `-m slow`)."""
    cased = [
        n
        for n in range(0x110000)
        if n < 0x100 or (c := chr(n)).lower() != c or c.upper() != c or c.casefold() != c
    ]
    assert len(cased) > 2500
    check_url_name(cased)


@pytest.mark.slow
def test_url_is_the_name_in_any_case_and_nothing_else_over_every_code_point() -> None:
    check_url_name(range(0x110000))
