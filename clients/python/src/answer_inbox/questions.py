"""The questions of a placed request, and whether an outcome's answers fit them.

An inbox checks every answer against the request's questions before it writes an outcome,
and a policy may only stand in the questions' defaults (docs/PROTOCOL.md, "Outcomes"). A
forged outcome need not, so the asker checks the same, as the Rust client does with its
``validate`` feature (``inbox_protocol::verify_outcome_for``): the answers are checked
as the inbox checks an operator's (``check_answers``), a policy's answers must be the
defaults (``fill_defaults``), autonomous mode only settles a request that asked for it,
and a request in the inbox's own shapes has no ``reply``.

The inbox's own request shapes are read here (the envelope, a bare array of questions and
``{"interactiveQuestions": [...]}``, in both question dialects), and two agents' dialects:
LangGraph's HumanInterrupt (alone or as a one-element list) and LangChain v1's HITLRequest
(``HumanInTheLoopMiddleware``). Those become questions as the Rust protocol crate makes them
(``dialects/interrupt.rs``, ``dialects/langchain.rs``), and their outcome's ``reply`` must be
the one its answers make (:func:`dialect_reply`), as ``verify_outcome_for`` checks it. The
other dialects (MCP elicitation, AskUserQuestion) give ``None``, and so does a request this
module cannot read (not JSON, a question of no known type, ...): the inbox rejects such a
request, and a rejection carries no answers to check. Their outcomes are checked by their
own fields alone, and the client hands out no ``reply`` it could not check.

Whether a request is valid is not decided here (that takes the inbox's JSON Schema and the
confusable-character tables of Unicode TS #39): a ``rejected`` outcome is taken at its word.
"""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Dict, List, Optional, Pattern, Tuple

from . import _json
from .ids import is_valid_id
from .spool import MAX_FILE_BYTES

#: The most questions a request may hold, its dialect's questions included
#: (``MAX_QUESTIONS`` in limits.rs).
MAX_QUESTIONS = 50

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_REQUEST_DEPTH",
    "MODES",
    "QUESTION_TYPES",
    "Choice",
    "Question",
    "Questions",
    "Unfit",
    "check_answers",
    "dialect_reply",
    "fill_defaults",
    "read_questions",
    "same_json",
]

#: The longest text answer or fill-in, in characters (``MAX_ANSWER_CHARS`` in the Rust
#: protocol crate's limits.rs).
MAX_ANSWER_CHARS = 10_000

#: The deepest nesting of arrays and objects in a request file (``MAX_DEPTH`` in limits.rs).
MAX_REQUEST_DEPTH = 32

#: The question types of both dialects, and the kind each is.
QUESTION_TYPES = {
    "choice": "choice",
    "multiChoice": "multi",
    "text": "text",
    "confirm": "confirm",
    "yes_no": "confirm",
    "single_choice": "choice",
    "multi_choice": "multi",
    "free_text": "text",
}

#: The structured dialect's types: fill-in answers are allowed unless a question says not.
_STRUCTURED = frozenset({"yes_no", "single_choice", "multi_choice", "free_text"})

#: A request's modes.
MODES = ("interactive", "autonomous")


@dataclass(frozen=True)
class Choice:
    """One option of a choice question: the value an outcome records, and what is shown."""

    id: str
    label: str


@dataclass(frozen=True)
class Question:
    """One question, normalised as the inbox normalises it."""

    id: str
    #: ``confirm``, ``choice``, ``multi`` or ``text``.
    kind: str
    choices: Tuple[Choice, ...]
    #: The default as the inbox records it (a choice given by its label becomes its id), or
    #: ``None`` when there is none.
    default: Any
    required: bool
    pattern: Optional[str]
    allow_custom: bool
    #: ``(question id, value)``: required when that question's answer is that value (the
    #: agents' dialects ask for edited arguments or a message this way).
    required_if: Optional[Tuple[str, Any]] = None
    #: The answer must be a JSON object as text (edited arguments).
    json_object: bool = False


