"""Outcomes are checked against the request as it was asked, however the files change later,
and for LangGraph's HumanInterrupt and LangChain's HITL dialects, the ``reply`` an agent is
handed is the one the checked answers make. Forged files stand in for a member of a team
spool (group-writable, no sticky bit), who can delete any request file and write outcomes;
the real ``answer-inbox`` is the operator's side that writes the genuine ones."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from conftest import Inbox, wait_until, write_outcome

import answer_inbox
from answer_inbox import Placed, UntrustedOutcome
from answer_inbox.questions import read_questions

#: A yes/no question whose default is no: a policy may only stand in that no.
WITH_DEFAULT = {
    "inbox": 1,
    "title": "Deploy build 7 to staging?",
    "questions": [{"id": "go", "question": "Deploy?", "type": "confirm", "default": False}],
}

ARGS = {"to": "ops@example.com", "subject": "Weekly report"}

#: LangChain v1's HITLRequest, as ``HumanInTheLoopMiddleware`` passes it to interrupt().
HITL = {
    "action_requests": [{"name": "send_email", "args": ARGS, "description": "Send it?"}],
    "review_configs": [
        {"action_name": "send_email", "allowed_decisions": ["approve", "edit", "reject"]}
    ],
}

#: LangGraph Agent Inbox's HumanInterrupt, as the one-element list interrupt() is given.
INTERRUPT = [
    {
        "action_request": {"action": "send_email", "args": ARGS},
        "config": {
            "allow_accept": True,
            "allow_edit": True,
            "allow_respond": True,
            "allow_ignore": True,
        },
        "description": "Send it?",
    }
]


def forged(placed: Placed, **fields: Any) -> bytes:
    """An outcome file for ``placed`` as a forger writes it: this version, a policy's."""
    outcome: Dict[str, Any] = {
        "inbox": 1,
        "id": placed.id,
        "status": "defaulted",
        "answers": {"go": True},
        "custom": [],
        "defaulted": ["go"],
        "answered_by": "policy:expiry",
        "answered_at": "2026-12-03T10:00:00Z",
        "request_sha256": placed.sha256,
        "instance": "elsewhere/01JFORGED00000000000000000",
    }
    outcome.update(fields)
    return json.dumps(outcome).encode()


def answered(placed: Placed, answers: Dict[str, Any], reply: Any, *defaulted: str) -> bytes:
    """A forged outcome that says this account answered, with ``answers`` and ``reply``."""
    return forged(
        placed,
        status="answered",
        answered_by=f"operator:{pwd.getpwuid(os.geteuid()).pw_name}",
        answers=answers,
        defaulted=list(defaulted),
        reply=reply,
    )


def look(placed: Placed) -> answer_inbox.Outcome:
    return answer_inbox.wait(placed, timeout=0)


# --- The request as asked, kept -------------------------------------------------------


def test_a_policy_outcome_after_the_request_file_is_deleted_is_still_checked(
    tmp_path: Path,
) -> None:
    placed = answer_inbox.place(WITH_DEFAULT, tmp_path / "spool")
    os.unlink(placed.request_path)
    write_outcome(placed, forged(placed))

    with pytest.raises(UntrustedOutcome) as refused:
        look(placed)
    # The words of the Rust client's refusal (AskError::BadOutcome), from verify_outcome_for.
    assert "policy:expiry answered with something other than the request's defaults" in str(
        refused.value
    )


