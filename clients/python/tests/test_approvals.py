"""An outcome's approvals (docs/TEAMS.md), checked as ``inbox_protocol::approval``'s unit
tests check them: each refusal of ``verify_approvals``, in its words. The corpus
(test_corpus.py) runs the same refusals with real files of real accounts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional, Tuple

import pytest
from conftest import OUTCOME_SHA, outcome_file

import answer_inbox
from answer_inbox import Approval, parse_outcome, verify_approvals
from answer_inbox.approval import parse_approval


def approval(by: str, sha: str = OUTCOME_SHA, go: bool = True) -> Approval:
    return parse_approval(
        json.dumps(
            {
                "inbox": 1,
                "id": "r",
                "request_sha256": sha,
                "approved_by": f"operator:{by}",
                "approved_at": "2026-12-03T10:42:00Z",
                "answers": {"go": go},
                "surface": "cli",
                "instance": "h/i",
            }
        ).encode()
    )


def outcome(by: str, approvers: Tuple[str, ...], **changes: object) -> answer_inbox.Outcome:
    listed = [{"by": f"operator:{a}", "at": "2026-12-03T10:42:00Z"} for a in approvers]
    written = outcome_file(answered_by=f"operator:{by}", approvals=listed, **changes)
    return parse_outcome(json.dumps(written).encode(), "r")


def honest(account: str) -> Tuple[Approval, Optional[str], int]:
    """Files as each account wrote them, for the current version."""
    return approval(account), account, 1


def test_two_distinct_owners_of_their_files_stand() -> None:
    assert verify_approvals(outcome("ann", ("ann", "bob")), honest) is None


def test_an_outcome_without_approvals_passes() -> None:
    plain = parse_outcome(json.dumps(outcome_file()).encode(), "r")
    assert plain.approvals is None
    assert verify_approvals(plain, honest) is None


def test_the_same_account_twice_is_refused() -> None:
    refusal = verify_approvals(outcome("ann", ("ann", "ann")), honest)
    assert refusal == "operator:ann is listed as approving twice; an account counts once"


def test_an_approval_file_written_by_another_account_is_refused() -> None:
    refusal = verify_approvals(
        outcome("ann", ("ann", "bob")), lambda account: (approval(account), "mallory", 7)
    )
    assert refusal == (
        "the approval of operator:ann: it says operator:ann approved, but the file was "
        "written by mallory"
    )
    unknown = verify_approvals(
        outcome("ann", ("ann", "bob")), lambda account: (approval(account), None, 4242)
    )
    assert unknown is not None and unknown.endswith("written by uid 4242"), unknown


def test_an_approval_of_an_older_version_does_not_count() -> None:
    refusal = verify_approvals(
        outcome("ann", ("ann", "bob")), lambda account: (approval(account, "cd" * 32), account, 1)
    )
    assert refusal == (
        "the approval of operator:ann: operator:ann approved another version of the request "
        "(request_sha256 cdcdcdcdcdcd), not the one it asks now; an approval counts only for "
        "the version it was given to"
    )


def test_other_answers_a_missing_file_and_an_outside_writer_are_refused() -> None:
    other = verify_approvals(
        outcome("ann", ("ann", "bob")),
        lambda account: (approval(account, go=False), account, 1),
    )
    assert other == "operator:ann approved other answers than the outcome carries"

    def missing(account: str) -> Tuple[Approval, Optional[str], int]:
        raise ValueError("the file does not exist")

    assert verify_approvals(outcome("ann", ("ann", "bob")), missing) == (
        "the approval of operator:ann: the file does not exist"
    )
    assert verify_approvals(outcome("carol", ("ann", "bob")), honest) == (
        "it was written by operator:carol answering, who is not among its approvers"
    )


def test_approvals_stand_only_under_an_answer() -> None:
    declined = outcome("ann", ("ann", "bob"), status="declined", reason="no", answers={})
    assert verify_approvals(declined, honest) == (
        "it is declined yet lists approvals (only an answer stands on approvals)"
    )
    assert verify_approvals(outcome("ann", ()), honest) == "it lists no approvals in its approvals"
    no_version = outcome("ann", ("ann", "bob"), request_sha256=...)
    assert verify_approvals(no_version, honest) == (
        "it does not say which version of the request it answers"
    )
    assert verify_approvals(outcome("ann", ("a+b",)), honest) == (
        'approval by "operator:a+b" names no account'
    )


def test_an_approval_of_another_request_or_no_account_is_refused() -> None:
    def elsewhere(account: str) -> Tuple[Approval, Optional[str], int]:
        found = approval(account)
        found.id = "other"
        return found, account, 1

    assert verify_approvals(outcome("ann", ("ann", "bob")), elsewhere) == (
        'the approval of operator:ann: it names request "other", not "r"'
    )

    def nobody(account: str) -> Tuple[Approval, Optional[str], int]:
        found = approval(account)
        found.approved_by = "policy:x"
        return found, account, 1

    assert verify_approvals(outcome("ann", ("ann", "bob")), nobody) == (
        'the approval of operator:ann: approved_by "policy:x" is not operator:<account>'
    )


@pytest.mark.parametrize(
    "broken, words",
    [
        (b"{", "not a valid approval"),
        (
            b'{"inbox": 2, "id": "r", "request_sha256": "ab", "approved_by": "operator:a", '
            b'"approved_at": "2026-12-03T10:42:00Z", "instance": "h/i"}',
            "unsupported approval version 2",
        ),
        (
            b'{"inbox": 1, "id": "r", "id": "s", "request_sha256": "ab", "approved_by": "x", '
            b'"approved_at": "2026-12-03T10:42:00Z", "instance": "h/i"}',
            "not a valid approval",
        ),
    ],
)
def test_a_broken_approval_file_is_no_approval(broken: bytes, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_approval(broken)


def test_a_spool_holding_approvals_and_the_team_policy_is_still_a_spool(tmp_path: Path) -> None:
    """What an inbox adds to a team spool (approvals/, team-policy.toml) is the spool's own:
    an asker that refused it as a stray could not ask in a team spool with approvals."""
    placed = answer_inbox.place(
        {"inbox": 1, "title": "t", "questions": [{"id": "go", "question": "q", "type": "confirm"}]},
        tmp_path / "spool",
    )
    (tmp_path / "spool" / "approvals").mkdir(mode=0o700)
    (tmp_path / "spool" / "team-policy.toml").write_text("")
    with pytest.raises(answer_inbox.TimedOut):
        answer_inbox.wait(placed, timeout=0)
    (tmp_path / "spool" / "stray").write_text("")
    with pytest.raises(answer_inbox.NotASpool):
        answer_inbox.wait(placed, timeout=0)


def test_an_approval_through_a_link_is_not_read(tmp_path: Path) -> None:
    """Approval files are read as outcomes are: never through a link."""
    placed = answer_inbox.place(
        {"inbox": 1, "title": "t", "questions": [{"id": "go", "question": "q", "type": "confirm"}]},
        tmp_path / "spool",
    )
    approvals = tmp_path / "spool" / "approvals"
    approvals.mkdir(mode=0o700)
    real = tmp_path / "elsewhere.json"
    real.write_text("{}")
    (approvals / f"{placed.id}+ann.json").symlink_to(real)
    with answer_inbox.spool.Spool.open(placed.spool) as spool:
        with pytest.raises(answer_inbox.spool.UnreadableFile, match="symbolic link"):
            spool.read_approval(placed.id, "ann")
        assert spool.read_approval(placed.id, "bob") is None
        assert spool.read_approval(placed.id, "a+b") is None