@dataclass(frozen=True)
class Origin:
    """The agent dialect a request came in, and what its reply is made of."""

    #: ``interrupt`` (LangGraph HumanInterrupt) or ``langchain`` (LangChain v1 HITL).
    kind: str
    #: The tools asked about, in order (one for an interrupt).
    actions: Tuple[str, ...]
    #: An interrupt given as a one-element list is answered with a list.
    listed: bool = False


@dataclass(frozen=True)
class Questions:
    """What an outcome is checked against: a request's questions and its mode, and for an
    agent dialect, where it came from."""

    questions: Tuple[Question, ...]
    mode: str
    origin: Optional[Origin] = None

    def question(self, id: str) -> Optional[Question]:
        return next((q for q in self.questions if q.id == id), None)


class Unfit(Exception):
    """An answer the question would refuse; the message says why, as the inbox says it."""


class _Unreadable(Exception):
    """The request is not one this module reads."""


# --- Reading a request ------------------------------------------------------------------


def read_questions(data: bytes) -> Optional[Questions]:
    """The questions of the request file ``data``, when it is in one of the inbox's own
    shapes and reads as a request; ``None`` otherwise (another system's dialect, or a file
    the inbox rejects)."""
    try:
        return _read(data)
    except _Unreadable:
        return None


def _read(data: bytes) -> Questions:
    if len(data) > MAX_FILE_BYTES:
        raise _Unreadable
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _Unreadable from error
    if not text.strip():
        raise _Unreadable
    try:
        value = _json.loads(text, MAX_REQUEST_DEPTH)
    except ValueError as error:
        raise _Unreadable from error
    shape = _shape(value)
    if shape == "envelope":
        raw, mode = value.get("questions"), value.get("mode", "interactive")
    elif shape == "interactive":
        raw, mode = value.get("interactiveQuestions"), "interactive"
    elif shape == "questions":
        raw, mode = value, "interactive"
    elif shape in ("interrupt", "interrupt-list"):
        return _interrupt(value, data)
    elif shape == "langchain":
        return _langchain(value, data)
    else:
        raise _Unreadable
    if mode not in MODES or not isinstance(raw, list) or not raw:
        raise _Unreadable
    questions = tuple(_question(item, index) for index, item in enumerate(raw))
    if len({q.id for q in questions}) != len(questions):
        raise _Unreadable
    return Questions(questions, mode)


# Top-level keys that decide an object's shape, one group per family of shapes (as
# ``inbox_protocol::shape::detect_shape``): keys of two groups are refused.
_SHAPE_KEYS = (
    ("questions", "interactiveQuestions"),
    ("requestedSchema", "elicitationId"),
    ("action_request",),
    ("action_requests", "review_configs"),
)


def _shape(value: Any) -> str:
    """Which request shape ``value`` is, by its top-level keys alone, as the inbox decides
    it (docs/PROTOCOL.md, "Which shape a file is")."""
    if isinstance(value, list):
        first = value[0] if value else None
        interrupt = isinstance(first, dict) and "action_request" in first
        return "interrupt-list" if interrupt else "questions"
    if not isinstance(value, dict):
        raise _Unreadable
    families = [keys for keys in _SHAPE_KEYS if any(key in value for key in keys)]
    if len(families) > 1:
        raise _Unreadable
    if "action_request" in value:
        return "interrupt"
    if "action_requests" in value or "review_configs" in value:
        return "langchain"
    if "requestedSchema" in value or "elicitationId" in value:
        return "elicitation"
    if "interactiveQuestions" in value:
        return "interactive"
    if _is_ask_user_question_list(value.get("questions")):
        return "ask-user-question"
    return "envelope"


# --- The agents' dialects (crates/protocol/src/dialects) --------------------------------

#: The ids of a HumanInterrupt's questions (``INTERRUPT_*_ID`` in the Rust model).
_INTERRUPT_DECISION, _INTERRUPT_ARGS, _INTERRUPT_RESPONSE = "decision", "args", "response"