def test_the_rust_client_refuses_the_same_file(inbox: Inbox, tmp_path: Path) -> None:
    # `answer-inbox ask --wait` (the Rust client) against the same attack: it read the
    # request when its wait started, so it exits 14, an outcome that cannot be trusted.
    request = tmp_path / "request.json"
    request.write_text(json.dumps(dict(WITH_DEFAULT, id="gone-1")))
    asking = subprocess.Popen(
        [str(inbox.binary), "--spool", inbox.spool, "--db", inbox.db, "ask", "--wait"]
        + ["--timeout", "30", str(request)],
        env=inbox.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    question = Path(inbox.spool, "questions", "gone-1.json")
    wait_until(question.exists, what="the request")
    placed = Placed("gone-1", hashlib.sha256(question.read_bytes()).hexdigest(), inbox.spool)
    time.sleep(0.5)  # its wait has started and read the request
    question.unlink()
    write_outcome(placed, forged(placed))
    _, stderr = asking.communicate(timeout=60)
    assert asking.returncode == 14, stderr
    assert "other than the request's defaults" in stderr


def test_a_wait_keeps_the_request_it_read_first(tmp_path: Path) -> None:
    # A Placed made again from its plain data carries no bytes: the wait reads the file
    # when it starts and keeps it, as the Rust client's wait does.
    placed = answer_inbox.place(WITH_DEFAULT, tmp_path / "spool")
    again = Placed(placed.id, placed.sha256, placed.spool)
    got: Dict[str, Any] = {}

    def waiting() -> None:
        try:
            got["outcome"] = answer_inbox.wait(again, timeout=20, poll_interval=0.02)
        except Exception as error:  # noqa: BLE001 - what it raised is the result
            got["error"] = error

    thread = threading.Thread(target=waiting)
    thread.start()
    time.sleep(0.3)
    os.unlink(placed.request_path)
    write_outcome(placed, forged(placed))
    thread.join(30)
    assert isinstance(got.get("error"), UntrustedOutcome), got
    assert "other than the request's defaults" in str(got["error"])


def test_bytes_that_are_not_the_version_placed_are_not_taken(tmp_path: Path) -> None:
    placed = answer_inbox.place(WITH_DEFAULT, tmp_path / "spool")
    # A Placed whose bytes are not the ones placed keeps the file's instead.
    mixed = Placed(placed.id, placed.sha256, placed.spool, b'{"inbox": 1}')
    write_outcome(placed, forged(placed))
    with pytest.raises(UntrustedOutcome, match="other than the request's defaults"):
        look(mixed)


def test_a_request_never_read_is_checked_by_the_outcome_alone_and_gives_no_reply(
    tmp_path: Path,
) -> None:
    # As the Rust client does when the request is gone before its wait starts; but a reply
    # that could not be checked is not handed to the agent.
    placed = answer_inbox.place(HITL, tmp_path / "spool")
    os.unlink(placed.request_path)
    blind = Placed(placed.id, placed.sha256, placed.spool)
    approves = {"decisions": [{"type": "approve"}]}
    write_outcome(placed, answered(placed, {"decision-1": "reject"}, approves))
    outcome = look(blind)
    assert outcome.answers == {"decision-1": "reject"}
    assert outcome.reply is None


# --- LangChain HITL and HumanInterrupt -------------------------------------------------


def test_the_agents_dialects_become_the_inbox_s_questions() -> None:
    hitl = read_questions(json.dumps(HITL).encode())
    assert hitl is not None and hitl.origin is not None
    assert [q.id for q in hitl.questions] == ["decision-1", "args-1", "message-1"]
    decision = hitl.questions[0]
    assert [c.id for c in decision.choices] == ["approve", "edit", "reject"]
    assert decision.required and decision.default is None
    assert hitl.questions[1].default == json.dumps(ARGS, indent=2)
    assert hitl.questions[1].required_if == ("decision-1", "edit")
    assert hitl.questions[2].required_if is None  # a rejection's reason is optional

    interrupt = read_questions(json.dumps(INTERRUPT).encode())
    assert interrupt is not None and interrupt.origin is not None and interrupt.origin.listed
    assert [q.id for q in interrupt.questions] == ["decision", "args", "response"]
    assert [c.id for c in interrupt.questions[0].choices] == [
        "accept",
        "edit",
        "response",
        "ignore",
    ]
    assert interrupt.questions[2].required_if == ("decision", "response")


@pytest.mark.parametrize(
    "answers, reply, problem",
    [
        # Ignore is LangGraph's, not LangChain's: not offered, whatever the reply says.
        ({"decision-1": "ignore"}, {"decisions": [{"type": "approve"}]}, "do not fit"),
        # Rejected, but the reply approves: the agent would run the tool.
        ({"decision-1": "reject"}, {"decisions": [{"type": "approve"}]}, "reply"),
        # Edited arguments are a JSON object.
        ({"decision-1": "edit", "args-1": "[1]"}, None, "expected a JSON object"),
        # Answered, but no reply at all: the agent would be handed nothing checked.
        ({"decision-1": "approve"}, None, "reply"),
    ],
)
def test_a_forged_hitl_outcome_is_refused(
    tmp_path: Path, answers: Dict[str, Any], reply: Any, problem: str
) -> None:
    placed = answer_inbox.place(HITL, tmp_path / "spool")
    default = json.dumps(ARGS, indent=2)
    write_outcome(placed, answered(placed, {"args-1": default, **answers}, reply))
    with pytest.raises(UntrustedOutcome) as refused:
        look(placed)
    assert problem in refused.value.reason


@pytest.mark.parametrize(
    "answers, reply, problem",
    [
        # Ignored, but the HumanResponse accepts: the agent would run the action.
        ({"decision": "ignore"}, [{"type": "accept", "args": None}], "its reply does not match"),
        # A response needs its text.
        ({"decision": "response"}, [{"type": "response", "args": ""}], "is required when"),
        # Not a list, where the interrupt was given as one.
        ({"decision": "ignore"}, {"type": "ignore", "args": None}, "its reply does not match"),
    ],
)
def test_a_forged_interrupt_outcome_is_refused(
    tmp_path: Path, answers: Dict[str, Any], reply: Any, problem: str
) -> None:
    placed = answer_inbox.place(INTERRUPT, tmp_path / "spool")
    default = json.dumps(ARGS, indent=2)
    write_outcome(placed, answered(placed, {"args": default, **answers}, reply, "args"))
    with pytest.raises(UntrustedOutcome) as refused:
        look(placed)
    assert problem in refused.value.reason


def test_an_elicitation_reply_is_not_handed_out_unchecked(tmp_path: Path) -> None:
    # This client does not read MCP elicitation's questions: its answers come back as
    # written (checked by the outcome's own fields), its reply not at all.
    request = {
        "message": "Who deploys?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    }
    placed = answer_inbox.place(request, tmp_path / "spool")
    reply = {"action": "accept", "content": {"name": "mallory"}}
    write_outcome(placed, answered(placed, {"name": "ann"}, reply))
    outcome = look(placed)
    assert outcome.answers == {"name": "ann"} and outcome.reply is None


#: Arguments that are easy to print differently from serde_json: the inbox records them,
#: pretty-printed, as the edit question's default, and an answer that leaves it is checked
#: against this client's printing of them.
AWKWARD_ARGS = {
    "zeta": 1,
    "alpha": [1.5, -0.0, 1e20, 1e-07, 123456789012345678, {}, []],
    "text": 'line\nbreak\t"quoted" \\ \u00e9\u4e2d\U0001f600 \u0001\u007f',
    "nested": {"b": None, "a": [True, False, {"deep": []}]},
}


@pytest.mark.parametrize(
    "shape, sets",
    [
        ("hitl", {"decision-1": "approve"}),
        ("hitl", {"decision-1": "reject", "message-1": "Not this week."}),
        ("hitl", {"decision-1": "edit", "args-1": '{"to": "me@example.com"}'}),
        ("interrupt", {"decision": "accept"}),
        ("interrupt", {"decision": "ignore"}),
        ("interrupt", {"decision": "response", "response": "Send it tomorrow."}),
        ("interrupt", {"decision": "edit", "args": '{"to": "me@example.com"}'}),
        ("hitl", None),
        ("interrupt", None),
    ],
)
def test_what_the_inbox_writes_for_the_dialects_is_accepted_with_its_reply(
    inbox: Inbox, shape: str, sets: Optional[Dict[str, str]]
) -> None:
    if shape == "hitl":
        request: Any = json.loads(json.dumps(HITL))
        request["action_requests"][0]["args"] = AWKWARD_ARGS
        request = dict(request, id="ask-1")
    else:
        request = json.loads(json.dumps(INTERRUPT))
        request[0]["action_request"]["args"] = AWKWARD_ARGS
        request[0]["id"] = "ask-1"
    placed = answer_inbox.place(request, inbox.spool)
    written = inbox.answer("ask-1", **sets) if sets else inbox.decline("ask-1", "not today")
    wait_until(lambda: Path(placed.outcome_path).exists(), what="the outcome")
    try:
        outcome = look(placed)
    except answer_inbox.Declined as declined:
        outcome = declined.outcome
    assert outcome.answers == written["answers"]
    assert outcome.reply == written["reply"] is not None
