"""The outcome file: reading it strictly, and deciding whether it may be trusted as the
answer to the request that was placed (docs/PROTOCOL.md, "Outcomes" and "Trusting an
outcome").

Anyone who can write ``answers/`` can put a file there, so an outcome counts only if it
checks out, as the protocol crate's ``verify_outcome`` and ``verify_outcome_for`` check it
(the Rust client with its ``validate`` feature, and the inbox): it parses as an outcome of
protocol version 1 and names the request; its ``request_sha256`` is the SHA-256 of the
bytes placed; ``answered_by`` is ``operator:<account>`` or ``policy:<name>``; ``answered``
and ``declined`` are a person's; a ``declined`` carries a ``reason``; a ``rejected`` comes
from a policy with ``errors``; a decline or rejection carries no answers; ``decided_by``,
``rule`` and ``surface`` agree with ``answered_by``; ``device`` comes with surface ``web``
only and is one short line. Given the request as placed, in one of the inbox's own shapes,
also: the answers are ones its questions allow, recorded as an inbox records them; a
policy's answers are the questions' defaults (or, at expiry, none); autonomous mode settles
only a request that asked for it; and the ``reply`` is the one its answers make (none for
the inbox's own shapes; a HumanResponse or HITLResponse for LangGraph's and LangChain's, see
:mod:`.questions`).
Given the file's owner, :func:`verify_owner`: a person's answer is written by the account it
names (``inbox_protocol::verify::verify_owner``).

The cases every reader must agree on are the corpus tests/data/hostile/outcomes in the
repository, which tests/test_corpus.py runs; the README says where this client differs.
"""

from __future__ import annotations

import hashlib
import pwd
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Tuple

from . import _json
from .errors import NotAnswered, UntrustedOutcome
from .questions import (
    Questions,
    Unfit,
    check_answers,
    dialect_reply,
    fill_defaults,
    read_questions,
    same_json,
)

__all__ = [
    "PROTOCOL_VERSION",
    "ApprovalRef",
    "STATUSES",
    "SURFACES",
    "TRIGGERS",
    "DECIDERS",
    "Outcome",
    "Problem",
    "parse_outcome",
    "verify_outcome",
    "verify_owner",
]

#: The protocol version of requests and outcomes.
PROTOCOL_VERSION = 1

# The words of the outcome schema (schemas/outcome.schema.json, generated from the Rust
# types; tests/test_schema.py checks that these are the same).

#: Every outcome status.
STATUSES = ("answered", "defaulted", "declined", "expired", "rejected")

#: Where a decision was made. An outcome naming a surface not listed here is refused, as
#: the inbox's own reader refuses it.
SURFACES = ("window", "bubble", "cli", "policy", "web", "push")

#: What set off a policy's decision.
TRIGGERS = ("autonomous", "expiry", "delay")

#: Who decided: a person or a policy.
DECIDERS = ("person", "policy")

OPERATOR_PREFIX = "operator:"
POLICY_PREFIX = "policy:"
#: ``answered_by`` of what autonomous mode settles.
BY_AUTONOMOUS = "policy:autonomous"

#: The longest device name (surface ``web``), in characters (``MAX_DEVICE_NAME_CHARS`` in
#: the Rust protocol crate's limits.rs).
MAX_DEVICE_NAME_CHARS = 40

#: The largest ``inbox`` (a 32-bit unsigned integer) and ``decision_ms`` (64 bits).
_U32_MAX = 2**32 - 1
_U64_MAX = 2**64 - 1


