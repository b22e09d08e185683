"""Withdrawing a question: the tombstone, what the inbox makes of it, and the rule that an
outcome written first always stands."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, Dict

import pytest
from conftest import Inbox, confirm_request

import answer_inbox
from answer_inbox import CancelToken, Cancelled


def test_withdrawing_places_the_tombstone_and_the_inbox_takes_it_off_the_list(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    assert answer_inbox.withdraw(placed, "the build was aborted") is None

    tombstone = Path(placed.tombstone_path)
    assert tombstone.read_text() == "the build was aborted"
    assert oct(tombstone.stat().st_mode & 0o777) == oct(0o600)
    assert os.listdir(Path(inbox.spool, "tmp")) == []
    with pytest.raises(Cancelled) as raised:
        answer_inbox.wait(placed, timeout=30)
    assert raised.value.reason == "the build was aborted"

    assert placed.id not in inbox.ok("list", "--json").stdout
    refused = inbox.run("answer", placed.id, "--set", "go=yes")
    assert refused.returncode == 3, refused.stderr
    assert not Path(placed.outcome_path).exists(), "no outcome for a withdrawn request"


def test_withdrawing_twice_is_harmless(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    assert answer_inbox.withdraw(placed, "first") is None
    assert answer_inbox.withdraw(placed, "second") is None
    assert Path(placed.tombstone_path).read_text() == "first"


def test_an_outcome_written_first_stands_and_no_tombstone_is_placed(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    inbox.decline(placed.id, "no")
    outcome = answer_inbox.withdraw(placed, "too late")
    assert outcome is not None and outcome.status == "declined"
    assert not Path(placed.tombstone_path).exists()
    with pytest.raises(answer_inbox.Declined):
        outcome.raise_for_status()


def test_a_cancel_token_withdraws_a_waiting_ask_at_once(inbox: Inbox) -> None:
    token = CancelToken()
    result: Dict[str, Any] = {}

    def asker() -> None:
        try:
            answer_inbox.ask(
                confirm_request(id="waiting"), spool=inbox.spool, cancel=token, poll_interval=30
            )
        except Cancelled as cancelled:
            result["cancelled"] = cancelled
            result["at"] = time.monotonic()

    thread = threading.Thread(target=asker)
    thread.start()
    question = Path(inbox.spool, "questions", "waiting.json")
    deadline = time.monotonic() + 20
    while not question.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert token.cancel("the run was aborted")
    cancelled_at = time.monotonic()
    assert not token.cancel("a second reason"), "only the first cancel counts"
    thread.join(timeout=30)

    # The poll interval is 30 s: only the token's wake-up explains a prompt return.
    assert result["at"] - cancelled_at < 5
    assert result["cancelled"].reason == "the run was aborted"
    assert Path(inbox.spool, "cancel", "waiting").read_text() == "the run was aborted"


def test_a_token_cancelled_before_asking_places_nothing(inbox: Inbox) -> None:
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        answer_inbox.ask(confirm_request(id="never"), spool=inbox.spool, cancel=token)
    assert not Path(inbox.spool, "questions", "never.json").exists()


def test_a_withdrawal_by_someone_else_ends_the_wait(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    inbox.ok("cancel", placed.id)
    with pytest.raises(Cancelled) as raised:
        answer_inbox.wait(placed, timeout=30)
    assert raised.value.id == placed.id
