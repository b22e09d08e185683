"""An outcome file counts only if it checks out. Files written by the test stand in for an
attacker or a broken writer; each is refused by the client as ``UntrustedOutcome``, never
returned as an answer, and the real inbox refuses the same file (``answer`` exits 6,
blocked) for the same reason."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pwd
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

import pytest
from conftest import Inbox, confirm_request, write_outcome

import answer_inbox
from answer_inbox import Placed, UntrustedOutcome

ACCOUNT = pwd.getpwuid(os.geteuid()).pw_name


def genuine(placed: Placed) -> Dict[str, Any]:
    """An outcome as an operator's `answer-inbox answer` writes it for ``placed``."""
    return {
        "inbox": 1,
        "id": placed.id,
        "status": "answered",
        "answers": {"go": True},
        "custom": [],
        "defaulted": [],
        "answered_by": f"operator:{ACCOUNT}",
        "answered_at": "2026-12-03T10:42:17.123456789Z",
        "decided_by": "person",
        "surface": "cli",
        "decision_ms": 1200,
        "request_sha256": placed.sha256,
        "instance": "ops-laptop/01JEQ7F2B9XH4C6M8N0P2R4T6V",
    }


def as_person_by_policy(outcome: Dict[str, Any]) -> None:
    outcome["decided_by"] = "policy"


def policy_answered(outcome: Dict[str, Any]) -> None:
    rule = "policy:rule:file-askers"
    outcome.update(answered_by=rule, decided_by="policy", rule=rule, surface="policy")


def declined_without_reason(outcome: Dict[str, Any]) -> None:
    outcome.update(status="declined", answers={})


def declined_with_answers(outcome: Dict[str, Any]) -> None:
    outcome.update(status="declined", reason="no")


def rejected_by_a_person(outcome: Dict[str, Any]) -> None:
    outcome.update(status="rejected", answers={}, errors=[{"pointer": "", "message": "bad"}])


# Each case: how the genuine outcome is spoiled, and what the client says (the inbox says
# the same: both run the protocol's verify_outcome).
VERIFIED_CASES: Dict[str, Tuple[Callable[[Dict[str, Any]], None], str]] = {
    "another version": (
        lambda o: o.update(request_sha256=hashlib.sha256(b"other").hexdigest()),
        "it answers another version of the request (request_sha256 differs)",
    ),
    "no version": (
        lambda o: o.pop("request_sha256"),
        "it does not say which version of the request it answers",
    ),
    "another request": (lambda o: o.update(id="someone-else"), 'it names request "someone-else"'),
    "decided_by disagrees": (as_person_by_policy, 'decided_by "policy" disagrees with answered_by'),
    "a rule for a person": (
        lambda o: o.update(rule="policy:rule:file-askers"),
        'rule "policy:rule:file-askers" is not the policy in answered_by',
    ),
    "a person on the policy surface": (
        lambda o: o.update(surface="policy"),
        'a person\'s decision cannot come from surface "policy"',
    ),
    "a policy that answered": (policy_answered, "a policy cannot have answered it"),
    "declined without a reason": (declined_without_reason, "it is declined without a reason"),
    "declined with answers": (declined_with_answers, "it is declined yet carries answers"),
    "rejected by a person": (
        rejected_by_a_person,
        "a rejection must come from validation and say what is wrong",
    ),
    "a device off the web": (
        lambda o: o.update(device="Phone"),
        'device "Phone" given for a decision not made on surface "web"',
    ),
    "nobody answered": (
        lambda o: o.update(answered_by="dana"),
        'answered_by "dana" is neither operator:<account> nor policy:<name>',
    ),
}


@pytest.mark.parametrize("case", sorted(VERIFIED_CASES))
def test_a_spoiled_outcome_is_refused_by_the_client_and_the_inbox(inbox: Inbox, case: str) -> None:
    spoil, reason = VERIFIED_CASES[case]
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    outcome = genuine(placed)
    spoil(outcome)
    write_outcome(placed, json.dumps(outcome, indent=2).encode())

    with pytest.raises(UntrustedOutcome) as raised:
        answer_inbox.wait(placed, timeout=5)
    assert reason in raised.value.reason
    assert raised.value.id == placed.id
    with pytest.raises(UntrustedOutcome):
        answer_inbox.withdraw(placed)
    assert not Path(placed.tombstone_path).exists()

    blocked = inbox.run("answer", placed.id, "--set", "go=yes")
    assert blocked.returncode == 6, blocked.stderr
    assert raised.value.reason in blocked.stderr, "the inbox refuses it for the same reason"


def spoil_text(placed: Placed, spoil: Callable[[str], str]) -> bytes:
    return spoil(json.dumps(genuine(placed), indent=2)).encode()


