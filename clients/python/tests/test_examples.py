"""The LangGraph example runs as a user would run it, and prints the HumanResponse the
operator's decision makes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from conftest import CLIENT_DIR, Inbox, wait_until

EXAMPLE = CLIENT_DIR / "examples" / "langgraph_interrupt.py"
ARGS = {
    "to": "customers@example.com",
    "subject": "Scheduled maintenance on Saturday",
    "body": "Billing will be read-only from 06:00 to 07:00 UTC.",
}


def start_example(inbox: Inbox, id: str, *extra: str) -> "subprocess.Popen[str]":
    env = dict(inbox.env, PYTHONPATH=str(CLIENT_DIR / "src"))
    return subprocess.Popen(
        [sys.executable, str(EXAMPLE), "--spool", inbox.spool, "--id", id, *extra],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: "subprocess.Popen[str]") -> "tuple[int, str, str]":
    try:
        stdout, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        pytest.fail(f"the example did not finish: {stderr}")
    return process.returncode, stdout, stderr


@pytest.mark.parametrize(
    "operator, reply, next_step",
    [
        (["--set", "decision=accept"], [{"type": "accept", "args": None}], "run send_email"),
        (
            ["--set", "decision=edit", "--set", 'args={"to": "ops@example.com"}'],
            [{"type": "edit", "args": {"action": "send_email", "args": {"to": "ops@example.com"}}}],
            'run send_email with {"to": "ops@example.com"}',
        ),
        (
            ["--set", "decision=response", "--set", "response=Wait for the release notes."],
            [{"type": "response", "args": "Wait for the release notes."}],
            "tell the model: Wait for the release notes.",
        ),
        (["--set", "decision=ignore"], [{"type": "ignore", "args": None}], "skip send_email"),
        (["--decline", "not today"], [{"type": "ignore", "args": None}], "skip send_email"),
    ],
)
def test_the_langgraph_example_prints_the_operators_human_response(
    inbox: Inbox, operator: List[str], reply: list, next_step: str
) -> None:
    process = start_example(inbox, "mail-1", "--timeout", "60")
    question = Path(inbox.spool, "questions", "mail-1.json")
    wait_until(question.exists, what="the example's request")

    # The file is the one-interrupt list LangGraph's interrupt() is given.
    placed = json.loads(question.read_text())
    assert placed[0]["action_request"] == {"action": "send_email", "args": ARGS}
    inbox.ok("answer", "mail-1", *operator)

    status, stdout, stderr = finish(process)
    assert status == 0, stderr
    assert json.loads(stdout) == reply
    assert next_step in stderr.splitlines()[-1]


def test_the_langgraph_example_withdraws_when_nobody_answers(inbox: Inbox) -> None:
    process = start_example(inbox, "mail-2", "--timeout", "0.5")
    status, stdout, stderr = finish(process)
    assert status == 124, stderr
    assert stdout == ""
    assert Path(inbox.spool, "cancel", "mail-2").read_text() == "the agent stopped waiting"
    assert os.listdir(Path(inbox.spool, "answers")) == []
