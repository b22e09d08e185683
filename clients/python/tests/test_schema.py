"""The client's words and limits are the protocol's. The JSON Schemas in schemas/ are
generated from the Rust types the inbox reads and writes with, and the limits the schemas do
not carry are in crates/protocol/src/limits.rs; every constant the client keeps is compared
with its source here, and the outcome reader is held to the schema field by field, so that
a change on the Rust side fails these tests until the client follows it."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Dict, Tuple

import pytest
from conftest import REPO_DIR, outcome_file

from answer_inbox import UntrustedOutcome, ids, outcome, parse_outcome, questions, spool

SCHEMAS = REPO_DIR / "schemas"
LIMITS = REPO_DIR / "crates" / "protocol" / "src" / "limits.rs"


@lru_cache(maxsize=None)
def schema(name: str) -> Dict[str, Any]:
    loaded: Dict[str, Any] = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return loaded


def words(definition: Dict[str, Any]) -> Tuple[str, ...]:
    """The values an enum of the schema allows, in order (`enum`, or `oneOf` of `const`s
    when its variants are documented)."""
    if "enum" in definition:
        return tuple(definition["enum"])
    return tuple(variant["const"] for variant in definition["oneOf"])


def rust_limits() -> Dict[str, int]:
    """`pub const NAME: type = <digits, _ and *>;` in limits.rs, evaluated."""
    found = {}
    for name, expression in re.findall(
        r"^pub const (\w+): \w+ = ([0-9_ *]+);", LIMITS.read_text(), re.MULTILINE
    ):
        value = 1
        for factor in expression.split("*"):
            value *= int(factor.strip().replace("_", ""))
        found[name] = value
    return found


def test_the_outcome_s_words_are_the_schema_s() -> None:
    defs = schema("outcome")["$defs"]
    assert outcome.STATUSES == words(defs["OutcomeStatus"])
    assert outcome.SURFACES == words(defs["Surface"])
    assert outcome.TRIGGERS == words(defs["Trigger"])
    assert outcome.DECIDERS == words(defs["DecidedBy"])


def test_the_request_s_words_and_id_rule_are_the_schema_s() -> None:
    defs = schema("request")["$defs"]
    assert tuple(questions.QUESTION_TYPES) == words(defs["QuestionType"])
    assert questions.MODES == words(defs["WireMode"])
    for holder in ("Envelope", "WireQuestion", "HumanInterrupt", "Elicitation"):
        assert defs[holder]["properties"]["id"]["pattern"] == ids.ID_PATTERN, holder
    longest = re.fullmatch(r"\^\[[^]]+\]\[[^]]+\]\{0,(\d+)\}\$", ids.ID_PATTERN)
    assert longest is not None and 1 + int(longest.group(1)) == ids.MAX_ID_CHARS


def test_the_question_fields_read_are_the_schema_s() -> None:
    """What questions.py reads of a question, and the types it takes them in."""
    defs = schema("request")["$defs"]
    question = defs["WireQuestion"]
    assert set(question["required"]) == {"question", "type"}
    expected = {
        "id": "string",
        "question": "string",
        "options": "array",
        "choices": "array",
        "required": "boolean",
        "allow_custom": "boolean",
        "pattern": "string",
    }
    for name, kind in expected.items():
        assert question["properties"][name]["type"] == kind, name
    assert question["properties"]["options"]["items"]["type"] == "string"
    assert set(defs["WireChoice"]["required"]) == {"id", "label"}
    assert defs["Envelope"]["properties"]["mode"]["$ref"] == "#/$defs/WireMode"


def test_the_limits_are_the_rust_protocol_s() -> None:
    limits = rust_limits()
    assert limits["MAX_FILE_BYTES"] == spool.MAX_FILE_BYTES
    assert limits["MAX_DEPTH"] == questions.MAX_REQUEST_DEPTH
    assert limits["MAX_QUESTIONS"] == questions.MAX_QUESTIONS
    assert limits["MAX_ANSWER_CHARS"] == questions.MAX_ANSWER_CHARS
    assert limits["MAX_DEVICE_NAME_CHARS"] == outcome.MAX_DEVICE_NAME_CHARS


# --- The outcome reader, field by field ---------------------------------------------------

FULL = outcome_file(
    notes={"go": "fine"},
    reason="because",
    errors=[{"pointer": "", "message": "m"}],
    decided_by="person",
    rule="policy:x",
    trigger="delay",
    surface="web",
    device="Phone",
    decision_ms=5,
    reply={"any": ["thing"]},
    approvals=[{"by": "operator:ann", "at": "2026-12-03T10:42:00Z", "surface": "cli"}],
    taken_over=True,
)

#: Fields with a default in Rust (``#[serde(default)]``) whose schema does not say so:
#: schemars leaves out the default of a field that is not written when it has it
#: (``skip_serializing_if``). Left out they are the default; ``null`` is refused.
DEFAULTED_UNSAID = {"taken_over"}

#: A value of the wrong type for each JSON Schema type.
WRONG = {"string": 5, "integer": "1", "array": {}, "object": [], "boolean": "true"}


def reads(changed: Dict[str, Any]) -> str:
    """What the reader says of FULL with ``changed``: ``"ok"`` or its refusal."""
    try:
        parse_outcome(json.dumps(outcome_file(**{**FULL, **changed})).encode(), "r")
    except UntrustedOutcome as refusal:
        return refusal.reason
    return "ok"


def test_every_field_of_the_schema_is_one_the_reader_knows() -> None:
    properties = schema("outcome")["properties"]
    assert set(FULL) == set(properties)
    known = set(outcome.Outcome.__dataclass_fields__) - {"raw"}
    assert known == set(properties)
    assert reads({}) == "ok"


@pytest.mark.parametrize("name", sorted(FULL))
def test_the_reader_takes_each_field_as_the_schema_gives_it(name: str) -> None:
    definition = schema("outcome")["properties"][name]
    required = name in schema("outcome")["required"]
    left_out = reads({name: ...})
    assert (left_out != "ok") == required, left_out
    # A field without a default (an Option in Rust) may be null; one with a default (the
    # answers and the lists) may be left out but not null.
    null = reads({name: None})
    defaulted = "default" in definition or name in DEFAULTED_UNSAID
    assert (null == "ok") == (not required and not defaulted), null
    if "$ref" in definition:
        enum = schema("outcome")["$defs"][definition["$ref"].rsplit("/", 1)[1]]
        assert "not a valid outcome" in reads({name: "not-one-of-them"})
        for word in words(enum):
            assert reads({name: word}) == "ok", word
    elif "type" in definition:
        assert "not a valid outcome" in reads({name: WRONG[definition["type"]]})
    else:
        # No type: anything goes (the dialect reply).
        assert reads({name: [1, "two", None]}) == "ok"
    widths = {"uint32": 2**32 - 1, "uint64": 2**64 - 1}
    if definition.get("format") in widths:
        widest = widths[definition["format"]]
        assert "not a valid outcome" not in reads({name: widest})
        assert "not a valid outcome" in reads({name: widest + 1})
        assert "not a valid outcome" in reads({name: -1})
    if definition.get("format") == "date-time":
        assert reads({name: "2026-12-03T10:00:00.123456789+01:00"}) == "ok"
        assert "not a valid outcome" in reads({name: "yesterday"})
