"""Asking end to end: the client places, the real ``answer-inbox`` settles, the client
returns the outcome or raises the error that says how the question ended."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any, Dict

import pytest
from conftest import Inbox, confirm_request, wait_until

import answer_inbox
from answer_inbox import (
    Declined,
    Expired,
    NotAnswered,
    Rejected,
    SettledByPolicy,
    TimedOut,
)


def test_an_answer_comes_back_checked_and_bound_to_the_bytes_placed(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool, id="deploy-42")
    on_disk = Path(placed.request_path).read_bytes()
    assert placed.sha256 == hashlib.sha256(on_disk).hexdigest()

    written = inbox.answer("deploy-42", go="yes")
    outcome = answer_inbox.wait(placed, timeout=30)

    assert outcome.status == "answered"
    assert outcome.answers == {"go": True}
    assert outcome.request_sha256 == placed.sha256 == written["request_sha256"]
    assert outcome.by_person and outcome.decider == "person"
    assert outcome.account == written["answered_by"].split(":", 1)[1]
    assert outcome.surface == "cli"
    assert outcome.reply is None, "the inbox's own dialect has no reply"
    assert outcome.raw == written


def test_ask_blocks_until_the_operator_answers(inbox: Inbox) -> None:
    # The operator answers from another thread once the question is there, as a person
    # at the inbox would, while ask() waits.
    request = {
        "inbox": 1,
        "id": "cache-setup",
        "title": "Set up the cache layer",
        "questions": [
            {
                "label": "Backend",
                "type": "single_choice",
                "question": "Which cache backend?",
                "choices": [
                    {"id": "redis", "label": "Redis"},
                    {"id": "memcached", "label": "Memcached"},
                ],
            },
            {
                "type": "multi_choice",
                "question": "Which regions?",
                "allow_custom": False,
                "choices": [{"id": "eu", "label": "Europe"}, {"id": "us", "label": "US"}],
            },
            {"type": "free_text", "question": "Anything to watch out for?", "required": False},
        ],
    }
    question = Path(inbox.spool, "questions", "cache-setup.json")

    def operator() -> None:
        wait_until(question.exists, what="the request file")
        inbox.ok(
            "answer",
            "cache-setup",
            "--set",
            "q1=Valkey",
            "--set",
            "q2=eu",
            "--set",
            "q2=us",
            "--set",
            "q3=Staging has 512 MB at most.",
        )

    thread = threading.Thread(target=operator)
    thread.start()
    try:
        outcome = answer_inbox.ask(request, timeout=30, spool=inbox.spool)
    finally:
        thread.join()
    assert outcome.id == "cache-setup"
    assert outcome.answers == {
        "q1": "Valkey",
        "q2": ["eu", "us"],
        "q3": "Staging has 512 MB at most.",
    }
    assert outcome.custom == ["q1"], "fill-in text is marked as such"


def test_a_decline_raises_with_the_operators_reason(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    inbox.decline(placed.id, "not during the freeze")
    with pytest.raises(Declined) as raised:
        answer_inbox.wait(placed, timeout=30)
    assert raised.value.reason == "not during the freeze"
    assert raised.value.outcome.status == "declined"
    assert raised.value.outcome.answers == {}
    assert isinstance(raised.value, NotAnswered)


def test_an_expiry_the_defaults_cannot_cover_raises_expired(inbox: Inbox) -> None:
    # A required question without a default: when the second passes, `watch` expires it.
    placed = answer_inbox.place(confirm_request(timeout_seconds=1), inbox.spool)
    with inbox.watching():
        with pytest.raises(Expired) as raised:
            answer_inbox.wait(placed, timeout=30)
    outcome = raised.value.outcome
    assert outcome.status == "expired"
    assert outcome.answered_by.startswith("policy:")
    assert outcome.trigger == "expiry"
    assert outcome.reason and "no default for: go" in outcome.reason


def test_autonomous_defaults_are_an_outcome_unless_a_person_is_required(inbox: Inbox) -> None:
    question = {
        "id": "compress",
        "question": "Compress old logs?",
        "type": "confirm",
        "default": True,
    }
    autonomous = {
        "inbox": 1,
        "title": "Log rotation",
        "mode": "autonomous",
        "questions": [question],
    }
    with inbox.watching():
        outcome = answer_inbox.ask(autonomous, timeout=30, spool=inbox.spool)
        assert outcome.status == "defaulted"
        assert outcome.answers == {"compress": True}
        assert outcome.settled_by_policy and not outcome.by_person
        assert outcome.trigger == "autonomous"

        with pytest.raises(SettledByPolicy) as raised:
            answer_inbox.ask(autonomous, timeout=30, spool=inbox.spool, require_person=True)
    assert raised.value.outcome.answers == {"compress": True}


def test_an_invalid_request_is_rejected_with_every_problem(inbox: Inbox) -> None:
    invalid = {
        "inbox": 1,
        "questions": [{"id": "pick", "question": "Which one?", "type": "choice"}],
    }
    placed = answer_inbox.place(invalid, inbox.spool)
    inbox.ok("list")  # Scanning the spool rejects what is invalid.
    with pytest.raises(Rejected) as raised:
        answer_inbox.wait(placed, timeout=30)
    assert [problem.pointer for problem in raised.value.errors] == ["/questions/0/options"]
    assert "/questions/0/options" in str(raised.value)


def test_a_timeout_leaves_the_request_pending_to_wait_again(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    started = time.monotonic()
    with pytest.raises(TimedOut) as raised:
        answer_inbox.wait(placed, timeout=0.3, poll_interval=0.05)
    assert 0.3 <= time.monotonic() - started < 5
    assert raised.value.placed == placed
    assert not Path(placed.outcome_path).exists()

    listed = inbox.ok("list", "--json").stdout
    assert placed.id in listed, "still pending for the operator"
    inbox.answer(placed.id, go="no")
    assert answer_inbox.wait(raised.value.placed, timeout=30).answers == {"go": False}


def test_a_zero_timeout_looks_once(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    with pytest.raises(TimedOut):
        answer_inbox.wait(placed, timeout=0)
    inbox.answer(placed.id, go="yes")
    assert answer_inbox.wait(placed, timeout=0).status == "answered"


def test_waiting_polls_so_an_outcome_is_seen_without_file_events(inbox: Inbox) -> None:
    # The client never subscribes to file events: a wait started before the outcome is
    # written sees it on its next look, within a poll interval or so.
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    seen: Dict[str, Any] = {}

    def waiter() -> None:
        seen["outcome"] = answer_inbox.wait(placed, timeout=30, poll_interval=0.05)
        seen["at"] = time.monotonic()

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)
    inbox.answer(placed.id, go="yes")
    written_at = time.monotonic()
    thread.join(timeout=30)
    assert seen["outcome"].answers == {"go": True}
    assert seen["at"] - written_at < 2
