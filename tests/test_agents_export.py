"""`playbook export --format agents-md -o AGENTS.md` as a user runs it in a repository
that has its own AGENTS.md: merged, scoped to the repository, within its budget."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .helpers import store_at
from .helpers.cli import assert_user_error, run_cli

HANDWRITTEN = Path(__file__).parent / "fixtures" / "agents_md" / "handwritten.md"


def repo(tmp_path: Path, remote: str) -> Path:
    folder = tmp_path / "shop"
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def playbook(db: Path, rules: int = 3) -> list[str]:
    with store_at(db) as store:
        ids = [
            store.insert_bullet(
                f"Release rule number {n}: tag, sign and push from main", maturity="proven"
            ).id
            for n in range(rules)
        ]
        ids.append(
            store.insert_bullet(
                "Use the shop's sandbox keys", scope="workspace", scope_key="github.com/acme/shop"
            ).id
        )
        ids.append(
            store.insert_bullet(
                "Bump the blog theme", scope="workspace", scope_key="github.com/acme/blog"
            ).id
        )
    return ids


def test_the_readme_command_keeps_a_handwritten_agents_md(tmp_path: Path) -> None:
    # Regression: the export replaced the project's own AGENTS.md with the rendering.
    db = tmp_path / "pb.sqlite3"
    *_, shop, blog = playbook(db)
    folder = repo(tmp_path, "git@github.com:Acme/Shop.git")
    original = HANDWRITTEN.read_bytes()
    (folder / "AGENTS.md").write_bytes(original)
    r = run_cli("export", "--format", "agents-md", "-o", "AGENTS.md", "--json", db=db, cwd=folder)
    after = (folder / "AGENTS.md").read_bytes()
    assert after.startswith(original)
    assert shop.encode() in after and blog.encode() not in after  # this repository's rules
    data = r.data
    assert data["how"] == "appended" and data["workspace"] == "github.com/acme/shop"
    assert (data["shown"], data["eligible"]) == (4, 4) and data["bytes"] == len(after)
    assert "Claude Code reads CLAUDE.md" in r.err  # there is no CLAUDE.md here
    (folder / "CLAUDE.md").write_text("@AGENTS.md\n", encoding="utf-8")
    r = run_cli("export", "--format", "agents-md", "-o", "AGENTS.md", db=db, cwd=folder)
    assert r.rc == 0 and "already holds this block: nothing written" in r.out
    assert "CLAUDE.md" not in r.err
    # As in wvandaal/ferratomic: CLAUDE.md is a link to AGENTS.md. Writing through it
    # writes AGENTS.md; the link stays, and Claude Code reads the block through it.
    (folder / "CLAUDE.md").unlink()
    (folder / "CLAUDE.md").symlink_to("AGENTS.md")
    args = ("export", "--format", "agents-md", "-o", "CLAUDE.md", "--top", "1")
    r = run_cli(*args, db=db, cwd=folder)
    assert r.rc == 0 and "replaced the playbook block in" in r.out
    assert "(through CLAUDE.md)" in r.out
    assert (folder / "CLAUDE.md").is_symlink() and "CLAUDE.md" not in r.err
    assert (folder / "AGENTS.md").read_bytes().startswith(original)


def test_the_block_keeps_to_its_budget_and_says_how_to_recall_the_rest(tmp_path: Path) -> None:
    # Regression: the demo's export was 27 KB, most of the 32 KiB Codex reads of all docs.
    db = tmp_path / "pb.sqlite3"
    playbook(db, rules=300)
    out = tmp_path / "AGENTS.md"
    data = run_cli("export", "--format", "agents-md", "-o", out, "--json", db=db).data
    assert len(out.read_bytes()) <= 8192
    assert data["max_bytes"] == 8192 and data["block_bytes"] == len(out.read_bytes())
    # The 300 global rules; the two scoped to repositories are not this folder's.
    assert data["eligible"] == 300 and 0 < data["shown"] < 300
    text = out.read_text()
    assert f"_{data['shown']} of 300 rules are shown here, best first; `playbook" in text
    data = run_cli(
        "export", "--format", "agents-md", "-o", out, "--max-bytes", "3000", "--json", db=db
    ).data
    assert data["how"] == "replaced" and data["block_bytes"] <= 3000
    data = run_cli("export", "--format", "agents-md", "--top", "2", "--json", db=db).data
    assert data["shown"] == 2


def test_a_file_over_what_codex_reads_is_pointed_out(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    playbook(db)
    out = tmp_path / "AGENTS.md"
    out.write_text("# Notes\n" + "Long hand-written guidance.\n" * 1300, encoding="utf-8")
    r = run_cli("export", "--format", "agents-md", "-o", out, db=db)
    assert r.rc == 0 and "Codex reads at most 32 KiB" in r.err


def test_bad_requests_change_nothing(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    playbook(db)
    out = tmp_path / "AGENTS.md"
    out.write_text("# Mine\n<!-- playbook:begin -->\nhalf a block\n", encoding="utf-8")
    r = run_cli("export", "--format", "agents-md", "-o", out, "--json", db=db)
    err = assert_user_error(r, "file_error")
    assert "playbook:begin on line 2" in err["message"]
    assert out.read_text() == "# Mine\n<!-- playbook:begin -->\nhalf a block\n"
    r = run_cli("export", "--format", "agents-md", "--max-bytes", "200", "--json", db=db)
    assert "is below the" in assert_user_error(r, "invalid_input")["message"]
    r = run_cli("export", "--format", "json", "--top", "3", "--json", db=db)
    assert assert_user_error(r, "usage", 2)


def test_a_link_out_of_the_folder_is_one_line_and_a_fifo_beside_is_no_hang(
    tmp_path: Path,
) -> None:
    db = tmp_path / "pb.sqlite3"
    playbook(db)
    folder = repo(tmp_path, "git@github.com:Acme/Shop.git")
    theirs = tmp_path / "dotfiles" / "AGENTS.md"
    theirs.parent.mkdir()
    theirs.write_bytes(b"# kept elsewhere\n")
    (folder / "AGENTS.md").symlink_to(theirs)
    r = run_cli("export", "--format", "agents-md", "-o", "AGENTS.md", db=db, cwd=folder)
    assert r.rc == 1 and "outside its folder" in r.err and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert theirs.read_bytes() == b"# kept elsewhere\n"
    # Regression: a CLAUDE.md that is a FIFO was read to look for '@AGENTS.md': a hang.
    (folder / "AGENTS.md").unlink()
    os.mkfifo(folder / "CLAUDE.md")
    r = run_cli("export", "--format", "agents-md", "-o", "AGENTS.md", db=db, cwd=folder)
    assert r.rc == 0 and "Claude Code reads CLAUDE.md" in r.err
