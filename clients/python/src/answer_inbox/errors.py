"""The client's errors, one class per way a question can end without an answer or fail to
be asked.

All derive from :class:`AnswerInboxError`. The ones that mean "the request is settled or
withdrawn, but there is no answer to go on with" also derive from :class:`NotAnswered`, so
a pipeline that only cares whether it may proceed catches that one class.

The errors that carry an outcome (:class:`~answer_inbox.Declined`,
:class:`~answer_inbox.Expired`, :class:`~answer_inbox.Rejected`,
:class:`~answer_inbox.SettledByPolicy`) live beside :class:`~answer_inbox.Outcome` in
``outcome.py``, and :class:`~answer_inbox.TimedOut`, which carries what was placed, beside
:class:`~answer_inbox.Placed` in ``client.py``: this module imports none of the others, so
no two modules import each other. Import every error from the package itself.
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "AnswerInboxError",
    "SpoolError",
    "NotASpool",
    "UnsafeSpool",
    "NoSpool",
    "InvalidRequest",
    "RequestExists",
    "NotAnswered",
    "Cancelled",
    "UntrustedOutcome",
]


class AnswerInboxError(Exception):
    """Base class of every error this package raises."""


# --- The spool ------------------------------------------------------------------------


class SpoolError(AnswerInboxError):
    """The spool directory cannot be opened, created or written."""


class NotASpool(SpoolError):
    """The directory holds something a spool never does (a project's files, a home
    directory). Nothing in it was touched: nothing created, nothing deleted."""

    def __init__(self, root: str, entry: str) -> None:
        self.root = root
        self.entry = entry
        super().__init__(
            f"{root} is not a spool: it holds {entry!r}, and a spool holds only questions/, "
            "answers/, cancel/, tmp/ and .answer-inbox-spool. Nothing was touched (nothing "
            "created, nothing deleted). Choose a new or empty directory, or an existing spool."
        )


class UnsafeSpool(SpoolError):
    """The spool or one of its directories cannot be used safely: it is a symbolic link,
    or not a directory. Nothing was touched."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} cannot be used as a spool: {reason}. Nothing was touched.")


class NoSpool(SpoolError):
    """No spool was named and there is no default (no home directory to find the XDG data
    directory in)."""

    def __init__(self) -> None:
        super().__init__(
            "cannot find the user's data directory (is HOME set?); set ANSWER_INBOX_DIR or "
            "pass spool="
        )


# --- The request ----------------------------------------------------------------------


class InvalidRequest(AnswerInboxError, ValueError):
    """The request cannot be placed: it is not JSON, too large, or its id is not a valid
    request id (or disagrees with the id given). Nothing was placed.

    The client does not check the questions themselves: an inbox answers a request with
    invalid questions with a ``rejected`` outcome, raised as :class:`Rejected`. Check
    requests before shipping a pipeline with ``answer-inbox check FILE``.
    """


class RequestExists(AnswerInboxError):
    """A request with this id is already in the spool. Requests are immutable: a new
    question needs a new id."""

    def __init__(self, id: str, spool: str) -> None:
        self.id = id
        self.spool = spool
        super().__init__(
            f'a request with id "{id}" is already in the spool {spool}; use a new id for a new '
            "question"
        )


# --- How a question ended without an answer -------------------------------------------


class NotAnswered(AnswerInboxError):
    """The question ended (or the wait did) without answers to go on with. The
    subclasses say how."""


class Cancelled(NotAnswered):
    """The request was withdrawn with a tombstone (``cancel/<id>``): by this process
    (:func:`answer_inbox.withdraw`, a :class:`~answer_inbox.CancelToken`) or by anyone else
    (``answer-inbox cancel``). There is no outcome."""

    def __init__(self, id: str, reason: Optional[str] = None) -> None:
        self.id = id
        self.reason = reason
        detail = f": {reason}" if reason else ""
        super().__init__(f'request "{id}" was withdrawn by its asker{detail}')


# --- An outcome that is not one -------------------------------------------------------


class UntrustedOutcome(AnswerInboxError):
    """``answers/<id>.json`` exists but cannot be trusted as the answer to this request
    (docs/PROTOCOL.md, "Trusting an outcome"): it is not an outcome, answers another
    request or another version of it, or contradicts itself about who decided. It is never
    an answer. Since its name is taken, nobody can answer the request until the file is
    removed; the asker may withdraw it."""

    def __init__(self, id: str, reason: str) -> None:
        self.id = id
        self.reason = reason
        super().__init__(f'the outcome file of "{id}" cannot be trusted: {reason}')
