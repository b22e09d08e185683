"""``ask_async`` and ``wait_async``: the same outcomes, errors and withdrawals as ``ask`` and
``wait``, for asyncio, with the real ``answer-inbox`` as the operator."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from conftest import Inbox, confirm_request, wait_until

import answer_inbox
from answer_inbox import Cancelled, CancelToken, Declined, TimedOut


def run(coroutine):  # type: ignore[no-untyped-def]
    return asyncio.run(coroutine)


def test_ask_async_returns_the_checked_answer(inbox: Inbox) -> None:
    async def scenario() -> answer_inbox.Outcome:
        task = asyncio.ensure_future(
            answer_inbox.ask_async(confirm_request(), 30, inbox.spool, id="deploy-1")
        )
        question = Path(inbox.spool, "questions", "deploy-1.json")
        while not question.exists():
            await asyncio.sleep(0.05)
        # The loop stays free while the task waits: the operator answers from it.
        await asyncio.to_thread(inbox.answer, "deploy-1", go="yes")
        return await task

    outcome = run(scenario())
    assert outcome.status == "answered"
    assert outcome.answers == {"go": True}


def test_many_questions_wait_at_once_on_one_loop(inbox: Inbox) -> None:
    async def scenario() -> list:
        placed = [
            answer_inbox.place(confirm_request(), inbox.spool, id=f"job-{n}") for n in range(3)
        ]
        waits = [answer_inbox.wait_async(p, 30) for p in placed]
        for n in reversed(range(3)):
            await asyncio.to_thread(inbox.answer, f"job-{n}", go="yes" if n else "no")
        return await asyncio.gather(*waits)

    outcomes = run(scenario())
    assert [o.answers["go"] for o in outcomes] == [False, True, True]


def test_wait_async_raises_what_wait_raises(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool, id="freeze")
    inbox.decline("freeze", "change freeze")
    with pytest.raises(Declined) as declined:
        run(answer_inbox.wait_async(placed, 30))
    assert declined.value.reason == "change freeze"

    pending = answer_inbox.place(confirm_request(), inbox.spool, id="slow")
    started = time.monotonic()
    with pytest.raises(TimedOut):
        run(answer_inbox.wait_async(pending, 0.3))
    assert time.monotonic() - started < 5
    assert not Path(pending.tombstone_path).exists(), "a timeout leaves the request pending"


def test_a_cancel_token_withdraws_as_for_wait(inbox: Inbox) -> None:
    token = CancelToken()

    async def scenario() -> None:
        task = asyncio.ensure_future(
            answer_inbox.ask_async(confirm_request(), None, inbox.spool, id="tok", cancel=token)
        )
        await asyncio.sleep(0.3)
        token.cancel("superseded")
        await task

    with pytest.raises(Cancelled) as cancelled:
        run(scenario())
    assert cancelled.value.reason == "superseded"
    assert Path(inbox.spool, "cancel", "tok").read_text() == "superseded"


def test_cancelling_the_task_withdraws_the_request(inbox: Inbox) -> None:
    async def scenario() -> None:
        await asyncio.wait_for(
            answer_inbox.ask_async(confirm_request(), None, inbox.spool, id="gone"), 0.5
        )

    with pytest.raises(asyncio.TimeoutError):
        run(scenario())
    # The tombstone tells the operator's inbox nobody waits any more.
    assert Path(inbox.spool, "cancel", "gone").exists()


def test_an_answer_that_stands_is_not_withdrawn_by_a_cancelled_task(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool, id="done")
    inbox.answer("done", go="yes")

    async def scenario() -> None:
        task = asyncio.ensure_future(answer_inbox.wait_async(placed, 30, poll_interval=5))
        task.cancel()
        await task

    with pytest.raises(asyncio.CancelledError):
        run(scenario())
    assert not Path(placed.tombstone_path).exists(), "the answer stands; no tombstone"
