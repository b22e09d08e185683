"""Who may withdraw a request, as the Python client sees it: only the account that placed
it, as the inbox and the Rust client decide. A team member's tombstone on another's request
leaves it pending in every inbox, so a wait must not end on it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import crew, team_spool

import answer_inbox
from answer_inbox import Cancelled, TimedOut

REQUEST = {"inbox": 1, "questions": [{"id": "go", "type": "confirm", "question": "Deploy?"}]}


def test_only_the_placers_tombstone_ends_a_wait(tmp_path: Path) -> None:
    team = crew()
    if isinstance(team, str):
        pytest.skip(f"tombstones of other accounts need other accounts: {team}")
    ann, bob = team.members
    team_spool(tmp_path / "spool", team)
    placed = answer_inbox.place(REQUEST, tmp_path / "spool", id="anns")
    os.chown(Path(placed.spool, "questions", "anns.json"), ann, -1)
    tombstone = Path(placed.spool, "cancel", "anns")
    tombstone.write_bytes(b"not needed")
    tombstone.chmod(0o640)
    os.chown(tombstone, bob, -1)

    with pytest.raises(TimedOut):
        answer_inbox.wait(placed, timeout=0.2, poll_interval=0.05)

    os.chown(tombstone, ann, -1)
    with pytest.raises(Cancelled) as withdrawn:
        answer_inbox.wait(placed, timeout=0.2, poll_interval=0.05)
    assert withdrawn.value.reason == "not needed"
