"""The spool as the client treats it: found where the command line finds it, created
private, refused when it is not a spool, written atomically and never overwritten."""

from __future__ import annotations

import grp
import os
import stat
from pathlib import Path

import pytest
from conftest import Inbox, confirm_request

import answer_inbox
from answer_inbox import NotASpool, RequestExists, UnsafeSpool
from answer_inbox.spool import MARKER, MARKER_TEXT


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_new_spool_is_private_marked_and_read_by_the_inbox(inbox: Inbox) -> None:
    old_umask = os.umask(0o022)  # Modes are set whatever the umask.
    try:
        placed = answer_inbox.place(confirm_request(), inbox.spool, id="first")
    finally:
        os.umask(old_umask)
    root = Path(inbox.spool)
    assert sorted(os.listdir(root)) == sorted([MARKER, "answers", "cancel", "questions", "tmp"])
    assert (root / MARKER).read_text() == MARKER_TEXT
    for directory in [root, *(root / name for name in ("answers", "cancel", "questions", "tmp"))]:
        assert mode(directory) == 0o700, directory
    request = Path(placed.request_path)
    assert mode(request) == 0o600
    assert os.stat(request).st_nlink == 1
    assert os.listdir(root / "tmp") == [], "the temp name is removed once linked"

    assert '"id": "first"' in inbox.ok("list", "--json").stdout


def test_an_id_is_never_taken_twice(inbox: Inbox) -> None:
    first = answer_inbox.place(confirm_request(title="first"), inbox.spool, id="once")
    kept = Path(first.request_path).read_bytes()
    with pytest.raises(RequestExists) as raised:
        answer_inbox.place(confirm_request(title="second"), inbox.spool, id="once")
    assert raised.value.id == "once"
    assert Path(first.request_path).read_bytes() == kept
    assert os.listdir(Path(inbox.spool, "tmp")) == []


def test_text_is_placed_byte_for_byte(inbox: Inbox) -> None:
    text = (
        '{"inbox": 1, "id": "exact",  "questions": '
        '[{"id": "go", "question": "Go?", "type": "confirm"}]}'
    )
    placed = answer_inbox.place(text, inbox.spool)
    assert placed.id == "exact"
    assert Path(placed.request_path).read_text() == text


def test_a_directory_that_is_not_a_spool_is_refused_untouched(inbox: Inbox, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("my project")
    (project / "questions").mkdir()
    with pytest.raises(NotASpool) as raised:
        answer_inbox.place(confirm_request(), str(project))
    assert raised.value.entry == "README.md"
    assert sorted(os.listdir(project)) == ["README.md", "questions"], "nothing created"
    assert os.listdir(project / "questions") == []

    refused = inbox.run("list", "--spool", str(project), spool=False)
    assert refused.returncode != 0 and "is not a spool" in refused.stderr, "the inbox agrees"


def test_a_symlinked_spool_or_subdirectory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    answer_inbox.place(confirm_request(), str(real))
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(UnsafeSpool, match="symbolic link"):
        answer_inbox.place(confirm_request(), str(link))
    with pytest.raises(UnsafeSpool, match="symbolic link"):
        answer_inbox.place(confirm_request(), str(link) + "/")

    swapped = tmp_path / "swapped"
    answer_inbox.place(confirm_request(), str(swapped))
    (swapped / "answers").rmdir()
    (swapped / "answers").symlink_to(tmp_path)
    with pytest.raises(UnsafeSpool) as raised:
        answer_inbox.place(confirm_request(), str(swapped))
    assert raised.value.path == str(swapped / "answers")


def test_a_file_is_not_a_spool(tmp_path: Path) -> None:
    file = tmp_path / "spool"
    file.write_text("")
    with pytest.raises(UnsafeSpool, match="not a directory"):
        answer_inbox.place(confirm_request(), str(file))


def test_an_empty_directory_becomes_a_spool(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir(mode=0o755)
    answer_inbox.place(confirm_request(), str(empty))
    assert (empty / MARKER).is_file()
    assert mode(empty) == 0o755, "an existing directory's mode is the owner's business"


def test_a_team_directory_gets_files_its_group_can_read(inbox: Inbox) -> None:
    root = Path(inbox.spool)
    root.mkdir()
    os.chmod(root, 0o2770)
    group = grp.getgrgid(os.stat(root).st_gid).gr_name
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    for name in ("answers", "cancel", "questions", "tmp"):
        assert mode(root / name) == 0o2770, name
    request = Path(placed.request_path)
    assert mode(request) == 0o640
    assert os.stat(request).st_gid == os.stat(root).st_gid

    inbox.ok("--team", group, "answer", placed.id, "--set", "go=yes")
    assert answer_inbox.wait(placed, timeout=10).answers == {"go": True}


def test_the_spool_named_in_the_environment_is_the_inbox_s(
    inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANSWER_INBOX_DIR", inbox.spool)
    placed = answer_inbox.place(confirm_request(), id="from-env")
    assert placed.spool == inbox.spool
    listed = inbox.run("list", "--json", spool=False, env={"ANSWER_INBOX_DIR": inbox.spool})
    assert '"id": "from-env"' in listed.stdout, listed.stderr


def test_the_default_spool_is_the_inbox_s(inbox: Inbox, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in inbox.env.items():
        if key in ("HOME", "XDG_DATA_HOME"):
            monkeypatch.setenv(key, value)
    monkeypatch.delenv("ANSWER_INBOX_DIR", raising=False)
    expected = os.path.join(inbox.env["XDG_DATA_HOME"], "answer-inbox", "spool")
    assert answer_inbox.default_spool_dir() == expected

    placed = answer_inbox.place(confirm_request(), id="by-default")
    assert placed.spool == expected
    listed = inbox.run("list", "--json", spool=False)
    assert '"id": "by-default"' in listed.stdout, listed.stderr

    # An empty ANSWER_INBOX_DIR counts as unset; a relative XDG_DATA_HOME is ignored.
    monkeypatch.setenv("ANSWER_INBOX_DIR", "")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/data")
    assert answer_inbox.default_spool_dir() == os.path.join(
        inbox.env["HOME"], ".local", "share", "answer-inbox", "spool"
    )
