"""Fixtures: a temporary spool per test, and the real ``answer-inbox`` binary as the
operator's side.

The binary comes from ``$ANSWER_INBOX_BIN``, else ``$CARGO_TARGET_DIR/debug/answer-inbox``,
else ``target/debug/answer-inbox`` in the repository. It runs with a home, data and config
directory of the test's own, so no operator's policy, database or spool on this machine
takes part.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple, Union

import pytest

CLIENT_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = CLIENT_DIR.parent.parent

# The package under test is the working tree's, not whatever may be installed.
sys.path.insert(0, str(CLIENT_DIR / "src"))

if TYPE_CHECKING:  # pragma: no cover - for type hints only
    from answer_inbox import Placed


def binary_path() -> Path:
    named = os.environ.get("ANSWER_INBOX_BIN")
    if named:
        return Path(named)
    target = os.environ.get("CARGO_TARGET_DIR")
    # Cargo takes a relative CARGO_TARGET_DIR from where it runs: the repository.
    base = Path(target) if target else Path("target")
    if not base.is_absolute():
        base = REPO_DIR / base
    return base / "debug" / "answer-inbox"


@pytest.fixture(scope="session")
def binary() -> Path:
    path = binary_path()
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(
            f"the answer-inbox binary is not at {path}: build it first "
            "(cargo build -p answer-inbox) or set ANSWER_INBOX_BIN"
        )
    return path


class Inbox:
    """The operator's side of one test's spool: the real ``answer-inbox`` commands."""

    def __init__(self, binary: Path, base: Path) -> None:
        self.binary = binary
        self.base = base
        self.spool = str(base / "spool")
        self.db = str(base / "inbox.sqlite3")
        self.home = base / "home"
        self.env = isolated_env(self.home)

    def run(
        self, *args: str, spool: bool = True, env: Optional[Dict[str, str]] = None
    ) -> "subprocess.CompletedProcess[str]":
        """Runs ``answer-inbox [--spool S] --db D ARGS`` (with ``env`` added to its
        environment) and returns what it did."""
        where = ["--spool", self.spool] if spool else []
        return subprocess.run(
            [str(self.binary), *where, "--db", self.db, *args],
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    def ok(self, *args: str) -> "subprocess.CompletedProcess[str]":
        done = self.run(*args)
        assert done.returncode == 0, f"answer-inbox {' '.join(args)}: {done.stderr}"
        return done

    def answer(self, id: str, **answers: str) -> Dict[str, Any]:
        """``answer ID --set q=v ...``; returns the outcome it wrote."""
        sets: List[str] = []
        for question, value in answers.items():
            sets += ["--set", f"{question}={value}"]
        return json.loads(self.ok("answer", id, *sets).stdout)

    def decline(self, id: str, reason: str) -> Dict[str, Any]:
        return json.loads(self.ok("answer", id, "--decline", reason).stdout)

    @contextmanager
    def watching(self) -> Iterator["subprocess.Popen[bytes]"]:
        """``answer-inbox watch`` running for the block: it settles expiry, autonomous
        mode and invalid requests. Stopped (by its own pid) afterwards."""
        process = subprocess.Popen(
            [str(self.binary), "--spool", self.spool, "--db", self.db, "watch", "--no-notify"],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def outcome_file(self, id: str) -> Optional[Dict[str, Any]]:
        path = Path(self.spool, "answers", f"{id}.json")
        return json.loads(path.read_text()) if path.exists() else None


def isolated_env(home: Path) -> Dict[str, str]:
    """This process's environment without any Answer Inbox setting, and with a home of
    the test's own (the XDG data and config directories in it)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("ANSWER_INBOX_") and not key.startswith("XDG_")
    }
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    env["HOME"] = str(home)
    env["XDG_DATA_HOME"] = str(home / "data")
    env["XDG_CONFIG_HOME"] = str(home / "config")
    return env


@pytest.fixture
def inbox(binary: Path, tmp_path: Path) -> Inbox:
    return Inbox(binary, tmp_path)