#: The decisions a LangChain tool may allow, and the HumanInterrupt's responses by the
#: flag that allows each.
_HITL_DECISIONS = ("approve", "edit", "reject", "respond")
_INTERRUPT_CONFIG = (
    ("allow_accept", "accept"),
    ("allow_edit", "edit"),
    ("allow_respond", "response"),
    ("allow_ignore", "ignore"),
)

#: What a LangChain agent is told of every action when nobody decided in time
#: (``EXPIRED_MESSAGE`` in langchain.rs).
_HITL_EXPIRED = "Nobody decided on this tool call before the request expired."


def _interrupt(value: Any, data: bytes) -> Questions:
    """A HumanInterrupt as ``dialects/interrupt.rs`` asks it: ``decision`` (the allowed
    responses), ``args`` (when editing is allowed, the arguments as its default) and
    ``response`` (when responding is allowed, required for that decision)."""
    listed = isinstance(value, list)
    if listed and len(value) != 1:
        raise _Unreadable
    raw = value[0] if listed else value
    action_request = _field(raw, "action_request", dict)
    action = _field(action_request, "action", str)
    args = _field(action_request, "args", dict)
    config = _field(raw, "config", dict)
    allowed = [id for flag, id in _INTERRUPT_CONFIG if _optional(config, flag, bool)]
    if not allowed:
        raise _Unreadable
    questions = [_decision(_INTERRUPT_DECISION, allowed)]
    if "edit" in allowed:
        questions.append(_args_question(_INTERRUPT_ARGS, args, None))
    if "response" in allowed:
        questions.append(_text_question(_INTERRUPT_RESPONSE, (_INTERRUPT_DECISION, "response")))
    return Questions(tuple(questions), _mode(raw), Origin("interrupt", (action,), listed))


def _langchain(value: Any, data: bytes) -> Questions:
    """A LangChain v1 HITLRequest as ``dialects/langchain.rs`` asks it: for action ``n``,
    ``decision-n`` (the decisions its tool allows), ``args-n`` (when editing is allowed;
    required for that decision) and ``message-n`` (when rejecting or responding is allowed;
    required for a response)."""
    actions = _field(value, "action_requests", list)
    configs = _field(value, "review_configs", list)
    if not actions or not configs:
        raise _Unreadable
    names = [_field(_is(action, dict), "name", str) for action in actions]
    allowed_by_tool: Dict[str, List[str]] = {}
    for config in configs:
        name = _field(_is(config, dict), "action_name", str)
        decisions = _field(config, "allowed_decisions", list)
        if name not in names or not decisions or any(d not in _HITL_DECISIONS for d in decisions):
            raise _Unreadable
        allowed = list(dict.fromkeys(decisions))
        # The middleware looks a tool's decisions up by its name: two configs that differ
        # could not mean anything, and the inbox rejects them.
        if allowed_by_tool.setdefault(name, allowed) != allowed:
            raise _Unreadable
    questions: List[Question] = []
    for n, (action, name) in enumerate(zip(actions, names), start=1):
        args = _field(action, "args", dict)
        if name not in allowed_by_tool:
            raise _Unreadable
        allowed = allowed_by_tool[name]
        decision = f"decision-{n}"
        questions.append(_decision(decision, allowed))
        if "edit" in allowed:
            questions.append(_args_question(f"args-{n}", args, (decision, "edit")))
        if "reject" in allowed or "respond" in allowed:
            when = (decision, "respond") if "respond" in allowed else None
            questions.append(_text_question(f"message-{n}", when))
    if len(questions) > MAX_QUESTIONS:
        raise _Unreadable
    return Questions(tuple(questions), _mode(value), Origin("langchain", tuple(names)))


def _decision(id: str, allowed: List[str]) -> Question:
    # The labels the inbox shows do not matter here: no fill-in is allowed, so an answer
    # that is not a choice's id is refused either way.
    choices = tuple(Choice(choice, choice) for choice in allowed)
    return Question(id, "choice", choices, None, True, None, False)


def _text_question(id: str, required_if: Optional[Tuple[str, Any]]) -> Question:
    return Question(id, "text", (), None, False, None, False, required_if=required_if)


