"""JSON read as strictly as the inbox's reader (serde_json) reads it.

Python's ``json`` is more lenient than serde_json in ways a forged file can use: it keeps a
lone UTF-16 surrogate escape (``"\\ud800"``) as a "character", takes integers of any size,
reads ``-0`` as the integer 0, turns ``1e400`` into infinity, and recurses once per level
of nesting until the interpreter's stack runs out. Each is refused or read here as
serde_json reads it, so that a file means the same to this client as to the inbox.

A key given twice in any object is refused, as the inbox refuses it (serde_json alone
would keep the last value; the inbox checks the text for repeated keys). Where this reader
is stricter, it says so in the README: nesting past ``MAX_DEPTH`` is refused anywhere
(serde_json does not count inside fields it does not know).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List

__all__ = ["MAX_DEPTH", "loads", "nesting_depth"]

#: The deepest nesting of arrays and objects serde_json reads: its recursion limit (128)
#: counts the top level too.
MAX_DEPTH = 127

_U64_MAX = 2**64 - 1
_I64_MIN = -(2**63)


def loads(text: str, max_depth: int = MAX_DEPTH, *, unique_keys: bool = True) -> Any:
    """Parses ``text``; raises ``ValueError`` saying what is wrong. ``unique_keys=False``
    reads a key given twice as serde_json alone does, as its last value: for text an
    inbox reads with serde_json alone (a JSON answer), not for the files."""
    if nesting_depth(text) > max_depth:
        raise ValueError(f"it nests arrays and objects deeper than {max_depth} levels")
    value = json.loads(
        text,
        object_pairs_hook=_unique_keys if unique_keys else dict,
        parse_int=_integer,
        parse_float=_float,
        parse_constant=_no_constant,
    )
    if _has_lone_surrogate(value):
        raise ValueError(
            "it holds a lone UTF-16 surrogate escape (\\ud800 to \\udfff), which is no character"
        )
    return value


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text, counted without parsing it,
    so that a hostile file cannot exhaust the parser's stack first."""
    depth = deepest = 0
    in_string = escaped = False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
    return deepest


def _integer(text: str) -> Any:
    """An integer that fits 64 bits (signed when negative) stays one; any other is a
    float, and ``-0`` is ``-0.0``."""
    value = int(text)
    if (text.startswith("-") and (value == 0 or value < _I64_MIN)) or value > _U64_MAX:
        return _float(text)
    return value


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: List[Any]) -> Dict[str, Any]:
    # Readers disagree on which of two values counts; a file is never read by guessing.
    result: Dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"the key {json.dumps(key)} is given twice in one object")
        result[key] = value
    return result


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list):
        return any(_has_lone_surrogate(item) for item in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    return False
