"""Where the spool is, found the way every ``answer-inbox`` command finds it: the path
given, else ``$ANSWER_INBOX_DIR``, else ``<XDG data dir>/answer-inbox/spool``."""

from __future__ import annotations

import os
import pwd
import sys
from typing import Optional, Union

from .errors import NoSpool

__all__ = ["SPOOL_ENV", "default_spool_dir", "resolve_spool_dir"]

#: The environment variable naming the spool directory, as for every ``answer-inbox``
#: command.
SPOOL_ENV = "ANSWER_INBOX_DIR"

PathArg = Union[str, "os.PathLike[str]"]


def resolve_spool_dir(spool: Optional[PathArg] = None) -> str:
    """The spool directory to use: ``spool`` when given, else :func:`default_spool_dir`."""
    if spool is not None:
        path = os.fspath(spool)
        if not path:
            raise ValueError("spool must not be an empty path")
        return path
    return default_spool_dir()


def default_spool_dir() -> str:
    """The spool an asker uses when given none: ``$ANSWER_INBOX_DIR`` when set and not
    empty, else ``<data dir>/answer-inbox/spool``, where the data dir is
    ``$XDG_DATA_HOME`` (when it is an absolute path) or ``~/.local/share`` on Linux and
    other Unix systems, and ``~/Library/Application Support`` on macOS.

    Unlike the command line, it does not read the desktop app's settings file: where the
    app's Settings moved the spool, set ``ANSWER_INBOX_DIR`` or pass the spool's path.

    Raises :class:`~answer_inbox.NoSpool` when there is no home directory to start from.
    """
    named = os.environ.get(SPOOL_ENV)
    if named:
        return named
    return os.path.join(_data_dir(), "answer-inbox", "spool")


def _data_dir() -> str:
    # The same rules as the Rust side's `dirs::data_dir()`.
    home = _home_dir()
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support")
    xdg = os.environ.get("XDG_DATA_HOME", "")
    if os.path.isabs(xdg):
        return xdg
    return os.path.join(home, ".local", "share")


def _home_dir() -> str:
    """``$HOME`` when set and not empty, else the account database's home directory."""
    home = os.environ.get("HOME")
    if home:
        return home
    try:
        home = pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        home = ""
    if not home:
        raise NoSpool()
    return home
