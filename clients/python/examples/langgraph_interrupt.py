#!/usr/bin/env python3
"""A LangGraph agent whose tool call waits for a person's decision in Answer Inbox.

LangChain v1's human-in-the-loop shape: a node that must not act alone calls
``interrupt()`` with a HITLRequest, the value LangChain's ``HumanInTheLoopMiddleware``
passes::

    {"action_requests": [{"name": "send_email", "args": {...}, "description": "..."}],
     "review_configs": [{"action_name": "send_email",
                         "allowed_decisions": ["approve", "edit", "reject"]}]}

The graph stops there (its state kept by the checkpointer) and hands the value back as
``__interrupt__``. This script places that value in the inbox as it is (docs/PROTOCOL.md,
"LangChain HumanInTheLoopMiddleware"); the operator picks a decision (and edits the
arguments, or writes a message); the outcome's answers, which the client has checked
against the questions the request asked, make the HITLResponse (``{"decisions": [...]}``)
the graph resumes with: ``graph.invoke(Command(resume=reply), config)``. Nothing blocks
inside the node, so the graph can be resumed later, by another process, from the
checkpoint.

Needs ``langgraph`` (``pip install langgraph``) besides this package. Run it, then answer
from another terminal, e.g.::

    python3 examples/langgraph_interrupt.py --id mail-1
    answer-inbox answer mail-1 --set decision-1=approve
    answer-inbox answer mail-1 --set decision-1=edit --set 'args-1={"to": "ops@example.com", ...}'
    answer-inbox answer mail-1 --set decision-1=reject --set message-1='Wait for the notes.'
    answer-inbox answer mail-1 --decline 'not today'

It prints the HITLResponse as JSON on standard output and what the agent did on standard
error. Exit status: 0 with a decision, 12 when the request is rejected, 13 when it was
withdrawn, 14 when the outcome file cannot be trusted (as ``answer-inbox ask --wait``),
124 when ``--timeout`` passed (the request is then withdrawn).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any, Dict, List, Optional, TypedDict

from answer_inbox import (
    Cancelled,
    Declined,
    Expired,
    Rejected,
    TimedOut,
    UntrustedOutcome,
    ask_async,
)

try:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt
except ImportError:  # pragma: no cover - said plainly instead of a traceback
    sys.exit("this example needs LangGraph: pip install langgraph")

TOOL = "send_email"
ARGS = {
    "to": "customers@example.com",
    "subject": "Scheduled maintenance on Saturday",
    "body": "Billing will be read-only from 06:00 to 07:00 UTC.",
}


#: What the agent is told of every tool call when nobody decided in time (the inbox's words).
EXPIRED = "Nobody decided on this tool call before the request expired."


class State(TypedDict, total=False):
    #: What the agent did, in words.
    done: str


def review_email(state: State) -> State:
    """The node: ask for a decision on the tool call, then act on it.

    ``interrupt()`` pauses the graph the first time; on resume it returns the value given
    to ``Command(resume=...)``, the HITLResponse, and the node runs to its end.
    """
    response = interrupt(
        {
            "action_requests": [
                {
                    "name": TOOL,
                    "args": ARGS,
                    "description": "The release agent wants to announce **Saturday's "
                    "maintenance window** to every customer. Check the time against the "
                    "change calendar before approving.",
                }
            ],
            "review_configs": [
                {"action_name": TOOL, "allowed_decisions": ["approve", "edit", "reject"]}
            ],
        }
    )
    return {"done": act(response["decisions"][0])}


def act(decision: Dict[str, Any]) -> str:
    """What the agent does with one decision, in words (a real one would call the tool)."""
    kind = decision["type"]
    if kind == "approve":
        return f"ran {TOOL} with {json.dumps(ARGS)}"
    if kind == "edit":
        edited = decision["edited_action"]
        return f"ran {edited['name']} with {json.dumps(edited['args'])}"
    message = decision.get("message")
    return f"did not run {TOOL}" + (f"; told the model: {message}" if message else "")


def build_graph() -> Any:
    graph = StateGraph(State)
    graph.add_node("review_email", review_email)
    graph.add_edge(START, "review_email")
    graph.add_edge("review_email", END)
    # The checkpointer keeps the paused graph; a real agent would use a persistent one.
    return graph.compile(checkpointer=InMemorySaver())


async def ask_operator(
    value: Dict[str, Any], *, timeout: Optional[float], spool: Optional[str], id: Optional[str]
) -> Dict[str, Any]:
    """Asks the operator about the interrupt's value; returns the HITLResponse to resume
    with, one decision per tool call. A refusal or an expiry rejects every call; a rejected
    request, a withdrawal and a timeout raise: there is nothing to resume with. A timeout
    withdraws the request (``ask_async`` does, as its task is cancelled)."""
    request = dict(value, source={"app": "langgraph", "project": "release-agent"})
    print(
        "asked the operator; answer with: answer-inbox answer "
        f"{id or '<id>'} --set decision-1=approve",
        file=sys.stderr,
        flush=True,
    )
    calls = value["action_requests"]
    try:
        outcome = await asyncio.wait_for(ask_async(request, spool=spool, id=id), timeout)
    except Declined as declined:
        return {"decisions": [reject(declined.reason) for _ in calls]}
    except Expired:
        return {"decisions": [reject(EXPIRED) for _ in calls]}
    # The answers, checked against the questions the request asked (one decision-N per tool
    # call, its args-N and message-N), are what the agent acts on. The outcome's `reply`
    # says the same, checked too; building the decisions here shows what they mean.
    return {"decisions": [decided(outcome.answers, n, call) for n, call in enumerate(calls, 1)]}


def decided(answers: Dict[str, Any], n: int, call: Dict[str, Any]) -> Dict[str, Any]:
    """Tool call ``n``'s decision (LangChain's HITL decision types) from the answers.
    Anything but approve or a well-formed edit runs nothing."""
    decision = answers.get(f"decision-{n}")
    if decision == "approve":
        return {"type": "approve"}
    if decision == "edit":
        # Checked to be a JSON object; unchanged arguments are recorded as the default.
        args = json.loads(answers[f"args-{n}"])
        return {"type": "edit", "edited_action": {"name": call["name"], "args": args}}
    return reject(answers.get(f"message-{n}"))


def reject(message: Optional[str]) -> Dict[str, Any]:
    return {"type": "reject", "message": message} if message else {"type": "reject"}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="A LangGraph node asks the operator before it sends an e-mail."
    )
    parser.add_argument(
        "--spool", help="the spool (default: $ANSWER_INBOX_DIR, else the XDG default)"
    )
    parser.add_argument("--id", help="the request id (default: a new ULID)")
    parser.add_argument("--timeout", type=float, help="give up after SECS seconds")
    options = parser.parse_args(argv)

    graph = build_graph()
    config = {"configurable": {"thread_id": options.id or "release-agent"}}
    paused = graph.invoke({}, config)
    (pending,) = paused["__interrupt__"]
    try:
        reply = asyncio.run(
            ask_operator(pending.value, timeout=options.timeout, spool=options.spool, id=options.id)
        )
    except Rejected as rejected:
        print(rejected, file=sys.stderr)
        return 12
    except Cancelled as cancelled:
        print(cancelled, file=sys.stderr)
        return 13
    except UntrustedOutcome as untrusted:
        # A file in answers/ that is no answer to this request (forged, or for another
        # version): the graph is not resumed with it.
        print(f"{untrusted}; it is not taken as an answer", file=sys.stderr)
        return 14
    except (asyncio.TimeoutError, TimedOut):
        print(f"nobody answered within {options.timeout:g} s; withdrawn", file=sys.stderr)
        return 124

    print(json.dumps(reply, indent=2))
    final = graph.invoke(Command(resume=reply), config)
    print(f"the agent {final['done']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