def _args_question(
    id: str, args: Dict[str, Any], required_if: Optional[Tuple[str, Any]]
) -> Question:
    """The arguments to edit, as a JSON object in text; the current ones, pretty if they
    fit an answer, else on one line, are its default (too long for either is a request the
    inbox rejects)."""
    texts = (_json_text(args, 0), _json_text(args, None))
    default = next((text for text in texts if len(text) <= MAX_ANSWER_CHARS), None)
    if default is None:
        raise _Unreadable
    return replace(_text_question(id, required_if), default=default, json_object=True)


def _json_text(value: Any, indent: Optional[int]) -> str:
    """``value`` as serde_json writes it (``to_string_pretty`` when ``indent`` is given,
    else ``to_string``): keys in the order read, two spaces a level, numbers as Rust
    prints them. The inbox records this text as the arguments' default, so it must be the
    same to the character."""
    deeper = None if indent is None else indent + 2
    if isinstance(value, dict) and value:
        colon = ":" if indent is None else ": "
        items = [f"{_json_text(k, None)}{colon}{_json_text(v, deeper)}" for k, v in value.items()]
        return _enclosed("{", items, "}", indent)
    if isinstance(value, list) and value:
        return _enclosed("[", [_json_text(v, deeper) for v in value], "]", indent)
    if isinstance(value, float):
        # Python writes 1e+20 and 1e-07 where Rust writes 1e20 and 1e-7.
        mantissa, e, exponent = repr(value).partition("e")
        return mantissa + (f"e{int(exponent)}" if e else "")
    return json.dumps(value, ensure_ascii=False)


def _enclosed(open: str, items: List[str], close: str, indent: Optional[int]) -> str:
    if indent is None:
        return open + ",".join(items) + close
    inner = "\n" + " " * (indent + 2)
    return open + inner + ("," + inner).join(items) + "\n" + " " * indent + close


def _mode(raw: Dict[str, Any]) -> str:
    mode = _optional(raw, "mode", str)
    if mode is None:
        return "interactive"
    if mode not in MODES:
        raise _Unreadable
    return mode


def _field(raw: Any, name: str, kind: type) -> Any:
    """A field that must be there, of that type."""
    found = _optional(_is(raw, dict), name, kind)
    if found is None:
        raise _Unreadable
    return found


def _is(value: Any, kind: type) -> Any:
    if not isinstance(value, kind):
        raise _Unreadable
    return value


def _is_ask_user_question_list(questions: Any) -> bool:
    if not isinstance(questions, list):
        return False
    untyped = all(isinstance(item, dict) and "type" not in item for item in questions)
    marked = any(
        "header" in item
        or "multiSelect" in item
        or any(isinstance(option, dict) for option in _list(item.get("options")))
        for item in questions
        if isinstance(item, dict)
    )
    return untyped and marked


def _list(value: Any) -> List[Any]:
    return value if isinstance(value, list) else []


def _question(raw: Any, index: int) -> Question:
    if not isinstance(raw, dict):
        raise _Unreadable
    wire_type = raw.get("type")
    if not isinstance(wire_type, str) or wire_type not in QUESTION_TYPES:
        raise _Unreadable
    if not isinstance(raw.get("question"), str):
        raise _Unreadable
    kind = QUESTION_TYPES[wire_type]
    id = raw.get("id", f"q{index + 1}")
    if not is_valid_id(id):
        raise _Unreadable
    options = _optional(raw, "options", list)
    choices = _optional(raw, "choices", list)
    required = _optional(raw, "required", bool)
    allow_custom = _optional(raw, "allow_custom", bool)
    pattern = _optional(raw, "pattern", str)
    if kind in ("choice", "multi"):
        if options is not None and choices is not None:
            raise _Unreadable
        if options is not None:
            if not all(isinstance(o, str) for o in options):
                raise _Unreadable
            listed = tuple(Choice(o, o) for o in options)
        else:
            listed = tuple(_choice(c) for c in choices or [])
        if not listed or len({c.id for c in listed}) != len(listed):
            raise _Unreadable
    elif options or choices:
        raise _Unreadable
    else:
        listed = ()
    if pattern is not None and kind != "text":
        raise _Unreadable
    if allow_custom is None:
        allow_custom = wire_type in _STRUCTURED
    question = Question(
        id=id,
        kind=kind,
        choices=listed,
        default=None,
        required=True if required is None else required,
        pattern=pattern,
        allow_custom=allow_custom and kind in ("choice", "multi"),
    )
    default = raw.get("default")
    if default is None:
        return question
    try:
        checked, _custom = check_value(question, default)
    except Unfit as error:
        raise _Unreadable from error
    return replace(question, default=checked)


