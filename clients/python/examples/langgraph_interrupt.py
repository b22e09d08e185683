#!/usr/bin/env python3
"""Ask a person through Answer Inbox where a LangGraph agent would call ``interrupt()``.

In LangGraph's Agent Inbox pattern a node that must not go on alone builds a
HumanInterrupt::

    {"action_request": {"action": "send_email", "args": {...}},
     "config": {"allow_accept": true, "allow_edit": true,
                "allow_respond": true, "allow_ignore": true},
     "description": "markdown for the person"}

and calls ``interrupt([request])``, which pauses the graph until a list of one
HumanResponse comes back (``{"type": "accept" | "edit" | "response" | "ignore", "args":
...}``). Answer Inbox reads that list as it is (docs/PROTOCOL.md, "LangGraph
HumanInterrupt"): the operator gets a question for the decision (plus the arguments to
edit and a message field, when allowed), and the outcome's ``reply`` is the
``[HumanResponse]`` the graph resumes with. So a node can ask through the inbox instead::

    response = ask_human(request)[0]    # instead of: response = interrupt([request])[0]

This script does that for one e-mail an agent wants to send, prints the reply as JSON on
standard output and says what the agent would do next on standard error. It needs only
this package, not LangGraph. Run it, then answer from another terminal, e.g.::

    python3 examples/langgraph_interrupt.py --id mail-1
    answer-inbox answer mail-1 --set decision=accept
    answer-inbox answer mail-1 --set decision=edit --set 'args={"to": "ops@example.com"}'
    answer-inbox answer mail-1 --set decision=response --set response='Wait for the release notes.'
    answer-inbox answer mail-1 --decline 'not today'

Exit status: 0 with a reply, 12 when the request is rejected, 13 when it was withdrawn,
124 when ``--timeout`` passed (the request is then withdrawn).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional

from answer_inbox import Cancelled, Declined, Expired, Rejected, TimedOut, place, wait, withdraw


def human_interrupt(
    action: str,
    args: Dict[str, Any],
    description: str,
    *,
    allow_accept: bool = True,
    allow_edit: bool = True,
    allow_respond: bool = True,
    allow_ignore: bool = True,
) -> Dict[str, Any]:
    """A HumanInterrupt, as LangGraph's Agent Inbox defines it."""
    return {
        "action_request": {"action": action, "args": args},
        "config": {
            "allow_accept": allow_accept,
            "allow_edit": allow_edit,
            "allow_respond": allow_respond,
            "allow_ignore": allow_ignore,
        },
        "description": description,
    }


def ask_human(
    request: Dict[str, Any],
    *,
    timeout: Optional[float] = None,
    spool: Optional[str] = None,
    id: Optional[str] = None,
) -> List[Dict[str, Any]]:
    """Asks the operator about one HumanInterrupt and returns what LangGraph's
    ``interrupt([request])`` would: a list of one HumanResponse.

    A refusal or an expiry is an ``ignore``, as the Agent Inbox answers them: the outcome's
    ``reply`` says so. A rejected request (an invalid interrupt), a withdrawal and a
    timeout raise, since there is no response to give the agent.
    """
    placed = place([request], spool, id=id)
    print(
        f"asked the operator (request {placed.id}); answer with: "
        f"answer-inbox answer {placed.id} --set decision=accept",
        file=sys.stderr,
        flush=True,
    )
    try:
        outcome = wait(placed, timeout)
    except (Declined, Expired) as ended:
        return ended.outcome.reply
    except TimedOut:
        # Nobody answered in time: take the question off the operator's list. An outcome
        # written meanwhile stands, and is the answer after all.
        standing = withdraw(placed, "the agent stopped waiting")
        if standing is None:
            raise
        if standing.status == "rejected":
            standing.raise_for_status()
        return standing.reply
    return outcome.reply


def next_step(response: Dict[str, Any], action: str, args: Dict[str, Any]) -> str:
    """What the agent does with the HumanResponse, in words."""
    kind = response["type"]
    if kind == "accept":
        return f"run {action} with {json.dumps(args)}"
    if kind == "edit":
        edited = response["args"]
        return f"run {edited['action']} with {json.dumps(edited['args'])}"
    if kind == "response":
        return f"not run {action}; tell the model: {response['args']}"
    return f"skip {action}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        description="Ask the operator about an e-mail, as a LangGraph interrupt would."
    )
    parser.add_argument(
        "--spool", help="the spool (default: $ANSWER_INBOX_DIR, else the XDG default)"
    )
    parser.add_argument("--id", help="the request id (default: a new ULID)")
    parser.add_argument("--timeout", type=float, help="give up after SECS seconds")
    options = parser.parse_args(argv)

    action = "send_email"
    args = {
        "to": "customers@example.com",
        "subject": "Scheduled maintenance on Saturday",
        "body": "Billing will be read-only from 06:00 to 07:00 UTC.",
    }
    request = human_interrupt(
        action,
        args,
        "The release agent wants to announce **Saturday's maintenance window** to every "
        "customer. Check the time against the change calendar before accepting.",
    )
    try:
        reply = ask_human(request, timeout=options.timeout, spool=options.spool, id=options.id)
    except Rejected as rejected:
        print(rejected, file=sys.stderr)
        return 12
    except Cancelled as cancelled:
        print(cancelled, file=sys.stderr)
        return 13
    except TimedOut as timed_out:
        print(f"{timed_out}; withdrawn", file=sys.stderr)
        return 124

    print(json.dumps(reply, indent=2))
    print(f"the agent will now {next_step(reply[0], action, args)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
