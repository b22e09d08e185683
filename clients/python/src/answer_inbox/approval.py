"""Approvals: the outcome of a request that needs several people (docs/TEAMS.md).

A rule with ``approvals = N`` makes each assignee's answer an approval file,
``approvals/<id>+<account>.json``, owned by the account that approved. The request settles
when N distinct accounts approved the same version with the same answers, and the outcome
lists them (``approvals: [{by, at, surface}]``). An asker cannot know the rule, but it can
check that what the outcome lists is true: :func:`verify_approvals` makes the checks of
``inbox_protocol::approval::verify_approvals``, in its order and words (the shared corpus,
tests/data/hostile/outcomes, holds every reader to them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _json
from .ids import is_valid_account
from .outcome import (
    OPERATOR_PREFIX,
    PROTOCOL_VERSION,
    SURFACES,
    Outcome,
    _Fields,
    _Invalid,
    _one_line,
)
from .questions import same_json

__all__ = ["Approval", "parse_approval", "verify_approval", "verify_approvals"]


@dataclass
class Approval:
    """One approval, as its approver's inbox wrote it."""

    id: str
    request_sha256: str
    approved_by: str
    approved_at: datetime
    instance: str
    answers: Dict[str, Any] = field(default_factory=dict)
    custom: List[str] = field(default_factory=list)
    defaulted: List[str] = field(default_factory=list)
    surface: Optional[str] = None
    device: Optional[str] = None
    taken_over: bool = False
    inbox: int = PROTOCOL_VERSION

    @property
    def account(self) -> Optional[str]:
        """The account in ``approved_by``, if it names one."""
        if self.approved_by.startswith(OPERATOR_PREFIX) and len(self.approved_by) > len(
            OPERATOR_PREFIX
        ):
            return self.approved_by[len(OPERATOR_PREFIX) :]
        return None


class _Refused(Exception):
    """Why an outcome's approvals do not stand."""


def parse_approval(data: bytes) -> Approval:
    """An approval file's bytes, read as strictly as an outcome's. Raises ``ValueError``
    saying what is wrong, in the Rust reader's words where they are not serde's own."""
    try:
        value = _json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise ValueError(f"not a valid approval: {error}") from error
    if not isinstance(value, dict):
        raise ValueError("not a valid approval: it is not a JSON object")
    fields = _Fields(value)
    try:
        approval = Approval(
            inbox=fields.integer("inbox", 2**32 - 1, required=True),
            id=fields.text("id", required=True),
            request_sha256=fields.text("request_sha256", required=True),
            approved_by=fields.text("approved_by", required=True),
            approved_at=fields.timestamp("approved_at"),
            answers=fields.mapping("answers"),
            custom=fields.texts("custom"),
            defaulted=fields.texts("defaulted"),
            surface=fields.choice("surface", SURFACES),
            device=fields.text("device"),
            taken_over=fields.flag("taken_over"),
            instance=fields.text("instance", required=True),
        )
    except _Invalid as error:
        raise ValueError(f"not a valid approval: {error}") from error
    if approval.inbox != PROTOCOL_VERSION:
        raise ValueError(f"unsupported approval version {approval.inbox}")
    return approval


def verify_approval(
    approval: Approval, id: str, sha256: str, owner: Optional[str], uid: int
) -> Optional[str]:
    """Why ``approval`` may not count for request ``id`` in version ``sha256``, or
    ``None`` when it may: it names the request, names the account that owns the file
    (``owner``: its name, ``None`` when unknown; ``uid`` for the message), and is for that
    very version (``inbox_protocol::approval::verify_approval``)."""
    if approval.id != id:
        return f'it names request "{_one_line(approval.id)}", not "{id}"'
    account = approval.account
    if account is None:
        return f'approved_by "{_one_line(approval.approved_by)}" is not operator:<account>'
    if owner != account:
        written_by = _one_line(owner) if owner is not None else f"uid {uid}"
        return (
            f"it says operator:{_one_line(account)} approved, but the file was written by "
            f"{written_by}"
        )
    if approval.request_sha256.lower() != sha256.lower():
        return (
            f"operator:{_one_line(account)} approved another version of the request "
            f"(request_sha256 {_one_line(_first_bytes(approval.request_sha256, 12))}), not "
            "the one it asks now; an approval counts only for the version it was given to"
        )
    return None


def verify_approvals(
    outcome: Outcome, read: Callable[[str], Tuple[Approval, Optional[str], int]]
) -> Optional[str]:
    """Why the approvals ``outcome`` lists do not stand, or ``None`` when they do (or it
    lists none: how many a request needs is the policy's, which only inboxes know).

    It must be an answer; the approvals distinct accounts; each approval file
    (``read(account)``, which returns the approval, its owner's name and uid, or raises
    ``ValueError`` saying why it cannot be read) owned by its account, for the version the
    outcome answers, with exactly its answers; and the account that answered one of them.
    """
    listed = outcome.approvals
    if listed is None:
        return None
    try:
        _check(outcome, listed, read)
    except _Refused as refusal:
        return str(refusal)
    return None


def _check(
    outcome: Outcome,
    listed: List[Any],
    read: Callable[[str], Tuple[Approval, Optional[str], int]],
) -> None:
    if outcome.status != "answered":
        raise _Refused(
            f"it is {outcome.status} yet lists approvals (only an answer stands on approvals)"
        )
    if not listed:
        raise _Refused("it lists no approvals in its approvals")
    sha256 = outcome.request_sha256
    if sha256 is None:
        raise _Refused("it does not say which version of the request it answers")
    seen: List[str] = []
    for reference in listed:
        by = reference.by
        account = by[len(OPERATOR_PREFIX) :] if by.startswith(OPERATOR_PREFIX) else None
        if account is None or not is_valid_account(account):
            raise _Refused(f'approval by "{_one_line(by)}" names no account')
        if account in seen:
            raise _Refused(
                f"operator:{account} is listed as approving twice; an account counts once"
            )
        seen.append(account)
        try:
            approval, owner, uid = read(account)
        except ValueError as why:
            raise _Refused(f"the approval of operator:{account}: {why}") from why
        problem = verify_approval(approval, outcome.id, sha256, owner, uid)
        if problem is not None:
            raise _Refused(f"the approval of operator:{account}: {problem}")
        if not same_json(approval.answers, outcome.answers):
            raise _Refused(f"operator:{account} approved other answers than the outcome carries")
    if (outcome.account or "") not in seen:
        raise _Refused(
            f"it was written by {_one_line(outcome.answered_by)} answering, who is not among "
            "its approvers"
        )


def _first_bytes(text: str, count: int) -> str:
    """The first ``count`` bytes of ``text`` in UTF-8, or ``?`` when it is shorter or they
    end inside a character (what Rust's ``str::get(..count)`` gives)."""
    head = text.encode("utf-8")[:count]
    if len(head) < count:
        return "?"
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError:
        return "?"