@dataclass(frozen=True)
class Problem:
    """One problem with a request: where (an RFC 6901 JSON pointer into it; ``""`` is the
    whole file) and what (a plain sentence)."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


@dataclass(frozen=True)
class ApprovalRef:
    """One approval an outcome stands on, as the outcome lists it: who (``by``,
    ``operator:<account>``), when, and where."""

    by: str
    at: datetime
    surface: Optional[str] = None


@dataclass
class Outcome:
    """A checked outcome: how the request was settled.

    ``answers`` maps question ids to values (``True``/``False`` for yes/no, a string for
    one choice or text, a list of strings for several choices). ``reply`` is set for
    requests in LangGraph's HumanInterrupt or LangChain's HITL dialect: the same decision
    in that system's own answer shape, checked to be what the answers make.
    :func:`~answer_inbox.wait` and :func:`~answer_inbox.withdraw` hand out no reply they
    could not check (MCP elicitation, AskUserQuestion, a request file gone before it was
    read): there ``reply`` is ``None`` and the caller builds its own from ``answers``.
    ``raw`` is the whole file as parsed, unchecked, fields this version does not know
    included.
    """

    id: str
    status: str
    answered_by: str
    answered_at: datetime
    instance: str
    answers: Dict[str, Any] = field(default_factory=dict)
    custom: List[str] = field(default_factory=list)
    defaulted: List[str] = field(default_factory=list)
    notes: Optional[Dict[str, str]] = None
    reason: Optional[str] = None
    errors: Optional[List[Problem]] = None
    decided_by: Optional[str] = None
    rule: Optional[str] = None
    trigger: Optional[str] = None
    surface: Optional[str] = None
    device: Optional[str] = None
    decision_ms: Optional[int] = None
    request_sha256: Optional[str] = None
    reply: Any = None
    #: For a request whose rule needs several approvals: every approval the answer stands
    #: on, one per account (see :mod:`answer_inbox.approval`, which checks them).
    approvals: Optional[List[ApprovalRef]] = None
    #: The person who answered is not an assignee and took the request over.
    taken_over: bool = False
    inbox: int = PROTOCOL_VERSION
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def decider(self) -> Optional[str]:
        """Who decided, ``"person"`` or ``"policy"``: ``decided_by`` when the outcome says,
        else what ``answered_by``'s prefix says (outcomes from older inboxes)."""
        return self.decided_by or _decider_of(self.answered_by)

    @property
    def by_person(self) -> bool:
        """Whether a person (an operator) decided."""
        return self.decider == "person"

    @property
    def settled_by_policy(self) -> bool:
        """Whether the outcome's answers were given by a policy (autonomous mode, expiry,
        a rule's delay), not by a person."""
        return self.status in ("answered", "defaulted") and not self.by_person

    @property
    def account(self) -> Optional[str]:
        """The operator's account, when a person decided (``operator:<account>``)."""
        if self.answered_by.startswith(OPERATOR_PREFIX):
            return self.answered_by[len(OPERATOR_PREFIX) :]
        return None

    def raise_for_status(self) -> "Outcome":
        """Returns the outcome when it carries answers to go on with (``answered``,
        ``defaulted``); raises :class:`~answer_inbox.Declined`,
        :class:`~answer_inbox.Expired` or :class:`~answer_inbox.Rejected` otherwise."""
        if self.status == "declined":
            raise Declined(self.reason or "", self)
        if self.status == "expired":
            raise Expired(self)
        if self.status == "rejected":
            raise Rejected(list(self.errors or []), self)
        return self



# --- The outcomes that are no answer to go on with -------------------------------------


class Declined(NotAnswered):
    """The operator refused the request; ``reason`` says why. Do not go on.

    ``outcome`` is the (checked) outcome; for a request in another system's dialect its
    ``reply`` is what that system expects for a refusal (e.g. a LangGraph ``ignore``).
    """

    def __init__(self, reason: str, outcome: Outcome) -> None:
        self.reason = reason
        self.outcome = outcome
        super().__init__(f'request "{outcome.id}" was declined by {outcome.answered_by}: {reason}')


