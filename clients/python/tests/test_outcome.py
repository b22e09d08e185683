"""The outcome checks on their own, case by case: the same rules as the protocol crate's
``verify_outcome`` (see its unit tests), and the strict reader."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Dict

import pytest
from conftest import OUTCOME_SHA
from conftest import outcome_file as file

from answer_inbox import Declined, Expired, Outcome, Problem, Rejected, UntrustedOutcome
from answer_inbox import parse_outcome, verify_outcome

SHA = OUTCOME_SHA


def outcome(status: str, by: str, **fields: Any) -> Outcome:
    fields.setdefault("request_sha256", SHA)
    return Outcome(
        id="r",
        status=status,
        answered_by=by,
        answered_at=datetime.now(timezone.utc),
        instance="h/i",
        **fields,
    )


def refusal(candidate: Outcome, id: str = "r", sha: str = SHA) -> str:
    with pytest.raises(UntrustedOutcome) as raised:
        verify_outcome(candidate, id, sha)
    return raised.value.reason


def test_decision_fields_that_agree_pass() -> None:
    verify_outcome(
        outcome("answered", "operator:ann", decided_by="person", surface="bubble"), "r", SHA
    )
    verify_outcome(
        outcome(
            "defaulted",
            "policy:autonomous",
            decided_by="policy",
            rule="policy:autonomous",
            surface="policy",
        ),
        "r",
        SHA,
    )
    # Older inboxes wrote no decision fields: answered_by's prefix says who decided.
    old = outcome("defaulted", "policy:expiry")
    verify_outcome(old, "r", None)
    assert old.decider == "policy" and old.settled_by_policy


def test_decided_by_must_agree_with_answered_by() -> None:
    assert 'decided_by "person"' in refusal(
        outcome("defaulted", "policy:expiry", decided_by="person")
    )
    refusal(outcome("answered", "operator:ann", decided_by="policy"))
    refusal(outcome("answered", "operator:ann", rule="policy:autonomous"))
    refusal(outcome("defaulted", "policy:expiry", rule="policy:autonomous"))
    refusal(outcome("defaulted", "policy:expiry", surface="window"))
    refusal(outcome("answered", "operator:ann", surface="policy"))


def test_a_device_is_named_only_for_web_answers_and_only_as_one_short_line() -> None:
    verify_outcome(outcome("answered", "operator:ann", surface="web", device="Phone"), "r", SHA)
    assert 'not made on surface "web"' in refusal(
        outcome("answered", "operator:ann", surface="window", device="Phone")
    )
    for bad in ["", "a\nb", "Phone\u202e", "x" * 41, "\u200b"]:
        refusal(outcome("answered", "operator:ann", surface="web", device=bad))


def test_the_version_and_id_must_be_the_request_s() -> None:
    assert "request_sha256 differs" in refusal(outcome("answered", "operator:ann"), sha="cd" * 32)
    verify_outcome(outcome("answered", "operator:ann"), "r", SHA.upper())
    assert 'names request "r", not "other"' in refusal(
        outcome("answered", "operator:ann"), id="other"
    )
    unversioned = outcome("answered", "operator:ann", request_sha256=None)
    assert "does not say which version" in refusal(unversioned)
    # Only the rejection of a file too big to read names no version.
    too_big = outcome("rejected", "policy:validation", request_sha256=None, errors=[], reason=None)
    assert "a rejection must come from validation" in refusal(too_big)
    too_big.errors = [Problem("", "the file is too large")]
    verify_outcome(too_big, "r", SHA)


def test_status_specific_fields() -> None:
    assert "a policy cannot have answered it" in refusal(outcome("answered", "policy:rule:x"))
    assert "a policy cannot have declined it" in refusal(
        outcome("declined", "policy:rule:x", reason="no")
    )
    assert "declined without a reason" in refusal(outcome("declined", "operator:ann", reason="  "))
    assert "declined yet carries answers" in refusal(
        outcome("declined", "operator:ann", reason="no", answers={"go": True})
    )
    # An expiry may carry the defaults it could fill.
    verify_outcome(outcome("expired", "policy:rule:x", answers={"go": True}), "r", SHA)
    assert "neither operator:<account> nor policy:<name>" in refusal(
        outcome("answered", "operator:")
    )
    assert "\\u{1b}" in refusal(outcome("answered", "evil\x1b[2J")), "hidden characters are escaped"


def test_raise_for_status_says_how_a_question_ended() -> None:
    assert outcome("answered", "operator:ann").raise_for_status().status == "answered"
    assert outcome("defaulted", "policy:rule:x").raise_for_status().status == "defaulted"
    with pytest.raises(Declined, match="not now"):
        outcome("declined", "operator:ann", reason="not now").raise_for_status()
    with pytest.raises(Expired):
        outcome("expired", "policy:rule:x").raise_for_status()
    with pytest.raises(Rejected):
        outcome("rejected", "policy:validation").raise_for_status()


def parsed(value: Any) -> Outcome:
    return parse_outcome(json.dumps(value).encode(), "r")


def test_the_reader_takes_what_inboxes_write() -> None:
    read = parsed(
        file(
            answered_at="2026-12-03T10:42:17.856094023+01:00",
            notes={"go": "fine"},
            reply={"type": "accept", "args": None},
            decision_ms=41,
        )
    )
    assert read.answered_at == datetime(2026, 12, 3, 9, 42, 17, 856094, tzinfo=timezone.utc)
    assert read.notes == {"go": "fine"}
    assert read.reply == {"type": "accept", "args": None}
    # Absent lists take their defaults; optional fields may be null.
    minimal = parsed(file(answers=..., custom=..., defaulted=..., reason=None, decided_by=None))
    assert (minimal.answers, minimal.custom, minimal.defaulted, minimal.reason) == (
        {},
        [],
        [],
        None,
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"inbox": True},
        {"inbox": "1"},
        {"id": 5},
        {"status": "approved"},
        {"answers": None},
        {"answers": []},
        {"custom": ["a", 1]},
        {"defaulted": None},
        {"notes": {"go": 1}},
        {"errors": [{"pointer": ""}]},
        {"answered_by": None},
        {"answered_at": "2026-12-03 10:42"},
        {"answered_at": "2026-13-03T10:42:17Z"},
        {"decided_by": "robot"},
        {"trigger": "whim"},
        {"decision_ms": -1},
        {"decision_ms": 1.5},
        {"request_sha256": 7},
        {"instance": ...},
    ],
)
def test_the_reader_refuses_fields_of_the_wrong_type(changes: Dict[str, Any]) -> None:
    with pytest.raises(UntrustedOutcome, match="not a valid outcome"):
        parsed(file(**changes))


def test_the_reader_refuses_what_is_not_an_outcome_object() -> None:
    for data in [
        b"[]",
        b"null",
        b'{"inbox": 1',
        b"\xef\xbb\xbf{}",
        b'{"a": 1, "a": 2}',
        b"[Infinity]",
    ]:
        with pytest.raises(UntrustedOutcome, match="not a valid outcome"):
            parse_outcome(data, "r")
    with pytest.raises(UntrustedOutcome, match="unsupported outcome version 2"):
        parsed(file(inbox=2))