def _choice(raw: Any) -> Choice:
    if not isinstance(raw, dict):
        raise _Unreadable
    if not (isinstance(raw.get("id"), str) and isinstance(raw.get("label"), str)):
        raise _Unreadable
    return Choice(raw["id"], raw["label"])


def _optional(raw: Dict[str, Any], name: str, kind: type) -> Any:
    """A field that may be left out, but not given as ``null`` or as another type."""
    if name not in raw:
        return None
    found = raw[name]
    if not isinstance(found, kind):
        raise _Unreadable
    return found


# --- Checking answers -----------------------------------------------------------------


def check_value(question: Question, value: Any) -> Tuple[Any, bool]:
    """One value against one question: the value to record (a choice given by its label
    becomes its id) and whether it is fill-in text. Raises :class:`Unfit`."""
    if question.kind == "confirm":
        if not isinstance(value, bool):
            raise Unfit(f"expected true or false, got {_describe(value)}")
        return value, False
    if question.kind == "choice":
        if not isinstance(value, str):
            raise Unfit(f"expected one of the options as a string, got {_describe(value)}")
        return _check_choice(question, value)
    if question.kind == "multi":
        if not isinstance(value, list):
            raise Unfit(f"expected an array of options, got {_describe(value)}")
        picked: List[str] = []
        any_custom = False
        for item in value:
            if not isinstance(item, str):
                raise Unfit(f"expected every entry to be an option string, got {_describe(item)}")
            id, custom = _check_choice(question, item)
            if id in picked:
                raise Unfit(f'"{id}" is picked more than once')
            any_custom |= custom
            picked.append(id)
        return picked, any_custom
    if not isinstance(value, str):
        raise Unfit(f"expected a string, got {_describe(value)}")
    _check_length(value)
    if question.json_object:
        _check_json_object(value)
    if question.pattern is not None:
        compiled = rust_pattern(question.pattern)
        # A pattern beyond what both engines read alike is not checked here (README.md).
        if compiled is not None and compiled.search(value) is None:
            raise Unfit(
                f'"{_shortened(value)}" does not match the pattern {_shortened(question.pattern)}'
            )
    return value, False


def _check_json_object(text: str) -> None:
    """Edited arguments: a JSON object, as serde_json reads one (a key given twice is its
    last value there, so it is here)."""
    try:
        value = _json.loads(text, unique_keys=False)
    except (ValueError, RecursionError) as error:
        raise Unfit(f"expected a JSON object {{...}}, but it is not valid JSON: {error}") from error
    if not isinstance(value, dict):
        raise Unfit(f"expected a JSON object {{...}}, got {_describe(value)}")


def _json_object(text: Any) -> Optional[Dict[str, Any]]:
    """``text`` read as a JSON object, or ``None``."""
    if not isinstance(text, str):
        return None
    try:
        value = _json.loads(text, unique_keys=False)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _check_choice(question: Question, text: str) -> Tuple[str, bool]:
    if any(c.id == text for c in question.choices):
        return text, False
    # Operators think in labels; outcomes carry ids.
    by_label = [c for c in question.choices if c.label == text]
    if len(by_label) == 1:
        return by_label[0].id, False
    if question.allow_custom:
        if not text.strip():
            raise Unfit("fill-in text is empty")
        _check_length(text)
        return text, True
    options = ", ".join(f'"{c.id}"' for c in question.choices)
    raise Unfit(f'"{text}" is not one of the options: {options}')