class Expired(NotAnswered):
    """Time ran out and the defaults could not answer every required question. Not a
    refusal, but not a yes either. ``outcome.answers`` holds the defaults that could be
    filled, if any."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.reason: Optional[str] = outcome.reason
        detail = f": {outcome.reason}" if outcome.reason else ""
        super().__init__(f'request "{outcome.id}" expired{detail}')


class Rejected(NotAnswered):
    """The inbox found the request invalid; ``errors`` lists every problem, each with a
    JSON pointer into the request and a sentence."""

    def __init__(self, errors: List[Problem], outcome: Outcome) -> None:
        self.errors = errors
        self.outcome = outcome
        lines = "".join(f"\n  {problem}" for problem in errors)
        super().__init__(f'request "{outcome.id}" was rejected as invalid:{lines}')


class SettledByPolicy(NotAnswered):
    """A person's decision was required (``require_person=True``) but a policy
    (autonomous mode, expiry) settled the request with its defaults. ``outcome`` is here
    to inspect; its answers are the defaults, not anyone's decision."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        super().__init__(
            f'request "{outcome.id}" was {outcome.status} by {outcome.answered_by}, not by a '
            "person, and a person's answer was required"
        )


def parse_outcome(data: bytes, id: str) -> Outcome:
    """Reads an outcome file's bytes as strictly as the inbox does: UTF-8 JSON without a
    byte-order mark, no key given twice, every known field of its type, protocol version
    1. Fields this version does not know are kept in ``raw``.

    Raises :class:`~answer_inbox.UntrustedOutcome` (for request ``id``) when the bytes are
    not such an outcome.
    """
    try:
        value = _json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise UntrustedOutcome(id, f"not a valid outcome: {error}") from error
    try:
        outcome = _outcome_from(value)
    except _Invalid as error:
        raise UntrustedOutcome(id, f"not a valid outcome: {error}") from error
    if outcome.inbox != PROTOCOL_VERSION:
        raise UntrustedOutcome(id, f"unsupported outcome version {outcome.inbox}")
    return outcome


def verify_outcome(
    outcome: Outcome,
    id: str,
    request_sha256: Optional[str],
    request: Optional[bytes] = None,
) -> None:
    """Whether ``outcome`` may be trusted as the answer to request ``id`` placed as bytes
    whose SHA-256 is ``request_sha256`` (``None`` when the caller does not know them).

    The same checks as ``inbox_protocol::verify_outcome``, with the same messages. Given
    ``request``, the bytes of the request file as placed (whose SHA-256 is
    ``request_sha256``, when that is given too), also the checks of
    ``inbox_protocol::verify_outcome_for`` that need the request's questions, when the
    request is in one of the inbox's own shapes (see :mod:`answer_inbox.questions`).

    Raises :class:`~answer_inbox.UntrustedOutcome` saying what is wrong, and
    ``ValueError`` when ``request`` and ``request_sha256`` are of different files.
    """
    if request is not None:
        placed = hashlib.sha256(request).hexdigest()
        if request_sha256 is None:
            request_sha256 = placed
        elif placed != request_sha256.lower():
            raise ValueError("request is not the file whose SHA-256 is request_sha256")
    reason = _verify(outcome, id, request_sha256)
    if reason is None and request is not None:
        questions = read_questions(request)
        if questions is not None:
            reason = _verify_answers(outcome, questions)
    if reason is not None:
        raise UntrustedOutcome(id, reason)


def verify_owner(outcome: Outcome, id: str, owner_uid: int) -> None:
    """Whether the account that owns an outcome file (``owner_uid``) may have written it: a
    person's answer (``operator:<account>``) must be owned by the account it names, so
    nobody answers in another's name. A policy's outcome names no person: who may write it
    is the spool's read rule (this account, or a member of the spool's team), which
    :meth:`Spool.read <answer_inbox.spool.Spool.read>` applies before the file is parsed.

    The rule and the message of ``inbox_protocol::verify::verify_owner``, which the inbox
    applies too. Raises :class:`~answer_inbox.UntrustedOutcome` naming both accounts.
    """
    named = outcome.account
    if named is None:
        return
    try:
        owner: Optional[str] = pwd.getpwuid(owner_uid).pw_name
    except KeyError:
        owner = None
    if owner != named:
        written_by = _one_line(owner) if owner is not None else f"uid {owner_uid}"
        raise UntrustedOutcome(
            id,
            f"it says operator:{_one_line(named)} answered, but the file was written by "
            f"{written_by}",
        )


