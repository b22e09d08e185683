"""Ask the operator from Python: place a request in an Answer Inbox spool and wait for its
outcome.

The spool protocol is files (docs/PROTOCOL.md in the Answer Inbox repository): a request
goes into ``questions/<id>.json``, the inbox writes exactly one outcome into
``answers/<id>.json``, and the asker withdraws a question with a tombstone,
``cancel/<id>``. This package is the asker's side of it, in the standard library only:

- :func:`ask`: place, then wait; returns the :class:`Outcome` when it carries answers
  (``answered``, ``defaulted``), raises :class:`Declined`, :class:`Expired`,
  :class:`Rejected`, :class:`Cancelled` or :class:`TimedOut` otherwise.
- :func:`place`, :func:`wait`, :func:`withdraw`: the steps one by one.
- Every outcome is checked before it is returned (it names the request, answers the very
  bytes placed, says consistently who decided, and gives answers the request's questions
  allow, and, where it lists approvals, that each is a distinct account's own file for this
  version and these answers); one that fails is :class:`UntrustedOutcome`, never an
  answer.

>>> from answer_inbox import ask, Declined
>>> try:                                                         # doctest: +SKIP
...     outcome = ask({"inbox": 1, "title": "Deploy billing 2.14",
...                    "questions": [{"id": "go", "type": "confirm",
...                                   "question": "Deploy to production now?"}]},
...                   timeout=3600)
... except Declined as refusal:
...     raise SystemExit(f"not deploying: {refusal.reason}")
>>> outcome.answers["go"]                                        # doctest: +SKIP
True
"""

from .approval import Approval, verify_approvals
from .client import (
    DEFAULT_POLL_INTERVAL,
    CancelToken,
    Placed,
    TimedOut,
    ask,
    ask_async,
    place,
    wait,
    wait_async,
    withdraw,
)
from .errors import (
    AnswerInboxError,
    Cancelled,
    InvalidRequest,
    NoSpool,
    NotAnswered,
    NotASpool,
    RequestExists,
    SpoolError,
    UnsafeSpool,
    UntrustedOutcome,
)
from .ids import is_valid_id, new_id
from .locations import SPOOL_ENV, default_spool_dir
from .outcome import (
    Declined,
    Expired,
    Outcome,
    Problem,
    Rejected,
    SettledByPolicy,
    parse_outcome,
    verify_outcome,
    verify_owner,
)
from .request import Prepared, prepare

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "SPOOL_ENV",
    "AnswerInboxError",
    "Approval",
    "CancelToken",
    "Cancelled",
    "Declined",
    "Expired",
    "InvalidRequest",
    "NoSpool",
    "NotASpool",
    "NotAnswered",
    "Outcome",
    "Placed",
    "Prepared",
    "Problem",
    "Rejected",
    "RequestExists",
    "SettledByPolicy",
    "SpoolError",
    "TimedOut",
    "UnsafeSpool",
    "UntrustedOutcome",
    "ask",
    "ask_async",
    "default_spool_dir",
    "is_valid_id",
    "new_id",
    "parse_outcome",
    "place",
    "prepare",
    "verify_outcome",
    "verify_approvals",
    "verify_owner",
    "wait",
    "wait_async",
    "withdraw",
]