def _check_length(text: str) -> None:
    if len(text) > MAX_ANSWER_CHARS:
        raise Unfit(
            f"the text is {len(text)} characters, over the limit of {MAX_ANSWER_CHARS}"
        )


def _is_blank(question: Question, value: Any) -> bool:
    """Whether a given value counts as no answer for this question."""
    if value is None:
        return True
    if isinstance(value, str):
        return question.kind == "text" and not value
    if isinstance(value, list):
        return question.kind == "multi" and not value
    return False


def check_answers(request: Questions, given: Dict[str, Any]) -> Dict[str, Any]:
    """The answers an inbox would record for ``given``: every key a question, every value
    one its question allows, every required question answered, skipped optional questions
    taking their defaults. Raises :class:`Unfit` with the first problem, as the inbox
    words it (``/<question id>: ...``)."""
    problems: List[str] = []
    for key in sorted(given):
        if request.question(key) is None:
            problems.append(f'/{_pointer_token(key)}: there is no question "{key}" in this request')
    answers: Dict[str, Any] = {}
    for question in request.questions:
        at = f"/{_pointer_token(question.id)}"
        value = given.get(question.id)
        if question.id in given and not _is_blank(question, value):
            try:
                answers[question.id] = check_value(question, value)[0]
            except Unfit as error:
                problems.append(f"{at}: {error}")
        elif question.required:
            problems.append(f'{at}: question "{question.id}" is required and has no answer')
        elif question.default is not None:
            answers[question.id] = question.default
    for question in request.questions:
        # Required because another answer is what its rule names; a value given but refused
        # has its problem already.
        condition = question.required_if
        if question.id in answers or condition is None:
            continue
        if condition[0] in answers and same_json(answers[condition[0]], condition[1]):
            if question.id not in given or _is_blank(question, given[question.id]):
                problems.append(
                    f"/{_pointer_token(question.id)}: question \"{question.id}\" is required "
                    f"when \"{condition[0]}\" is {json.dumps(condition[1], ensure_ascii=False)}"
                )
    if problems:
        raise Unfit(problems[0])
    return answers


def fill_defaults(request: Questions) -> Dict[str, Any]:
    """The answers a policy may give: every question's default, where it has one."""
    return {q.id: q.default for q in request.questions if q.default is not None}


def dialect_reply(
    request: Questions, status: str, answers: Dict[str, Any], reason: Optional[str]
) -> Any:
    """The reply an outcome of ``status`` with ``answers`` (and a decline's ``reason``)
    makes for a request in an agent's dialect, as ``inbox_protocol::dialect_reply`` makes
    it: a HumanResponse for a HumanInterrupt, a HITLResponse (``{"decisions": [...]}``)
    for LangChain. ``None`` for the inbox's own shapes and for a rejection."""
    origin = request.origin
    if origin is None or status == "rejected":
        return None
    answered = status in ("answered", "defaulted")
    if origin.kind == "interrupt":
        response = _interrupt_response(origin.actions[0], answers if answered else {})
        return [response] if origin.listed else response
    if status == "declined":
        decisions = [_reject(reason) for _ in origin.actions]
    elif status == "expired":
        decisions = [_reject(_HITL_EXPIRED) for _ in origin.actions]
    else:
        decisions = [_hitl_decision(n, name, answers) for n, name in enumerate(origin.actions, 1)]
    return {"decisions": decisions}


def _interrupt_response(action: str, answers: Dict[str, Any]) -> Dict[str, Any]:
    """LangGraph's HumanResponse. Anything but a decision to act is ``ignore``: the agent
    must not act, and HumanResponse has no other way to say so."""
    decision = answers.get(_INTERRUPT_DECISION)
    if decision == "accept":
        return {"type": "accept", "args": None}
    if decision == "edit":
        args = _json_object(answers.get(_INTERRUPT_ARGS))
        if args is not None:
            return {"type": "edit", "args": {"action": action, "args": args}}
    if decision == "response":
        text = answers.get(_INTERRUPT_RESPONSE)
        return {"type": "response", "args": text if isinstance(text, str) else ""}
    return {"type": "ignore", "args": None}