# --- Verification ---------------------------------------------------------------------


def _verify(outcome: Outcome, id: str, request_sha256: Optional[str]) -> Optional[str]:
    if outcome.inbox != PROTOCOL_VERSION:
        return f"it is of protocol version {outcome.inbox}"
    if outcome.id != id:
        return f'it names request "{_one_line(outcome.id)}", not "{id}"'
    sha = outcome.request_sha256
    if sha is not None:
        if request_sha256 is not None and sha.lower() != request_sha256.lower():
            return "it answers another version of the request (request_sha256 differs)"
    elif outcome.status != "rejected":
        # Only the rejection of a file too big to read names no version.
        return "it does not say which version of the request it answers"
    by = outcome.answered_by
    named = _decider_of(by)
    if named is None:
        return f'answered_by "{_one_line(by)}" is neither operator:<account> nor policy:<name>'
    problem = _check_decision(outcome, named)
    if problem is not None:
        return problem
    status = outcome.status
    if status in ("answered", "declined") and named != "person":
        return f'a policy cannot have {status} it (answered_by "{_one_line(by)}")'
    if status == "declined" and not (outcome.reason or "").strip():
        return "it is declined without a reason"
    if status == "rejected" and (not outcome.errors or named != "policy"):
        return "a rejection must come from validation and say what is wrong"
    # An expiry may carry the defaults it could fill; a decline or rejection answers nothing.
    if status in ("declined", "rejected") and outcome.answers:
        return f"it is {status} yet carries answers"
    return None


def _verify_answers(outcome: Outcome, request: Questions) -> Optional[str]:
    """The checks against the request's questions, in the order and words of
    ``verify_outcome_for``. A rejection is taken at its word: whether the request is valid
    is the inbox's to say (see the README)."""
    if outcome.status in ("answered", "defaulted"):
        try:
            recorded = check_answers(request, outcome.answers)
        except Unfit as problem:
            return f"its answers do not fit the request's questions: {problem}"
        if not same_json(recorded, outcome.answers):
            return "its answers are not what the request's questions allow"
    # A policy decides nothing of its own: it can only stand in the request's defaults (or,
    # when time ran out, give no answers at all), and autonomous mode only for a request
    # that asked for it.
    by = outcome.answered_by
    if by.startswith(POLICY_PREFIX) and outcome.status != "rejected":
        none_given = outcome.status == "expired" and not outcome.answers
        if not none_given and not same_json(outcome.answers, fill_defaults(request)):
            return f"{_one_line(by)} answered with something other than the request's defaults"
        autonomous = by == BY_AUTONOMOUS or outcome.trigger == "autonomous"
        if autonomous and request.mode != "autonomous":
            return "autonomous mode settled a request that did not ask for it"
    # The reply an agent is handed must be what the answers make; the inbox's own shapes
    # have none (the outcome is the answer).
    expected = dialect_reply(request, outcome.status, outcome.answers, outcome.reason)
    if not same_json(outcome.reply, expected):
        return "its reply does not match its answers"
    return None


def _check_decision(outcome: Outcome, named: str) -> Optional[str]:
    """The decision fields, when present, must agree with ``answered_by``: a person's
    outcome cannot claim a policy decided it, nor the reverse."""
    by = outcome.answered_by
    if outcome.decided_by is not None and outcome.decided_by != named:
        return f'decided_by "{outcome.decided_by}" disagrees with answered_by "{_one_line(by)}"'
    if outcome.rule is not None and (named != "policy" or outcome.rule != by):
        return (
            f'rule "{_one_line(outcome.rule)}" is not the policy in answered_by '
            f'"{_one_line(by)}"'
        )
    if outcome.device is not None:
        problem = _check_device(outcome.device, outcome.surface)
        if problem is not None:
            return problem
    if outcome.surface == "policy" and named == "person":
        return 'a person\'s decision cannot come from surface "policy"'
    if outcome.surface is not None and outcome.surface != "policy" and named == "policy":
        return f'a policy\'s decision cannot come from surface "{_one_line(outcome.surface)}"'
    return None


