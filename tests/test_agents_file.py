"""The playbook's block merged into a project's own AGENTS.md: every other byte kept, a
second export replacing only the block, broken markers refused, links and devices kept."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from playbook.core import files
from playbook.core.files import UnsafePath
from playbook.interop.agents_file import AgentsFileError, find_block, merge, write_block

HANDWRITTEN = Path(__file__).parent / "fixtures" / "agents_md" / "handwritten.md"
BLOCK = [
    "<!-- playbook:begin (managed by `playbook export --format agents-md`) -->",
    "## Playbook",
    "- Sign release tags `b-1`",
    "<!-- playbook:end -->",
]
NEWER = [*BLOCK[:2], "- Sign release tags `b-1`", "- Tag from main `b-2`", BLOCK[-1]]


def outside(data: bytes) -> tuple[bytes, bytes]:
    found = find_block(data)
    assert found is not None
    return data[: found[0]], data[found[1] :]


def test_a_new_file_holds_the_block(tmp_path: Path) -> None:
    written = write_block(tmp_path / "AGENTS.md", BLOCK)
    assert written.how == "created"
    assert (tmp_path / "AGENTS.md").read_bytes() == ("\n".join(BLOCK) + "\n").encode()
    mode = stat.S_IMODE((tmp_path / "AGENTS.md").stat().st_mode)
    assert mode == 0o666 & ~_umask()  # a file like any other, not mkstemp's 0600


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_handwritten_file_is_kept_byte_for_byte(tmp_path: Path) -> None:
    # Regression: the export replaced the whole file with the rendering.
    original = HANDWRITTEN.read_bytes()
    path = tmp_path / "AGENTS.md"
    path.write_bytes(original)
    assert write_block(path, BLOCK).how == "appended"
    first = path.read_bytes()
    assert first.startswith(original)
    # The file had no line ending after its last line: one is added, then a blank line.
    assert first[len(original) :] == b"\n\n" + "\n".join(BLOCK).encode() + b"\n"
    # The example markers inside the fenced code block are text, not the block.
    assert find_block(first) == (len(original) + 2, len(first) - 1)
    assert write_block(path, NEWER).how == "replaced"
    second = path.read_bytes()
    assert outside(second) == outside(first)
    assert "- Tag from main `b-2`" in second.decode()
    assert write_block(path, NEWER).how == "unchanged"
    assert path.read_bytes() == second


@pytest.mark.parametrize(
    "original",
    [
        b"# Notes\r\nUse tabs.\r\n",  # CRLF: the block takes it too
        "\ufeff# Notes\nUse tabs.\n".encode(),  # a byte-order mark
        b"# Notes\nCaf\xe9 in Latin-1, not UTF-8\n",  # not UTF-8: left as it is
        b"",  # empty
        b"\xef\xbb\xbf",  # a BOM alone
    ],
)
def test_the_rest_of_the_file_is_kept_whatever_its_bytes(tmp_path: Path, original: bytes) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(original)
    write_block(path, BLOCK)
    first = path.read_bytes()
    assert first.startswith(original)
    if b"\r\n" in original:
        assert ("\r\n".join(BLOCK) + "\r\n").encode() in first
        assert first.count(b"\n") == first.count(b"\r\n")  # no bare LF came in
    write_block(path, NEWER)
    assert outside(path.read_bytes()) == outside(first)


def test_text_after_the_block_is_kept(tmp_path: Path) -> None:
    before, after = b"# Top\n\n", b"\n## Written after the block by hand\n\nKeep me."
    path = tmp_path / "AGENTS.md"
    path.write_bytes(before + "\n".join(BLOCK).encode() + after)
    assert write_block(path, NEWER).how == "replaced"
    assert path.read_bytes() == before + "\n".join(NEWER).encode() + after


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        (f"# A\n{BLOCK[0]}\nno end\n", "playbook:begin on line 2"),
        (f"# A\n{BLOCK[-1]}\n{BLOCK[0]}\n", "playbook:begin on line 3, playbook:end on line 2"),
        ("\n".join([*BLOCK, *BLOCK]), "playbook:begin on line 1, playbook:begin on line 5"),
        (f"{BLOCK[-1]}\n", "playbook:end on line 1"),
    ],
)
def test_markers_that_cannot_be_paired_are_refused(tmp_path: Path, text: str, lines: str) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_text(text, encoding="utf-8")
    os.utime(path, (1_000_000_000, 1_000_000_000))
    with pytest.raises(AgentsFileError, match="cannot be paired") as refused:
        write_block(path, BLOCK)
    assert lines in str(refused.value)
    assert path.read_text(encoding="utf-8") == text and path.stat().st_mtime == 1_000_000_000
    assert [p.name for p in tmp_path.iterdir()] == ["AGENTS.md"]  # no temporary file left


def test_a_link_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"# Agents\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    written = write_block(tmp_path / "CLAUDE.md", BLOCK)
    assert written.path == (tmp_path / "AGENTS.md").resolve()
    assert written.via == tmp_path / "CLAUDE.md"
    assert (tmp_path / "CLAUDE.md").is_symlink()
    assert (tmp_path / "AGENTS.md").read_bytes().startswith(b"# Agents\n\n<!-- playbook:begin")
    (tmp_path / "LINK.md").symlink_to("NOTES.md")  # to a file not made yet, beside it
    assert write_block(tmp_path / "LINK.md", BLOCK).how == "created"
    assert (tmp_path / "LINK.md").is_symlink() and (tmp_path / "NOTES.md").is_file()


def test_a_link_out_of_its_folder_is_refused_and_nothing_written(tmp_path: Path) -> None:
    # Regression: the writer followed a link anywhere, silently: a link planted in a
    # shared checkout would have the export rewrite a file of the user's elsewhere.
    (tmp_path / "repo").mkdir()
    (tmp_path / "elsewhere").mkdir()
    theirs = tmp_path / "elsewhere" / "AGENTS.md"
    theirs.write_bytes(b"# someone else's\n")
    link = tmp_path / "repo" / "AGENTS.md"
    link.symlink_to(theirs)
    with pytest.raises(UnsafePath, match="outside its folder") as refused:
        write_block(link, BLOCK)
    assert "\n" not in str(refused.value)
    assert theirs.read_bytes() == b"# someone else's\n" and link.is_symlink()
    (tmp_path / "repo" / "docs").mkdir()  # a subfolder is out of the link's folder too
    (tmp_path / "repo" / "CLAUDE.md").symlink_to("docs/AGENTS.md")
    with pytest.raises(UnsafePath, match="outside its folder"):
        write_block(tmp_path / "repo" / "CLAUDE.md", BLOCK)
    assert list((tmp_path / "repo" / "docs").iterdir()) == []


def test_a_link_into_a_folder_not_here_is_refused(tmp_path: Path) -> None:
    # As committed in 7D-Solutions/7D-Solutions-Platform: AGENTS.md is a link to a path on
    # its author's machine. A clone's export must neither write there nor replace the link.
    link = tmp_path / "AGENTS.md"
    link.symlink_to("/Users/someone/Projects/Core/AGENTS.md")
    with pytest.raises(UnsafePath, match="in a folder this machine does not have"):
        write_block(link, BLOCK)
    assert link.is_symlink() and os.readlink(link) == "/Users/someone/Projects/Core/AGENTS.md"


def test_a_fifo_nothing_reads_is_given_up_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Regression: the writer opened the FIFO to write, which waits for a reader for ever.
    monkeypatch.setattr(files, "READER_WAIT", 0.3)
    fifo = tmp_path / "AGENTS.md"
    os.mkfifo(fifo)
    outcome: list[BaseException | str] = []

    def write() -> None:
        try:
            outcome.append(write_block(fifo, BLOCK).how)
        except BaseException as exc:  # the test reads it below
            outcome.append(exc)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(10)
    assert not writer.is_alive(), "the write is still waiting for a reader"
    assert isinstance(outcome[0], UnsafePath) and "nothing read the FIFO" in str(outcome[0])
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")
def test_a_replaced_file_keeps_its_owner_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"# Theirs\n")
    os.chown(path, 4321, 4321)
    path.chmod(0o664)
    assert write_block(path, BLOCK).how == "appended"
    after = path.stat()
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (4321, 4321, 0o664)


def test_a_device_is_written_to_not_replaced(tmp_path: Path) -> None:
    assert write_block("/dev/null", BLOCK).how == "streamed"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    assert write_block(fifo, BLOCK).how == "streamed"
    reader.join(10)
    assert got == [("\n".join(BLOCK) + "\n").encode()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_failed_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"# Mine\n")
    path.chmod(0o640)

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken)
    with pytest.raises(UnsafePath, match="No space"):
        write_block(path, BLOCK)
    assert path.read_bytes() == b"# Mine\n"
    assert [p.name for p in tmp_path.iterdir()] == ["AGENTS.md"]
    monkeypatch.undo()
    write_block(path, BLOCK)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # its permissions kept


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_a_read_only_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(b"# Mine\n")
    path.chmod(0o444)
    with pytest.raises(AgentsFileError, match="not writable"):
        write_block(path, BLOCK)
    assert path.read_bytes() == b"# Mine\n"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_bytes("# UTF-16\n".encode("utf-16")), "UTF-16"),
        (lambda p: p.write_bytes(b"\x00\x01binary"), "NUL"),
    ],
)
def test_what_cannot_take_the_block_is_refused(tmp_path: Path, make, message: str) -> None:
    path = tmp_path / "AGENTS.md"
    make(path)
    before = path.read_bytes() if path.is_file() else None
    with pytest.raises((AgentsFileError, UnsafePath), match=message):
        write_block(path, BLOCK)
    assert (path.read_bytes() if path.is_file() else None) == before


def test_merge_is_pure() -> None:
    data, how = merge(b"# A", BLOCK)
    assert how == "appended" and data.startswith(b"# A\n\n<!-- playbook:begin")
