"""A request before it is placed: its exact bytes and its id.

The client checks what an inbox would refuse before reading a request at all (text that
is not JSON, more than 1 MiB, an id that cannot name a file), so such a file is never
placed. The questions themselves are the inbox's to judge: an invalid one comes back as a
``rejected`` outcome listing every problem (check requests before shipping a pipeline
with ``answer-inbox check FILE``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from .errors import InvalidRequest
from .ids import body_id, is_valid_id, new_id
from .spool import MAX_FILE_BYTES

__all__ = ["RequestBody", "Prepared", "prepare"]

#: A request: a JSON value (an object in one of the request shapes, or an array of
#: questions or of one HumanInterrupt), or JSON text (``str`` or ``bytes``) placed exactly
#: as given.
RequestBody = Union[Mapping[str, Any], Sequence[Any], str, bytes]

_ID_RULE = (
    "use letters, digits, '.', '_' or '-', starting with a letter or digit, at most 128 "
    "characters"
)


@dataclass(frozen=True)
class Prepared:
    """A request ready to be placed: its id and the exact bytes of its file."""

    id: str
    data: bytes


def prepare(request: RequestBody, id: Optional[str] = None) -> Prepared:
    """Turns ``request`` into the bytes of its file and chooses its id.

    A JSON value is written as pretty JSON (two-space indent, UTF-8, a final newline), so
    the file reads well to people and ``jq``; text or bytes are placed exactly as given
    and must be UTF-8 JSON. The id is the body's ``id`` (a HumanInterrupt list's: its
    interrupt's), else ``id``, else a new ULID; when both are given they must be equal.

    Raises :class:`~answer_inbox.InvalidRequest` for text that is not JSON, a file over
    1 MiB, or an id that is not a valid request id.
    """
    data, value = _encode(request)
    chosen = _choose_id(value, id)
    if len(data) > MAX_FILE_BYTES:
        raise InvalidRequest(
            f"the request is {len(data)} bytes; at most {MAX_FILE_BYTES} (1 MiB) are read"
        )
    return Prepared(chosen, data)


def _encode(request: RequestBody) -> Tuple[bytes, Any]:
    if isinstance(request, (bytes, bytearray, memoryview)):
        data = bytes(request)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InvalidRequest(f"the request is not UTF-8: {error}") from error
        return data, _parse(text)
    if isinstance(request, str):
        return request.encode("utf-8"), _parse(request)
    try:
        text = json.dumps(request, indent=2, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise InvalidRequest(f"the request cannot be written as JSON: {error}") from error
    return (text + "\n").encode("utf-8"), request


def _parse(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError as error:
        raise InvalidRequest(f"the request is not JSON: {error}") from error


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _choose_id(value: Any, given: Optional[str]) -> str:
    """The body's ``id``, else ``given``, else a new ULID. Both given must agree."""
    if given is not None and not is_valid_id(given):
        raise InvalidRequest(f'"{given}" is not a valid request id: {_ID_RULE}')
    body = body_id(value)
    if body is None:
        return given if given is not None else new_id()
    if not isinstance(body, str) or not is_valid_id(body):
        raise InvalidRequest(
            f"the request's body has id {json.dumps(body)}, which is not a valid request id: "
            f"{_ID_RULE}"
        )
    if given is not None and given != body:
        raise InvalidRequest(
            f'the request\'s body has id "{body}" but "{given}" was given; give one of them, '
            "or make them equal"
        )
    return body