def _check_device(device: str, surface: Optional[str]) -> Optional[str]:
    """A device name is the name of a paired browser: only with surface ``web``, one
    short line."""
    if surface != "web":
        return f'device "{_one_line(device)}" given for a decision not made on surface "web"'
    if not device.strip() or len(device) > MAX_DEVICE_NAME_CHARS:
        return f"device name must be 1 to {MAX_DEVICE_NAME_CHARS} characters"
    if _one_line(device) != device:
        return f'device name "{_one_line(device)}" holds control or invisible characters'
    return None


def _decider_of(answered_by: str) -> Optional[str]:
    """``"person"`` for ``operator:<account>``, ``"policy"`` for ``policy:<name>``."""
    for prefix, decider in ((OPERATOR_PREFIX, "person"), (POLICY_PREFIX, "policy")):
        if answered_by.startswith(prefix) and len(answered_by) > len(prefix):
            return decider
    return None


# Letters and marks that are nothing but blank space (Default_Ignorable_Code_Point outside
# the general category Cf): never shown raw, as on the Rust side.
_BLANK_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u034f\u17b4\u17b5\u180b\u180c\u180d\u180f")


def _is_hidden(char: str) -> bool:
    """Whether a person cannot see ``char``, or it changes how the text around it is
    shown: controls, format characters, line and paragraph separators, blank fillers."""
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") or char in _BLANK_FILLERS


def _one_line(text: str) -> str:
    """``text`` with every hidden character escaped, so a message quoting a file's value
    shows what is there and stays on one line."""
    if not any(_is_hidden(c) for c in text):
        return text
    escapes = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(escapes.get(c, f"\\u{{{ord(c):x}}}") if _is_hidden(c) else c for c in text)


# --- Parsing ----------------------------------------------------------------------------


class _Invalid(Exception):
    """A field of the outcome file is missing or of the wrong type."""


def _outcome_from(value: Any) -> Outcome:
    if not isinstance(value, dict):
        raise _Invalid("it is not a JSON object")
    fields = _Fields(value)
    outcome = Outcome(
        inbox=fields.integer("inbox", _U32_MAX, required=True),
        id=fields.text("id", required=True),
        status=fields.choice("status", STATUSES, required=True),
        answers=fields.mapping("answers"),
        custom=fields.texts("custom"),
        defaulted=fields.texts("defaulted"),
        notes=fields.notes("notes"),
        reason=fields.text("reason"),
        errors=fields.problems("errors"),
        answered_by=fields.text("answered_by", required=True),
        answered_at=fields.timestamp("answered_at"),
        decided_by=fields.choice("decided_by", DECIDERS),
        rule=fields.text("rule"),
        trigger=fields.choice("trigger", TRIGGERS),
        surface=fields.choice("surface", SURFACES),
        device=fields.text("device"),
        decision_ms=fields.integer("decision_ms", _U64_MAX),
        request_sha256=fields.text("request_sha256"),
        instance=fields.text("instance", required=True),
        reply=value.get("reply"),
        approvals=fields.approval_refs("approvals"),
        taken_over=fields.flag("taken_over"),
        raw=value,
    )
    return outcome


