"""Request ids: the rule every id follows, new ids, and the id a request body names.

An id becomes a file name in the spool (``questions/<id>.json``), so nothing but
``[A-Za-z0-9][A-Za-z0-9._-]{0,127}`` may pass (docs/PROTOCOL.md, "Request ids").
"""

from __future__ import annotations

import re
import secrets
import time
from typing import Any, Optional

__all__ = ["ID_PATTERN", "MAX_ID_CHARS", "is_valid_id", "is_valid_account", "new_id", "body_id"]

#: The id rule, as a regular expression.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"

#: The longest id: 128 characters.
MAX_ID_CHARS = 128

# ``re.ASCII``: ``\w``-like shortcuts are not used, but keep the classes ASCII-only anyway;
# ``fullmatch`` so that a trailing newline never slips through as ``$`` would let it.
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", re.ASCII)

#: The longest account name an approval file's name may carry
#: (``inbox_protocol::approval::MAX_ACCOUNT_CHARS``).
MAX_ACCOUNT_CHARS = 64

# The portable account names of POSIX, which is what useradd makes; never a ``+`` (which
# separates the id from the account in ``approvals/<id>+<account>.json``) nor a ``/``.
_ACCOUNT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}", re.ASCII)

# Crockford's base32, as ULIDs use it.
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def is_valid_id(id: Any) -> bool:
    """Whether ``id`` may name a request: a letter or digit, then up to 127 letters,
    digits, dots, underscores or hyphens (ASCII only)."""
    return isinstance(id, str) and _ID.fullmatch(id) is not None


def is_valid_account(name: Any) -> bool:
    """Whether ``name`` can be the account part of an approval file's name: 1 to 64
    letters, digits, ``.``, ``_``, ``-``, not starting with ``.`` or ``-`` (as
    ``inbox_protocol::approval::is_valid_account``)."""
    return isinstance(name, str) and _ACCOUNT.fullmatch(name) is not None


def new_id() -> str:
    """A new ULID (26 characters: 48 bits of milliseconds, then 80 random bits), what
    ``answer-inbox ask`` generates when a request has no id. Sorts by creation time."""
    millis = time.time_ns() // 1_000_000
    value = (millis & ((1 << 48) - 1)) << 80 | secrets.randbits(80)
    digits = []
    for _ in range(26):
        digits.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(digits))


def body_id(request: Any) -> Optional[Any]:
    """The ``id`` a parsed request body gives itself, or ``None`` when it gives none.

    A HumanInterrupt list (an array whose first item is an object with
    ``action_request``) carries it in its one interrupt; every object shape carries it at
    the top. A bare array of questions has none. The value is returned as found (it may
    not be a string); the caller judges it.
    """
    holder = request
    if isinstance(request, list):
        first = request[0] if request else None
        if not (isinstance(first, dict) and "action_request" in first):
            return None
        holder = first
    if isinstance(holder, dict):
        return holder.get("id")
    return None
