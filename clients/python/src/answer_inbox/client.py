"""Asking: place a request, wait for its outcome, withdraw it.

Waiting polls the files (no inotify or other file events), so it works the same on local
disks, network filesystems and containers' bind mounts. Each look checks the outcome
first, then the tombstone: an outcome that exists always stands (docs/PROTOCOL.md,
"Modes, expiry, decline and cancel").

:func:`ask_async` and :func:`wait_async` are the same for asyncio: the standard library
only, each look at the files in a worker thread (a network filesystem may stall), the pause
between looks an ``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import pwd
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Optional, Tuple, Union

from .approval import Approval, parse_approval, verify_approvals
from .errors import Cancelled, NotAnswered, RequestExists, SpoolError, UntrustedOutcome
from .locations import PathArg, resolve_spool_dir
from .outcome import Outcome, SettledByPolicy, parse_outcome, verify_outcome, verify_owner
from .questions import read_questions
from .request import Prepared, RequestBody, prepare
from .spool import Spool, UnreadableFile

__all__ = [
    "DEFAULT_POLL_INTERVAL",
    "Placed",
    "CancelToken",
    "place",
    "wait",
    "withdraw",
    "ask",
    "wait_async",
    "ask_async",
]

#: How often :func:`wait` looks at the files, in seconds.
DEFAULT_POLL_INTERVAL = 0.2


@dataclass(frozen=True)
class Placed:
    """A request in the spool: what :func:`wait` and :func:`withdraw` need.

    Plain data: keep ``id``, ``sha256`` and ``spool`` (e.g. in a job's state) to wait for
    the outcome again later, from another process.
    """

    #: The request id.
    id: str
    #: The SHA-256 (hex) of the exact bytes placed: the version of the request an outcome
    #: must answer.
    sha256: str
    #: The spool directory.
    spool: str
    #: The bytes placed, kept by :func:`place` and :func:`ask` to check the outcome's
    #: answers against. In a team spool another member can delete ``questions/<id>.json``
    #: and then write an outcome; with the bytes kept here (or read once when a wait
    #: starts) it is still checked against the questions asked. Not part of the plain data
    #: above: a ``Placed`` made again from ``id``, ``sha256`` and ``spool`` reads the file.
    request: Optional[bytes] = field(default=None, repr=False, compare=False)

    @property
    def request_path(self) -> str:
        """``questions/<id>.json``: the request file."""
        return os.path.join(self.spool, "questions", f"{self.id}.json")

    @property
    def outcome_path(self) -> str:
        """``answers/<id>.json``: where the outcome appears once settled."""
        return os.path.join(self.spool, "answers", f"{self.id}.json")

    @property
    def tombstone_path(self) -> str:
        """``cancel/<id>``: where a withdrawal is placed."""
        return os.path.join(self.spool, "cancel", self.id)


class TimedOut(NotAnswered):
    """The wait's timeout passed first. The request stays pending: wait again with
    ``placed``, or withdraw it."""

    def __init__(self, placed: Placed, timeout: float) -> None:
        self.placed = placed
        self.id = placed.id
        self.timeout = timeout
        super().__init__(
            f'no outcome for request "{placed.id}" within {timeout:g} s; it is still pending'
        )


class CancelToken:
    """A switch that withdraws a waiting :func:`ask` or :func:`wait` from another thread.

    Pass it as ``cancel=``; calling :meth:`cancel` wakes the waiting call at once. It then
    places the request's tombstone (``cancel/<id>``, holding the reason), so the operator's
    inbox takes the question off the list, and raises :class:`~answer_inbox.Cancelled`,
    unless an outcome was already written: that one stands and is returned (or raised)
    instead. A token is cancelled once; the first reason is kept. One token may serve
    several calls.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._reason: Optional[str] = None

    def cancel(self, reason: str = "") -> bool:
        """Cancels, recording ``reason`` (written into the tombstone; may be empty).
        Returns ``False`` if the token was already cancelled."""
        with self._lock:
            if self._reason is not None:
                return False
            self._reason = reason
        self._event.set()
        return True

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    @property
    def reason(self) -> Optional[str]:
        """The reason given to :meth:`cancel`, once cancelled."""
        with self._lock:
            return self._reason

    def _sleep(self, seconds: float) -> None:
        self._event.wait(seconds)


def place(
    request: RequestBody, spool: Optional[PathArg] = None, *, id: Optional[str] = None
) -> Placed:
    """Places ``request`` in the spool, without waiting, and returns where it is.

    The file is written into ``tmp/``, fsynced, linked to ``questions/<id>.json`` (which
    never replaces an existing file) and the directory fsynced. ``spool`` defaults to
    ``$ANSWER_INBOX_DIR``, else ``<XDG data dir>/answer-inbox/spool``; it is created when
    missing. See :func:`~answer_inbox.request.prepare` for how the request becomes bytes
    and where its id comes from.

    Raises :class:`~answer_inbox.InvalidRequest` (nothing placed),
    :class:`~answer_inbox.RequestExists` (the id is taken; nothing replaced),
    :class:`~answer_inbox.NotASpool` / :class:`~answer_inbox.UnsafeSpool` (the directory
    is refused, untouched) or :class:`~answer_inbox.SpoolError`.
    """
    return _place_prepared(prepare(request, id), spool)


def _place_prepared(prepared: Prepared, spool: Optional[PathArg]) -> Placed:
    root = resolve_spool_dir(spool)
    with Spool.open(root) as opened:
        try:
            linked = opened.place("questions", prepared.id, prepared.data)
        except SpoolError as error:
            raise SpoolError(f'cannot place request "{prepared.id}": {error}') from error
    if not linked:
        raise RequestExists(prepared.id, root)
    return Placed(prepared.id, hashlib.sha256(prepared.data).hexdigest(), root, prepared.data)


def wait(
    placed: Placed,
    timeout: Optional[float] = None,
    *,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    cancel: Optional[CancelToken] = None,
    require_person: bool = False,
) -> Outcome:
    """Waits until the placed request is settled and returns its checked outcome, when it
    carries answers to go on with (status ``answered`` or ``defaulted``).

    Raises, when there are none: :class:`~answer_inbox.Declined` (with the operator's
    reason), :class:`~answer_inbox.Expired`, :class:`~answer_inbox.Rejected` (with the
    problems), :class:`~answer_inbox.Cancelled` (withdrawn with a tombstone, by ``cancel``
    or another process of the account that placed it), :class:`~answer_inbox.TimedOut` (``timeout`` seconds passed; the request
    stays pending), and with ``require_person`` :class:`~answer_inbox.SettledByPolicy`
    (a policy, not a person, gave the answers). An outcome file that fails the checks is
    :class:`~answer_inbox.UntrustedOutcome`, never an answer.

    ``timeout=None`` waits however long it takes. The files are looked at every
    ``poll_interval`` seconds; a ``cancel`` token wakes the wait at once.
    """
    if poll_interval <= 0:
        raise ValueError("poll_interval must be positive")
    started = time.monotonic()
    with Spool.open(placed.spool) as spool:
        request = _Request(spool, placed)
        while True:
            settled = _settled(spool, request, cancel, require_person)
            if settled is not None:
                return settled
            pause = _pause(placed, started, timeout, poll_interval)
            if cancel is not None:
                cancel._sleep(pause)
            else:
                time.sleep(pause)


async def wait_async(
    placed: Placed,
    timeout: Optional[float] = None,
    *,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    cancel: Optional[CancelToken] = None,
    require_person: bool = False,
) -> Outcome:
    """:func:`wait` for asyncio: the same outcome, the same errors, the same checks.

    Two ways to withdraw the request while waiting. A ``cancel`` token, as for
    :func:`wait`, seen within ``poll_interval``: the tombstone is placed and
    :class:`~answer_inbox.Cancelled` raised, unless an outcome already stands (that one is
    returned or raised). Or cancelling the task (``task.cancel()``, ``asyncio.wait_for``'s
    timeout, a ``TaskGroup`` failing): the tombstone is placed, unless an outcome already
    stands, so the operator is not left a question nobody waits for, and the task's
    ``CancelledError`` goes on as asyncio expects.
    """
    if poll_interval <= 0:
        raise ValueError("poll_interval must be positive")
    started = time.monotonic()
    with Spool.open(placed.spool) as spool:
        request = await asyncio.to_thread(_Request, spool, placed)
        try:
            while True:
                settled = await asyncio.to_thread(
                    _settled, spool, request, cancel, require_person
                )
                if settled is not None:
                    return settled
                await asyncio.sleep(_pause(placed, started, timeout, poll_interval))
        except asyncio.CancelledError:
            # Here, not in a thread: the task is being cancelled, and nothing it awaits now
            # is sure to run. A tombstone that cannot be written leaves the request pending;
            # the cancellation goes on all the same.
            try:
                _withdraw(spool, request, "")
            except (SpoolError, UntrustedOutcome):
                pass
            raise


def _settled(
    spool: Spool, request: "_Request", cancel: Optional[CancelToken], require_person: bool
) -> Optional[Outcome]:
    """One look, for :func:`wait` and :func:`wait_async`: the outcome to return, or the
    error that ends the wait raised, or ``None`` while the request is pending."""
    placed = request.placed
    standing = _look(spool, request)
    if isinstance(standing, Outcome):
        return _judge(standing, require_person)
    if standing is not None:
        raise standing
    if cancel is not None and cancel.cancelled:
        reason = cancel.reason or ""
        outcome = _withdraw(spool, request, reason)
        if outcome is not None:
            return _judge(outcome, require_person)
        raise Cancelled(placed.id, reason or None)
    return None


def _pause(placed: Placed, started: float, timeout: Optional[float], poll_interval: float) -> float:
    """How long to wait before the next look; raises :class:`TimedOut` when the time is up."""
    if timeout is None:
        return poll_interval
    left = timeout - (time.monotonic() - started)
    if left <= 0:
        raise TimedOut(placed, timeout)
    return min(poll_interval, left)


def withdraw(placed: Placed, reason: str = "") -> Optional[Outcome]:
    """Withdraws the placed request: places its tombstone (``cancel/<id>``, holding
    ``reason``) unless an outcome already stands, so the operator's inbox takes it off the
    list.

    Returns ``None`` when the request is withdrawn (now, or already before), or the checked
    outcome that stands, whatever its status (look at ``status``, or call
    :meth:`~answer_inbox.Outcome.raise_for_status`). Raises
    :class:`~answer_inbox.UntrustedOutcome` for an outcome file that fails the checks, and
    :class:`~answer_inbox.SpoolError` when the tombstone cannot be written (the request is
    then still pending).
    """
    with Spool.open(placed.spool) as spool:
        return _withdraw(spool, _Request(spool, placed), reason)


def ask(
    request: RequestBody,
    timeout: Optional[float] = None,
    spool: Optional[PathArg] = None,
    *,
    id: Optional[str] = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    cancel: Optional[CancelToken] = None,
    require_person: bool = False,
) -> Outcome:
    """Asks the operator: :func:`place`, then :func:`wait`, and returns the checked
    outcome when it carries answers (``answered``, ``defaulted``).

    Raises what :func:`place` and :func:`wait` raise. On :class:`~answer_inbox.TimedOut`
    the request stays pending: ``error.placed`` waits again or withdraws it. A ``cancel``
    token already cancelled means nothing is placed at all.

    >>> outcome = ask({"inbox": 1, "title": "Deploy billing 2.14",
    ...                "questions": [{"id": "go", "question": "Deploy now?",
    ...                               "type": "confirm"}]},
    ...               timeout=600)  # doctest: +SKIP
    >>> outcome.answers["go"]  # doctest: +SKIP
    True
    """
    prepared = prepare(request, id)
    if cancel is not None and cancel.cancelled:
        raise Cancelled(prepared.id, cancel.reason or None)
    placed = _place_prepared(prepared, spool)
    return wait(
        placed,
        timeout,
        poll_interval=poll_interval,
        cancel=cancel,
        require_person=require_person,
    )


async def ask_async(
    request: RequestBody,
    timeout: Optional[float] = None,
    spool: Optional[PathArg] = None,
    *,
    id: Optional[str] = None,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    cancel: Optional[CancelToken] = None,
    require_person: bool = False,
) -> Outcome:
    """:func:`ask` for asyncio: :func:`place` (in a worker thread), then
    :func:`wait_async`. Raises what they raise; cancelling the task withdraws the request
    as :func:`wait_async` says.

    >>> outcome = await ask_async({"inbox": 1, "title": "Deploy billing 2.14",
    ...                            "questions": [{"id": "go", "question": "Deploy now?",
    ...                                           "type": "confirm"}]},
    ...                           timeout=600)  # doctest: +SKIP
    """
    prepared = prepare(request, id)
    if cancel is not None and cancel.cancelled:
        raise Cancelled(prepared.id, cancel.reason or None)
    placed = await asyncio.to_thread(_place_prepared, prepared, spool)
    return await wait_async(
        placed,
        timeout,
        poll_interval=poll_interval,
        cancel=cancel,
        require_person=require_person,
    )


# --- The files, looked at ---------------------------------------------------------------


class _Request:
    """The request a wait checks its outcome against: the bytes :func:`place` kept, else
    the file as first read (while the wait lasts), kept from then on. Rust's client reads
    the request once, when its wait starts (crates/client/src/wait.rs, ``Expected::of``),
    and never again: a request file deleted afterwards, by its asker or (in a team spool,
    group-writable without the sticky bit) by any member, changes nothing, so a forged
    outcome cannot slip past the answer checks by deleting it first. Bytes that are not the
    version placed (their SHA-256 differs) are never taken. A request never read is checked
    as Rust checks it then: by the outcome's own fields (and the version placed)."""

    def __init__(self, spool: Spool, placed: Placed) -> None:
        self.placed = placed
        self._data: Optional[bytes] = None
        if placed.request is not None and self._is_placed(placed.request):
            self._data = placed.request
        else:
            self.data(spool)

    def data(self, spool: Spool) -> Optional[bytes]:
        """The bytes placed, once had; ``None`` until the file has been read."""
        if self._data is None:
            try:
                read = spool.read("questions", self.placed.id)
            except UnreadableFile:
                read = None
            if read is not None and self._is_placed(read):
                self._data = read
        return self._data

    def _is_placed(self, data: bytes) -> bool:
        return hashlib.sha256(data).hexdigest() == self.placed.sha256.lower()


def _look(spool: Spool, request: _Request) -> Union[Outcome, Cancelled, None]:
    """What the files say about the request now: its checked outcome, its tombstone (as
    the error to raise), or nothing yet. An outcome file that does not answer this request,
    or says a person answered who does not own it, is :class:`UntrustedOutcome`."""
    placed = request.placed
    try:
        file = spool.read_owned("answers", placed.id)
    except UnreadableFile as error:
        raise UntrustedOutcome(placed.id, error.reason) from error
    if file is not None:
        data, owner_uid = file
        outcome = parse_outcome(data, placed.id)
        asked = request.data(spool)
        verify_outcome(outcome, placed.id, placed.sha256, asked)
        verify_owner(outcome, placed.id, owner_uid)
        # Every approval it lists: a distinct account's own file, for this version and
        # these answers (the inbox's and the Rust client's check too).
        problem = verify_approvals(outcome, lambda account: _approval(spool, placed.id, account))
        if problem is not None:
            raise UntrustedOutcome(placed.id, problem)
        if outcome.reply is not None and (asked is None or read_questions(asked) is None):
            # A reply whose request could not be read here is unchecked: an agent handed it
            # would trust whoever can write answers/. Its answers are what there is.
            outcome = replace(outcome, reply=None)
        return outcome
    return _tombstone(spool, placed.id)


def _approval(spool: Spool, id: str, account: str) -> Tuple[Approval, Optional[str], int]:
    """``account``'s approval of ``id`` as :func:`verify_approvals` checks it: parsed, with
    its owner's name and uid; ``ValueError`` says why it cannot be had."""
    try:
        file = spool.read_approval(id, account)
    except UnreadableFile as error:
        raise ValueError(error.reason) from error
    if file is None:
        raise ValueError("the file does not exist")
    data, uid = file
    try:
        owner: Optional[str] = pwd.getpwuid(uid).pw_name
    except KeyError:
        owner = None
    return parse_approval(data), owner, uid


def _tombstone(spool: Spool, id: str) -> Optional[Cancelled]:
    """The request's withdrawal, if its placer wrote one: the account that owns the request
    file, or this process's own once that file is gone, as the inbox decides. Another
    member's tombstone, or one the spool's read rule refuses (a link, another account's in
    a private spool), leaves the request pending in the inbox: the asker goes on waiting."""
    try:
        file = spool.read_owned("cancel", id)
    except UnreadableFile:
        return None
    if file is None:
        return None
    data, owner_uid = file
    try:
        request = spool.read_owned("questions", id)
    except UnreadableFile:
        request = None
    placer = request[1] if request is not None else os.getuid()
    if owner_uid != placer:
        return None
    reason = data.decode("utf-8", errors="replace").strip()
    return Cancelled(id, reason or None)


def _withdraw(spool: Spool, request: _Request, reason: str) -> Optional[Outcome]:
    """Places the tombstone unless the request is settled; returns the outcome that
    stands, if any."""
    placed = request.placed
    standing = _look(spool, request)
    if standing is None:
        try:
            spool.place("cancel", placed.id, reason.encode("utf-8"))
        except SpoolError as error:
            raise SpoolError(f'cannot withdraw request "{placed.id}": {error}') from error
        # An inbox may have linked its outcome between the look and the tombstone; if so,
        # that outcome stands, and this look returns it.
        standing = _look(spool, request)
    return standing if isinstance(standing, Outcome) else None


def _judge(outcome: Outcome, require_person: bool) -> Outcome:
    outcome.raise_for_status()
    if require_person and outcome.settled_by_policy:
        raise SettledByPolicy(outcome)
    return outcome