class _Fields:
    """Typed access to an outcome's fields, as strict as the inbox's reader: a required
    field must be there; an optional one may be missing or ``null``; the lists and the
    answers may be missing but not ``null``."""

    def __init__(self, value: Dict[str, Any]) -> None:
        self.value = value

    def _get(self, name: str, required: bool) -> Any:
        if name not in self.value:
            if required:
                raise _Invalid(f"missing field `{name}`")
            return None
        found = self.value[name]
        if found is None and required:
            raise _Invalid(f"`{name}` is null")
        return found

    def text(self, name: str, required: bool = False) -> Any:
        found = self._get(name, required)
        if found is not None and not isinstance(found, str):
            raise _Invalid(f"`{name}` must be a string")
        return found

    def integer(self, name: str, maximum: int, required: bool = False) -> Any:
        found = self._get(name, required)
        if found is None:
            return None
        if isinstance(found, bool) or not isinstance(found, int) or not 0 <= found <= maximum:
            raise _Invalid(f"`{name}` must be an integer from 0 to {maximum}")
        return found

    def choice(self, name: str, allowed: Tuple[str, ...], required: bool = False) -> Any:
        found = self.text(name, required)
        if found is not None and found not in allowed:
            raise _Invalid(
                f"`{name}` must be one of {', '.join(allowed)}, not \"{_one_line(found)}\""
            )
        return found

    def mapping(self, name: str) -> Dict[str, Any]:
        found = self.value.get(name, {})
        if not isinstance(found, dict):
            raise _Invalid(f"`{name}` must be an object")
        return found

    def texts(self, name: str) -> List[str]:
        found = self.value.get(name, [])
        if not isinstance(found, list) or not all(isinstance(item, str) for item in found):
            raise _Invalid(f"`{name}` must be an array of strings")
        return found

    def notes(self, name: str) -> Optional[Dict[str, str]]:
        found = self._get(name, False)
        if found is None:
            return None
        if not isinstance(found, dict) or not all(isinstance(v, str) for v in found.values()):
            raise _Invalid(f"`{name}` must be an object of strings")
        return found

    def problems(self, name: str) -> Optional[List[Problem]]:
        found = self._get(name, False)
        if found is None:
            return None
        if not isinstance(found, list):
            raise _Invalid(f"`{name}` must be an array of problems")
        problems = []
        for item in found:
            if not (
                isinstance(item, dict)
                and isinstance(item.get("pointer"), str)
                and isinstance(item.get("message"), str)
            ):
                raise _Invalid(f"each of `{name}` must be {{pointer, message}}, both strings")
            problems.append(Problem(item["pointer"], item["message"]))
        return problems

    def flag(self, name: str) -> bool:
        found = self.value.get(name, False)
        if not isinstance(found, bool):
            raise _Invalid(f"`{name}` must be true or false")
        return found

    def approval_refs(self, name: str) -> Optional[List[ApprovalRef]]:
        found = self._get(name, False)
        if found is None:
            return None
        if not isinstance(found, list):
            raise _Invalid(f"`{name}` must be an array of approvals")
        refs = []
        for item in found:
            if not isinstance(item, dict):
                raise _Invalid(f"each of `{name}` must be {{by, at, surface}}")
            each = _Fields(item)
            refs.append(
                ApprovalRef(
                    by=each.text("by", required=True),
                    at=each.timestamp("at"),
                    surface=each.choice("surface", SURFACES),
                )
            )
        return refs

    def timestamp(self, name: str) -> datetime:
        found = self.text(name, required=True)
        parsed = _parse_rfc3339(found)
        if parsed is None:
            raise _Invalid(f'`{name}` must be an RFC 3339 timestamp, not "{_one_line(found)}"')
        return parsed


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:?\d{2})",
    re.ASCII,
)


def _parse_rfc3339(text: str) -> Optional[datetime]:
    """An RFC 3339 timestamp as an aware UTC datetime (fractions past microseconds are
    cut), or ``None``. ``datetime.fromisoformat`` before Python 3.11 takes neither ``Z``
    nor nanoseconds, which the inbox writes."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    micros = int((match.group(7) or "0")[:6].ljust(6, "0"))
    zone = match.group(8)
    if zone in ("Z", "z"):
        offset = timedelta(0)
    else:
        sign = -1 if zone[0] == "-" else 1
        offset = sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[-2:]))
    try:
        local = datetime(year, month, day, hour, minute, min(second, 59), micros, timezone(offset))
    except ValueError:
        return None
    return local.astimezone(timezone.utc)
