"""The LangGraph example runs as a user would run it: its graph pauses at ``interrupt()``
with LangChain v1's HITLRequest, the operator decides in the inbox, and the graph resumes
with ``Command(resume=reply)``. Skipped, saying so, where LangGraph is not installed
(scripts/setup installs it into the tests' venv)."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from conftest import CLIENT_DIR, Inbox, wait_until, write_outcome

from answer_inbox import Placed

pytest.importorskip("langgraph", reason="the example needs LangGraph (pip install langgraph)")

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


EDITED = dict(ARGS, to="ops@example.com")


@pytest.mark.parametrize(
    "operator, decision, done",
    [
        (["--set", "decision-1=approve"], {"type": "approve"}, "ran send_email with"),
        (
            ["--set", "decision-1=edit", "--set", "args-1=" + json.dumps(EDITED)],
            {"type": "edit", "edited_action": {"name": "send_email", "args": EDITED}},
            '"to": "ops@example.com"',
        ),
        (
            ["--set", "decision-1=reject", "--set", "message-1=Wait for the release notes."],
            {"type": "reject", "message": "Wait for the release notes."},
            "did not run send_email; told the model: Wait for the release notes.",
        ),
        (
            ["--decline", "not today"],
            {"type": "reject", "message": "not today"},
            "told the model: not today",
        ),
    ],
)
def test_the_langgraph_example_resumes_the_graph_with_the_operators_decision(
    inbox: Inbox, operator: List[str], decision: dict, done: str
) -> None:
    process = start_example(inbox, "mail-1", "--timeout", "60")
    question = Path(inbox.spool, "questions", "mail-1.json")
    wait_until(question.exists, what="the example's request")

    # The file is the HITLRequest the graph's interrupt() was given.
    placed = json.loads(question.read_text())
    assert placed["action_requests"][0]["name"] == "send_email"
    assert placed["action_requests"][0]["args"] == ARGS
    assert placed["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    inbox.ok("answer", "mail-1", *operator)

    status, stdout, stderr = finish(process)
    assert status == 0, stderr
    assert json.loads(stdout) == {"decisions": [decision]}
    assert done in stderr.splitlines()[-1], stderr


def test_the_langgraph_example_withdraws_when_nobody_answers(inbox: Inbox) -> None:
    process = start_example(inbox, "mail-2", "--timeout", "0.5")
    status, stdout, stderr = finish(process)
    assert status == 124, stderr
    assert stdout == ""
    assert Path(inbox.spool, "cancel", "mail-2").exists(), "the request is withdrawn"
    assert os.listdir(Path(inbox.spool, "answers")) == []


def test_the_langgraph_example_never_resumes_with_a_forged_reply(inbox: Inbox) -> None:
    # Someone who can write answers/ rejects the tool call in the answers but approves it in
    # the reply: the graph must not run the tool; the example exits 14, as `ask --wait` does.
    process = start_example(inbox, "mail-3", "--timeout", "60")
    question = Path(inbox.spool, "questions", "mail-3.json")
    wait_until(question.exists, what="the example's request")
    outcome = {
        "inbox": 1,
        "id": "mail-3",
        "status": "answered",
        "answers": {"decision-1": "reject", "args-1": json.dumps(ARGS, indent=2)},
        "custom": [],
        "defaulted": ["args-1"],
        "answered_by": "operator:" + pwd.getpwuid(os.geteuid()).pw_name,
        "answered_at": "2026-12-03T10:00:00Z",
        "request_sha256": hashlib.sha256(question.read_bytes()).hexdigest(),
        "instance": "elsewhere/01JFORGED00000000000000000",
        "reply": {"decisions": [{"type": "approve"}]},
    }
    placed = Placed("mail-3", outcome["request_sha256"], inbox.spool)
    write_outcome(placed, json.dumps(outcome).encode())

    status, stdout, stderr = finish(process)
    assert status == 14, stderr
    assert stdout == "" and "ran send_email" not in stderr
    assert "its reply does not match its answers" in stderr