def _hitl_decision(n: int, name: str, answers: Dict[str, Any]) -> Dict[str, Any]:
    """Action ``n``'s LangChain decision; anything but a decision to act rejects it."""
    message = answers.get(f"message-{n}")
    message = message if isinstance(message, str) and message else None
    decision = answers.get(f"decision-{n}")
    if decision == "approve":
        return {"type": "approve"}
    if decision == "edit":
        args = _json_object(answers.get(f"args-{n}"))
        if args is None:
            return _reject(None)
        return {"type": "edit", "edited_action": {"name": name, "args": args}}
    if decision == "respond":
        return {"type": "respond", "message": message or ""}
    return _reject(message)


def _reject(message: Optional[str]) -> Dict[str, Any]:
    return {"type": "reject"} if message is None else {"type": "reject", "message": message}


def same_json(a: Any, b: Any) -> bool:
    """Whether two parsed JSON values are the same value, as the Rust side compares them:
    ``true`` is not ``1``, and ``1`` is not ``1.0``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _pointer_token(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _shortened(text: str) -> str:
    return text if len(text) <= 60 else text[:60] + "\u2026"


# --- Patterns -------------------------------------------------------------------------

# Escapes both engines read alike: punctuation as itself, digits, newline and tab.
_ESCAPES = frozenset("\\.+*?()|[]{}^$-/dDnt")
_REPEAT = re.compile(r"\{[0-9]+(,[0-9]*)?\}", re.ASCII)


@lru_cache(maxsize=64)
def rust_pattern(pattern: str) -> Optional[Pattern[str]]:
    """``pattern`` (Rust ``regex`` syntax) as a Python pattern that matches the same texts,
    or ``None`` when it uses anything beyond a plain subset both engines read alike:
    literals, ``.``, groups (``(...)``, ``(?:...)``), alternation, the quantifiers ``*``,
    ``+``, ``?`` and ``{n}``, ``{n,}``, ``{n,m}`` (greedy or lazy), ``^``, ``$``, classes
    of characters, ranges and escapes (no nested classes or class operations), and the
    escapes ``\\d``, ``\\D``, ``\\n``, ``\\t`` and of punctuation. No flags, no ``\\w``,
    ``\\s`` or ``\\b`` (whose Unicode classes differ), no ``\\p{...}``.

    ``$`` becomes ``\\Z``: in Rust it is the end of the text, in Python also the place
    before a final newline.
    """
    out: List[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n or pattern[i + 1] not in _ESCAPES:
                return None
            out.append(pattern[i : i + 2])
            i += 2
        elif c == "[":
            end = _class_end(pattern, i)
            if end is None:
                return None
            out.append(pattern[i:end])
            i = end
        elif c == "(":
            if pattern.startswith("(?", i):
                if not pattern.startswith("(?:", i):
                    return None
                out.append("(?:")
                i += 3
            else:
                out.append(c)
                i += 1
        elif c == "{":
            repeat = _REPEAT.match(pattern, i)
            if repeat is None:
                return None
            out.append(repeat.group())
            i = repeat.end()
        elif c == "$":
            out.append(r"\Z")
            i += 1
        elif c == "}":
            return None
        else:
            out.append(c)
            i += 1
    try:
        with warnings.catch_warnings():
            # Python warns where it reads a class unlike Rust would (nested sets, `&&`).
            warnings.simplefilter("error")
            return re.compile("".join(out))
    except (re.error, FutureWarning, RecursionError, OverflowError):
        return None


def _class_end(pattern: str, start: int) -> Optional[int]:
    """The index after the class that starts at ``start``, when it is a plain one."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        return None
    while i < len(pattern):
        c = pattern[i]
        if c == "]":
            return i + 1
        if c == "[" or pattern.startswith(("&&", "--", "~~"), i):
            return None
        if c == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1] not in _ESCAPES:
                return None
            i += 2
        else:
            i += 1
    return None
