"""Reading a placed request's questions, and checking answers against them, as the inbox
does. The corpus (test_corpus.py) holds the cases every reader must agree on; these are
the parts on their own, and the text patterns compared with the inbox's own regex engine
through the real binary."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest
from conftest import Inbox, outcome_file

from answer_inbox import UntrustedOutcome, parse_outcome, verify_outcome
from answer_inbox.questions import (
    Choice,
    Questions,
    Unfit,
    check_answers,
    fill_defaults,
    read_questions,
    rust_pattern,
    same_json,
)


def read(value: Any) -> Optional[Questions]:
    return read_questions(json.dumps(value).encode())


def test_the_inbox_s_own_shapes_are_read_as_the_inbox_reads_them() -> None:
    envelope = read(
        {
            "inbox": 1,
            "mode": "autonomous",
            "questions": [
                {"question": "Go?", "type": "yes_no", "default": True},
                {
                    "question": "Where?",
                    "type": "single_choice",
                    "choices": [{"id": "eu", "label": "Europe"}],
                    "default": "Europe",
                    "required": False,
                },
                {"id": "tags", "question": "Tags?", "type": "multiChoice", "options": ["a"]},
            ],
        }
    )
    assert envelope is not None and envelope.mode == "autonomous"
    go, where, tags = envelope.questions
    # Ids by position; a default given by its label is recorded by its id.
    assert (go.id, go.kind, go.default) == ("q1", "confirm", True)
    assert (where.id, where.choices, where.default) == ("q2", (Choice("eu", "Europe"),), "eu")
    # Fill-in: on for the structured dialect's choices, off for the interactive one's.
    assert where.allow_custom and not tags.allow_custom and not go.allow_custom
    assert fill_defaults(envelope) == {"q1": True, "q2": "eu"}

    # The other two shapes carry no envelope fields: no mode.
    questions = [{"id": "go", "question": "Go?", "type": "confirm"}]
    for shape in (questions, {"interactiveQuestions": questions, "mode": "autonomous"}):
        read_back = read(shape)
        assert read_back is not None and read_back.mode == "interactive"
        assert [q.id for q in read_back.questions] == ["go"]


@pytest.mark.parametrize(
    "request_file",
    [
        {"message": "Who?", "requestedSchema": {"type": "object", "properties": {}}},
        {"questions": [{"question": "Which?", "header": "H", "options": [{"label": "a"}]}]},
        # LangGraph's and LangChain's dialects are read (test_dialects.py), not when they are
        # ones the inbox rejects.
        {"action_request": {"action": "x", "args": {}}, "config": {}},
        [{"action_request": {"action": "x", "args": {}}, "config": {"allow_accept": True}}] * 2,
        {"action_requests": [], "review_configs": []},
    ],
)
def test_another_system_s_dialect_is_not_read(request_file: Any) -> None:
    assert read(request_file) is None


@pytest.mark.parametrize(
    "request_file",
    [
        {"questions": []},
        {"questions": [{"question": "Go?", "type": "maybe"}]},
        {"questions": [{"question": "Go?", "type": ["confirm"]}]},
        {"questions": [{"type": "confirm"}]},
        {"questions": [{"question": "Go?", "type": "confirm", "required": None}]},
        {"questions": [{"question": "Go?", "type": "confirm", "default": "yes"}]},
        {"questions": [{"question": "Which?", "type": "choice", "options": []}]},
        {"questions": [{"question": "Go?", "type": "confirm", "options": ["a"]}]},
        {"questions": [{"question": "Go?", "type": "confirm", "pattern": "x"}]},
        {"questions": [{"id": "a", "question": "A?", "type": "confirm"}] * 2},
        {"questions": [{"question": "Go?", "type": "confirm"}], "mode": "eager"},
        {"questions": [{"question": "Go?", "type": "confirm"}], "requestedSchema": {}},
        {"questions": [{"id": "../x", "question": "Go?", "type": "confirm"}]},
    ],
)
def test_a_request_the_inbox_rejects_is_not_read(request_file: Any) -> None:
    assert read(request_file) is None


def test_files_that_are_not_json_requests_are_not_read() -> None:
    one = b'{"questions": [{"question": "Go?", "type": "confirm"}]}'
    assert read_questions(one) is not None
    for data in [
        b"\xef\xbb\xbf" + one,
        one.replace(b'"type"', b'"type": "text", "type"'),
        b"[" * 33 + b"]" * 33,
        one[:-1],
        b"",
        b"\xff",
    ]:
        assert read_questions(data) is None, data


CHOICES = read(
    {
        "questions": [
            {"id": "env", "question": "Where?", "type": "choice", "options": ["a", "b"]},
            {
                "id": "size",
                "question": "Size?",
                "type": "multi_choice",
                "choices": [{"id": "s", "label": "Small"}],
                "required": False,
            },
            {"id": "note", "question": "Note?", "type": "text", "required": False, "default": "-"},
        ]
    }
)


def unfit(given: Any) -> str:
    assert CHOICES is not None
    with pytest.raises(Unfit) as raised:
        check_answers(CHOICES, given)
    return str(raised.value)


def test_answers_are_recorded_as_an_inbox_records_them() -> None:
    assert CHOICES is not None
    # A label becomes its id, fill-in is taken where allowed, a skipped question takes its
    # default, and an empty text is no answer.
    recorded = check_answers(CHOICES, {"env": "a", "size": ["Small", "XL"], "note": ""})
    assert recorded == {"env": "a", "size": ["s", "XL"], "note": "-"}
    assert unfit({"env": "c"}) == '/env: "c" is not one of the options: "a", "b"'
    assert unfit({"env": "a", "size": ["s", "Small"]}) == '/size: "s" is picked more than once'
    assert unfit({"env": "a", "size": [" "]}) == "/size: fill-in text is empty"
    assert unfit({}) == '/env: question "env" is required and has no answer'
    assert unfit({"env": "a", "a/b": 1}) == '/a~1b: there is no question "a/b" in this request'
    assert unfit({"env": True}).startswith("/env: expected one of the options as a string")
    assert unfit({"env": "a", "note": "x" * 10_001}).startswith("/note: the text is 10001")


def test_verify_outcome_checks_the_answers_given_the_request() -> None:
    request = b'{"questions": [{"id": "go", "question": "Go?", "type": "confirm"}]}'
    sha = hashlib.sha256(request).hexdigest()
    yes = parse_outcome(json.dumps(outcome_file(request_sha256=sha)).encode(), "r")
    verify_outcome(yes, "r", sha, request)
    verify_outcome(yes, "r", None, request)
    forged = parse_outcome(
        json.dumps(outcome_file(request_sha256=sha, answers={"go": "yes"})).encode(), "r"
    )
    verify_outcome(forged, "r", sha)  # Without the request, its answers are not known.
    with pytest.raises(UntrustedOutcome, match="do not fit the request's questions: /go"):
        verify_outcome(forged, "r", None, request)
    with pytest.raises(ValueError):
        verify_outcome(yes, "r", "cd" * 32, request)


def test_json_values_compare_as_the_rust_side_compares_them() -> None:
    assert same_json({"a": [1, "x", None]}, {"a": [1, "x", None]})
    assert not same_json(False, 0)
    assert not same_json(1, 1.0)
    assert not same_json({"a": 1}, {"a": 1, "b": 2})


# --- Patterns, against the inbox's own regex engine ---------------------------------------

#: (pattern, text, whether Python reads the pattern alike).
PATTERNS: List[Tuple[str, str, bool]] = [
    ("^[A-Z]+-[0-9]+$", "OPS-12", True),
    ("^[A-Z]+-[0-9]+$", "OPS-12\n", True),
    ("^[A-Z]+-[0-9]+$", "ops-12", True),
    ("[0-9]{3}", "a1234", True),
    ("^(?:yes|no)$", "yesno", True),
    ("^(yes|no)$", "no", True),
    ("^a.c$", "a\nc", True),
    ("^a.c$", "abc", True),
    ("^\\d+$", "\u0661\u0662", True),
    ("^[a-c]+?x{2,}$", "abxx", True),
    ("colou?r", "color", True),
    ("^\\.\\*\\+\\?$", ".*+?", True),
    ("^[^,]+$", "a,b", True),
    ("^[\\-a]+$", "-a-", True),
    ("^[$]$", "$", True),
    ("^x{2,3}$", "xxxx", True),
    ("^$", "", True),
    ("^\\s+$", " ", False),
    ("^\\w+$", "a_b", False),
    ("[[:alpha:]]+", "abc", False),
    ("(?i)^abc$", "ABC", False),
    ("\\bword\\b", "a word", False),
    ("^\\p{L}+$", "abc", False),
    ("^a{,3}$", "aa", False),  # Not even Rust's: the inbox rejects it.
    ("^[a-z&&[^x]]+$", "abc", False),
]


def test_patterns_in_the_plain_subset_match_as_the_inbox_matches(
    inbox: Inbox, tmp_path: Path
) -> None:
    """Each (pattern, text) is a text question whose default is the text: the inbox finds
    the request valid only if the default matches. Python must say the same wherever it
    reads the pattern, and reads it wherever it says it does."""
    request = {
        "questions": [
            {"id": f"p{i}", "question": "?", "type": "text", "pattern": p, "default": t}
            for i, (p, t, _) in enumerate(PATTERNS)
        ]
    }
    path = tmp_path / "patterns.json"
    path.write_text(json.dumps(request))
    report = json.loads(inbox.run("check", "--json", str(path)).stdout)[0]
    refused = {error["pointer"] for error in report["errors"]}
    for i, (pattern, text, alike) in enumerate(PATTERNS):
        compiled = rust_pattern(pattern)
        assert (compiled is not None) == alike, pattern
        if compiled is not None:
            assert f"/questions/{i}/pattern" not in refused, (pattern, report)
            inbox_matches = f"/questions/{i}/default" not in refused
            assert (compiled.search(text) is not None) == inbox_matches, (pattern, text)