PARSE_CASES: Dict[str, Tuple[Callable[[Placed], bytes], str]] = {
    "not JSON": (lambda p: b"{not json", "not a valid outcome"),
    "not UTF-8": (lambda p: b'{"inbox": 1, "id": "\xff"}', "not a valid outcome"),
    "a byte-order mark": (
        lambda p: "\ufeff".encode() + spoil_text(p, lambda t: t),
        "not a valid outcome",
    ),
    "a key given twice": (
        lambda p: spoil_text(
            p,
            lambda t: t.replace(
                '"status": "answered",', '"status": "declined", "status": "answered",'
            ),
        ),
        'the key "status" is given twice',
    ),
    "an unknown status": (
        lambda p: spoil_text(p, lambda t: t.replace('"answered",', '"approved",', 1)),
        "`status` must be one of",
    ),
    "another protocol version": (
        lambda p: spoil_text(p, lambda t: t.replace('"inbox": 1', '"inbox": 2')),
        "unsupported outcome version 2",
    ),
    "no instance": (
        lambda p: spoil_text(p, lambda t: t.replace('"instance"', '"instanz"')),
        "missing field `instance`",
    ),
    "answers that are not an object": (
        lambda p: spoil_text(
            p, lambda t: t.replace('"answers": {\n    "go": true\n  }', '"answers": null')
        ),
        "`answers` must be an object",
    ),
    "a time that is not one": (
        lambda p: spoil_text(p, lambda t: t.replace("2026-12-03T10:42:17.123456789Z", "yesterday")),
        "RFC 3339",
    ),
}


@pytest.mark.parametrize("case", sorted(PARSE_CASES))
def test_a_file_that_is_not_an_outcome_is_refused(inbox: Inbox, case: str) -> None:
    make, reason = PARSE_CASES[case]
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    write_outcome(placed, make(placed))
    with pytest.raises(UntrustedOutcome) as raised:
        answer_inbox.wait(placed, timeout=5)
    assert reason in raised.value.reason

    blocked = inbox.run("answer", placed.id, "--set", "go=yes")
    assert blocked.returncode == 6, blocked.stderr


def test_the_genuine_outcome_is_accepted_by_both(inbox: Inbox) -> None:
    # The control for the cases above: unspoiled, the same file is an answer.
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    written = genuine(placed)
    write_outcome(placed, json.dumps(written, indent=2).encode())
    outcome = answer_inbox.wait(placed, timeout=5)
    assert outcome.answers == {"go": True}
    assert outcome.answered_at.microsecond == 123456
    assert outcome.raw == written

    settled = inbox.run("answer", placed.id, "--set", "go=no")
    assert settled.returncode == 3, "the inbox took it as the outcome: already settled"


def test_a_symlinked_outcome_is_never_followed(inbox: Inbox, tmp_path: Path) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(genuine(placed)))
    os.symlink(elsewhere, placed.outcome_path)
    with pytest.raises(UntrustedOutcome, match="symbolic link"):
        answer_inbox.wait(placed, timeout=5)


def test_a_hard_linked_outcome_is_not_read(inbox: Inbox, tmp_path: Path) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    write_outcome(placed, json.dumps(genuine(placed)).encode())
    os.link(placed.outcome_path, tmp_path / "second-name.json")
    with pytest.raises(UntrustedOutcome, match="2 hard links"):
        answer_inbox.wait(placed, timeout=5)


def test_an_outcome_that_is_not_a_regular_file_is_not_read(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    os.mkfifo(placed.outcome_path, 0o600)
    with pytest.raises(UntrustedOutcome, match="not a regular file"):
        answer_inbox.wait(placed, timeout=5)


def test_an_oversized_outcome_is_not_read(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    padded = genuine(placed)
    padded["padding"] = "x" * (1024 * 1024)
    write_outcome(placed, json.dumps(padded).encode())
    with pytest.raises(UntrustedOutcome, match="over the limit"):
        answer_inbox.wait(placed, timeout=5)


def test_another_accounts_outcome_is_not_read(inbox: Inbox) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another account needs root")
    nobody: Optional[pwd.struct_passwd] = next(
        (entry for entry in pwd.getpwall() if entry.pw_uid not in (0, os.geteuid())), None
    )
    assert nobody is not None, "no other account on this machine"
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    write_outcome(placed, json.dumps(genuine(placed)).encode())
    os.chown(placed.outcome_path, nobody.pw_uid, -1)
    with pytest.raises(UntrustedOutcome, match="an account this spool does not take files from"):
        answer_inbox.wait(placed, timeout=5)


def test_unknown_fields_are_kept_and_do_not_spoil_an_outcome(inbox: Inbox) -> None:
    placed = answer_inbox.place(confirm_request(), inbox.spool)
    extended = copy.deepcopy(genuine(placed))
    extended["future_field"] = {"nested": [1, 2]}
    # (A surface no inbox defines is another matter: the inbox's reader refuses it, and so
    # does this one; see the corpus case unknown-surface.json.)
    write_outcome(placed, json.dumps(extended).encode())
    outcome = answer_inbox.wait(placed, timeout=5)
    assert outcome.raw["future_field"] == {"nested": [1, 2]}
    assert outcome.surface == "cli"