def wait_until(condition: Any, timeout: float = 20.0, what: str = "the condition") -> None:
    """Polls ``condition()`` until it is true; fails the test after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def confirm_request(**fields: Any) -> Dict[str, Any]:
    """An envelope with one yes/no question, ``go``."""
    request: Dict[str, Any] = {
        "inbox": 1,
        "title": "Deploy billing 2.14",
        "questions": [{"id": "go", "question": "Deploy to production now?", "type": "confirm"}],
    }
    request.update(fields)
    return request


#: The ``request_sha256`` of :func:`outcome_file`.
OUTCOME_SHA = "ab" * 32


def outcome_file(**changes: Any) -> Dict[str, Any]:
    """The fields of an outcome file as an inbox writes them for a person's answer (``go``:
    yes) to request ``r``, with ``changes``; a field changed to ``...`` is left out."""
    written: Dict[str, Any] = {
        "inbox": 1,
        "id": "r",
        "status": "answered",
        "answers": {"go": True},
        "custom": [],
        "defaulted": [],
        "answered_by": "operator:ann",
        "answered_at": "2026-12-03T10:42:17Z",
        "request_sha256": OUTCOME_SHA,
        "instance": "h/i",
    }
    written.update(changes)
    return {key: value for key, value in written.items() if value is not ...}


#: The OS accounts of the tests about who wrote an outcome file: two members of one team
#: group and an account outside it, the same as the Rust tests'
#: (crates/client/tests/accounts.rs), created when missing and reused afterwards.
CREW_GROUP = "inbox-crew"
CREW_MEMBERS = ("inbox-crew-ann", "inbox-crew-bob")
OUTSIDER = "inbox-stranger"


@dataclass(frozen=True)
class Crew:
    """The accounts, as this machine numbers them."""

    gid: int
    members: Tuple[int, int]
    outsider: int


_crew: Dict[str, Crew] = {}


def crew() -> Union[Crew, str]:
    """The accounts, created when missing, or why there are none: not root (only root can
    create accounts and give files away). As root, failing to create them is an error of
    the test: the cases that need them are never left out quietly."""
    if os.geteuid() != 0:
        return "not running as root, so it cannot create accounts or give files away"
    if "crew" not in _crew:
        _crew["crew"] = _ensure_crew()
    return _crew["crew"]


def _ensure_crew() -> Crew:
    # -f: the group may exist already, or another test process may create it meanwhile.
    _account_tool("groupadd", "-f", CREW_GROUP)
    members = (_ensure_account(CREW_MEMBERS[0], True), _ensure_account(CREW_MEMBERS[1], True))
    outsider = _ensure_account(OUTSIDER, False)
    gid = grp.getgrnam(CREW_GROUP).gr_gid
    assert OUTSIDER not in grp.getgrgid(gid).gr_mem, f"{OUTSIDER} must stay outside {CREW_GROUP}"
    return Crew(gid, members, outsider)


def _ensure_account(name: str, member: bool) -> int:
    try:
        pwd.getpwnam(name)
    except KeyError:
        # No home, no login: these accounts only own files.
        args = ["--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin"]
        args += ["--user-group", *(["--groups", CREW_GROUP] if member else []), name]
        try:
            _account_tool("useradd", *args)
        except subprocess.CalledProcessError:
            pwd.getpwnam(name)  # another test process created it meanwhile, or KeyError
    if member and name not in grp.getgrnam(CREW_GROUP).gr_mem:
        _account_tool("usermod", "--append", "--groups", CREW_GROUP, name)
    return pwd.getpwnam(name).pw_uid


def _account_tool(*args: str) -> None:
    """Runs an account tool, again a few times when it fails: ``useradd`` and ``groupadd``
    refuse to work while another process holds the account database's lock."""
    # Root's tools are in the sbin directories, which are not always on PATH.
    places = (f"{directory}/{args[0]}" for directory in ("/usr/sbin", "/sbin", "/usr/bin"))
    tool = next((place for place in places if os.path.isfile(place)), args[0])
    for _ in range(10):
        done = subprocess.run([tool, *args[1:]], capture_output=True, stdin=subprocess.DEVNULL)
        if done.returncode == 0:
            return
        time.sleep(0.2)
    done.check_returncode()


def team_spool(root: Path, team: Crew) -> None:
    """A team directory of the crew's group at ``root``, which the client takes for a team
    spool: the files of the group's members are read, anyone else's are not."""
    root.mkdir()
    os.chown(root, -1, team.gid)
    root.chmod(0o2770)


def write_outcome(placed: "Placed", data: bytes) -> None:
    """Places an outcome file the way an inbox does: one name, this account's, 0600."""
    tmp = Path(placed.spool, "tmp", f"{placed.id}.forged")
    tmp.write_bytes(data)
    tmp.chmod(0o600)
    os.link(tmp, placed.outcome_path)
    tmp.unlink()
