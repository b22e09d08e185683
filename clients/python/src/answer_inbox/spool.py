"""The spool on disk: opening it safely, placing files atomically, reading them
defensively. The asker's half of what ``crates/spool`` does for the Rust side.

A spool is opened safely or not at all. Its root and four directories (``questions/``,
``answers/``, ``cancel/``, ``tmp/``) are opened once with ``O_DIRECTORY | O_NOFOLLOW``, and
every later operation goes through those descriptors (``dir_fd=``), so a directory swapped
for a link after the check is never followed. A directory that holds anything besides the
four directories, the marker ``.answer-inbox-spool`` and what teams add (``approvals/``, made
when first needed, and ``team-policy.toml``; docs/TEAMS.md) is not a spool and is refused
before anything in it is touched.

Files enter the spool in two steps: written whole into ``tmp/`` and fsynced, then linked
to their name (``link`` refuses to replace an existing file, so an id is never taken
twice), then the directory is fsynced. Files are read only when they are regular, have
one name, belong to an account the spool trusts, and hold at most 1 MiB.

Modes: a new spool is private to this account (directories ``0700``, files ``0600``,
whatever the umask). An existing team directory (setgid, group ``rwx``; see
docs/SECURITY.md) gets group-readable files (``0640``) of its group, so the team's inboxes
can read them, and files of the group's members are trusted.
"""

from __future__ import annotations

import errno
import grp
import itertools
import os
import pwd
import stat
import time
from typing import Callable, Dict, List, Optional, Tuple

from .errors import NotASpool, SpoolError, UnsafeSpool
from .ids import is_valid_account, is_valid_id

__all__ = ["MARKER", "MAX_FILE_BYTES", "AREAS", "Spool", "UnreadableFile"]

#: The file that marks a directory as a spool, written by whoever creates it.
MARKER = ".answer-inbox-spool"

#: What the marker says to a person who finds it (the same text the Rust side writes).
MARKER_TEXT = (
    "This directory is an Answer Inbox spool: requests in questions/, answers in answers/, "
    "withdrawals in cancel/, files being written in tmp/.\n"
    "Nothing else belongs here; the inbox refuses a directory that holds anything else.\n"
)

#: The largest spool file anyone reads: 1 MiB.
MAX_FILE_BYTES = 1024 * 1024

#: The areas files are placed in, each a directory of the spool.
AREAS = ("questions", "answers", "cancel")

# The spool's directories, in the order they are created.
_SUBDIRS = ("tmp", "questions", "answers", "cancel")

#: The directory of approval files (docs/TEAMS.md), made by the first inbox that needs it.
APPROVALS_DIR = "approvals"

#: The team's policy file, in a team spool's root (docs/TEAMS.md): the inboxes read it, an
#: asker only lets it be.
TEAM_POLICY = "team-policy.toml"

_SETGID = 0o2000

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY

# A placement is link(tmp, target) then unlink(tmp), so for a few microseconds a new file
# has two names. A second name is a problem only if it is still there after this.
_LINK_SETTLE_CHECKS = 10
_LINK_SETTLE_PAUSE = 0.002

# Temp names no other writer uses: pid, a counter and the time (as the Rust side's).
_tmp_counter = itertools.count()

# ``link`` without following a link at the source, where the platform can say so.
_LINK_KWARGS = {"follow_symlinks": False} if os.link in os.supports_follow_symlinks else {}


class UnreadableFile(Exception):
    """A spool file exists but is not read: a link, not a regular file, another account's,
    hard-linked, too large, or unreadable. ``reason`` says which, in words."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class _Trust:
    """Whose files a spool takes, and the modes of what this process creates in it."""

    def __init__(self, team_gid: Optional[int] = None) -> None:
        self.team_gid = team_gid
        self._members: Dict[int, bool] = {}

    @classmethod
    def detect(cls, root: os.stat_result) -> "_Trust":
        """An existing team directory (setgid, group rwx) is followed; anything else is
        private."""
        team = _SETGID | 0o070
        return cls(root.st_gid) if root.st_mode & team == team else cls()

    @property
    def dir_mode(self) -> int:
        return 0o700 if self.team_gid is None else 0o2770

    @property
    def file_mode(self) -> int:
        return 0o600 if self.team_gid is None else 0o640

    def apply(self, fd: int, mode: int) -> None:
        """Gives what this process just created its group and mode, whatever the umask and
        whether or not the filesystem honours setgid. The group first: a change of owner
        may clear the setgid bit."""
        current = os.fstat(fd)
        regrouped = False
        if self.team_gid is not None and current.st_gid != self.team_gid:
            os.fchown(fd, -1, self.team_gid)
            regrouped = True
        if regrouped or stat.S_IMODE(current.st_mode) != mode:
            os.fchmod(fd, mode)

    def allows(self, uid: int) -> bool:
        """Whether a file owned by ``uid`` may be read as content."""
        if uid == os.geteuid():
            return True
        if self.team_gid is None:
            return False
        if uid not in self._members:
            self._members[uid] = _is_member(uid, self.team_gid)
        return self._members[uid]


def _is_member(uid: int, gid: int) -> bool:
    """Whether the account ``uid`` belongs to the group ``gid``: as its primary group, or
    listed as a member. An account the database does not know belongs to no group."""
    try:
        user = pwd.getpwuid(uid)
    except KeyError:
        return False
    if user.pw_gid == gid:
        return True
    try:
        return user.pw_name in grp.getgrgid(gid).gr_mem
    except KeyError:
        return False


def _file_name(area: str, id: str) -> str:
    """``<id>.json`` in ``questions/`` and ``answers/``, the bare id in ``cancel/``."""
    return id if area == "cancel" else f"{id}.json"


def _io_error(path: str, error: OSError) -> SpoolError:
    return SpoolError(f"{path}: {error.strerror or error}")


class Spool:
    """An open spool: the descriptors of its root and four directories.

    Open one with :meth:`Spool.open` and close it with :meth:`close` (or use it as a
    context manager). The module functions (:func:`answer_inbox.place`,
    :func:`answer_inbox.wait`, ...) open and close one themselves.
    """

    def __init__(self, root: str, fds: Dict[str, int], trust: _Trust) -> None:
        self.root = root
        self._fds = fds
        self._trust = trust

    # --- Opening ----------------------------------------------------------------------

    @classmethod
    def open(cls, root: str) -> "Spool":
        """Opens the spool at ``root``, creating it or its missing directories.

        A new spool is private. Refuses, touching nothing, a symbolic link, a
        non-directory (:class:`~answer_inbox.UnsafeSpool`), or a directory that holds
        anything a spool does not (:class:`~answer_inbox.NotASpool`).
        """
        fds: Dict[str, int] = {}
        try:
            root_fd, created = _open_root(root)
            fds["root"] = root_fd
            trust = _Trust() if created else _Trust.detect(os.fstat(root_fd))
            if created:
                trust.apply(root_fd, trust.dir_mode)
            # Everything is checked before anything is created.
            present = _check_contents(root_fd, root)
            if created or not present:
                _write_marker(root_fd, root, trust)
            for name in _SUBDIRS:
                fds[name] = _open_subdir(root_fd, root, name, name in present, trust)
        except OSError as error:
            _close_all(fds)
            where = f" ({error.filename})" if error.filename else ""
            raise SpoolError(
                f"cannot open the spool {root}: {error.strerror or error}{where}"
            ) from error
        except BaseException:
            _close_all(fds)
            raise
        return cls(root, fds, trust)

    def close(self) -> None:
        """Closes the spool's descriptors. Idempotent."""
        _close_all(self._fds)

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def team_gid(self) -> Optional[int]:
        """The group of a team spool, ``None`` for a private one."""
        return self._trust.team_gid

    def path(self, area: str, id: str) -> str:
        """The path of a request, outcome or tombstone, for messages: the spool's own
        operations never go through it."""
        return os.path.join(self.root, area, _file_name(area, id))

    # --- Placing ----------------------------------------------------------------------

    def place(self, area: str, id: str, data: bytes) -> bool:
        """Places ``data`` as ``id``'s file in ``area`` atomically: written to ``tmp/``,
        fsynced, linked into place, the temp name removed, the directory fsynced.

        Returns ``True`` when this file is now in place, ``False`` when the name was
        already taken (nothing is replaced: the file there stands). Raises
        :class:`~answer_inbox.SpoolError` when the file cannot be written.
        """
        _check_id(id)
        tmp_fd, area_fd = self._fds["tmp"], self._fds[area]
        tmp_name = f"{id}.{os.getpid()}.{next(_tmp_counter)}.{time.time_ns()}.tmp"
        target = _file_name(area, id)
        try:
            fd = os.open(tmp_name, _NEW_FILE_FLAGS, self._trust.file_mode, dir_fd=tmp_fd)
            try:
                self._trust.apply(fd, self._trust.file_mode)
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as error:
            _unlink_quietly(tmp_fd, tmp_name)
            raise _io_error(os.path.join(self.root, "tmp", tmp_name), error) from error
        try:
            linked = _link(tmp_fd, tmp_name, area_fd, target)
        except OSError as error:
            raise _io_error(self.path(area, id), error) from error
        finally:
            # At once: while both names exist a reader sees a file with two links.
            _unlink_quietly(tmp_fd, tmp_name)
        if linked:
            try:
                os.fsync(area_fd)
            except OSError as error:
                raise _io_error(os.path.join(self.root, area), error) from error
        return linked

    # --- Reading ----------------------------------------------------------------------

    def exists(self, area: str, id: str) -> bool:
        """Whether ``area`` has an entry for ``id``, of any kind (a link is not
        followed)."""
        if not is_valid_id(id):
            return False
        try:
            os.stat(_file_name(area, id), dir_fd=self._fds[area], follow_symlinks=False)
        except OSError:
            return False
        return True

    def read(self, area: str, id: str) -> Optional[bytes]:
        """The content of ``id``'s file in ``area``, or ``None`` when there is none.

        Never follows a link; raises :class:`UnreadableFile` for what is not a regular
        file, a file of an account the spool does not trust, a file with more than one
        name, one over 1 MiB, and one that cannot be read.
        """
        file = self.read_owned(area, id)
        return None if file is None else file[0]

    def read_owned(self, area: str, id: str) -> Optional[Tuple[bytes, int]]:
        """:meth:`read`, with the uid of the account that owns the file (that wrote it),
        as ``fstat`` said when it was read."""
        if not is_valid_id(id):
            # No name is ever built from an id that is not one.
            return None
        return self._read_at(self._fds[area], _file_name(area, id))

    def read_approval(self, id: str, account: str) -> Optional[Tuple[bytes, int]]:
        """``account``'s approval of request ``id`` (``approvals/<id>+<account>.json``,
        docs/TEAMS.md) with the uid of its owner, read as :meth:`read_owned` reads any
        spool file; ``None`` when there is none. ``approvals/`` is made by the first
        approving inbox after the spool was opened, so it is opened here, never through a
        link."""
        if not (is_valid_id(id) and is_valid_account(account)):
            return None
        try:
            dir_fd = os.open(APPROVALS_DIR, _DIR_FLAGS, dir_fd=self._fds["root"])
        except FileNotFoundError:
            return None
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                # As the Rust side says of an approvals/ that is no directory.
                raise UnreadableFile(
                    "the file is not a regular file (a directory, FIFO, socket or device)"
                ) from error
            raise UnreadableFile(error.strerror or str(error)) from error
        try:
            return self._read_at(dir_fd, f"{id}+{account}.json")
        finally:
            os.close(dir_fd)

    def _read_at(self, dir_fd: int, name: str) -> Optional[Tuple[bytes, int]]:
        """The file ``name`` in the directory ``dir_fd`` and its owner's uid, held to the
        spool's read rule; ``None`` when it does not exist."""
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise self._open_error(dir_fd, name, error) from error
        try:
            facts = os.fstat(fd)
            if not stat.S_ISREG(facts.st_mode):
                raise UnreadableFile(
                    "the file is not a regular file (a directory, FIFO, socket or device)"
                )
            if not self._trust.allows(facts.st_uid):
                raise UnreadableFile(_foreign(facts.st_uid))
            for _ in range(_LINK_SETTLE_CHECKS):
                if facts.st_nlink <= 1:
                    break
                time.sleep(_LINK_SETTLE_PAUSE)
                facts = os.fstat(fd)
            if facts.st_nlink > 1:
                raise UnreadableFile(
                    f"the file has {facts.st_nlink} hard links; a spool file must have exactly "
                    "one name, so it is not read"
                )
            return _read_capped(fd, facts.st_size), facts.st_uid
        except OSError as error:
            raise UnreadableFile(error.strerror or str(error)) from error
        finally:
            os.close(fd)

    def _open_error(self, dir_fd: int, name: str, error: OSError) -> UnreadableFile:
        if error.errno == errno.ELOOP:
            return UnreadableFile("the file is a symbolic link; links are never followed")
        if error.errno in (errno.ENXIO, errno.ENODEV):
            return UnreadableFile(
                "the file is not a regular file (a directory, FIFO, socket or device)"
            )
        if error.errno == errno.EACCES:
            # Unreadable: if that is because another account owns it, say so.
            try:
                owner = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_uid
            except OSError:
                owner = None
            if owner is not None and not self._trust.allows(owner):
                return UnreadableFile(_foreign(owner))
        return UnreadableFile(error.strerror or str(error))


# --- Opening, step by step ------------------------------------------------------------


def _split_root(root: str) -> Optional[Tuple[str, str]]:
    """The parent and last name of ``root`` (``a/b/`` and ``a/b/.`` name ``b``), or
    ``None`` when it has no last name (``/``, ``.``, ``..``), which cannot be a link."""
    path = root.rstrip("/")
    while path.endswith("/."):
        path = path[:-2].rstrip("/")
    if path in ("", ".", "..") or path.endswith("/.."):
        return None
    parent, name = os.path.split(path)
    return (parent or ".", name)


def _open_root(root: str) -> Tuple[int, bool]:
    """Opens the root without following a link at its last component, creating it (and
    its parents, which are not the spool's) when it does not exist. Returns its
    descriptor and whether it was created here."""
    split = _split_root(root)
    if split is None:
        return _open_dir(root, lambda: os.open(root, _DIR_FLAGS)), False
    parent, name = split
    parent_flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    try:
        parent_fd = os.open(parent, parent_flags)
    except FileNotFoundError:
        # The spool cannot exist either: its parents are made as any directory is.
        os.makedirs(parent, exist_ok=True)
        parent_fd = os.open(parent, parent_flags)
    try:
        created = False
        try:
            facts = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        except FileNotFoundError:
            try:
                os.mkdir(name, 0o700, dir_fd=parent_fd)
                created = True
            except FileExistsError:
                pass  # Another process created it meanwhile: open it like any other.
        else:
            _refuse_unless_dir(root, facts)
        fd = _open_dir(root, lambda: os.open(name, _DIR_FLAGS, dir_fd=parent_fd))
        return fd, created
    finally:
        os.close(parent_fd)


def _check_contents(root_fd: int, root: str) -> List[str]:
    """The names in the root, once each is known to be a spool directory or the marker;
    anything else refuses the directory as not a spool."""
    present: List[str] = []
    strays: List[str] = []
    for name in os.listdir(root_fd):
        if name in _SUBDIRS or name == APPROVALS_DIR:
            _refuse_unless_dir(
                os.path.join(root, name), os.stat(name, dir_fd=root_fd, follow_symlinks=False)
            )
            present.append(name)
        elif name == MARKER:
            facts = os.stat(name, dir_fd=root_fd, follow_symlinks=False)
            if not stat.S_ISREG(facts.st_mode):
                raise UnsafeSpool(
                    os.path.join(root, MARKER), "the spool's marker is not a regular file"
                )
            present.append(name)
        elif name == TEAM_POLICY:
            # Whether it may be used is the inboxes' to say; here it is only no stray.
            present.append(name)
        else:
            strays.append(name)
    if strays:
        raise NotASpool(root, min(strays, key=os.fsencode))
    return present


def _write_marker(root_fd: int, root: str, trust: _Trust) -> None:
    try:
        fd = os.open(MARKER, _NEW_FILE_FLAGS, trust.file_mode, dir_fd=root_fd)
    except FileExistsError:
        return  # Another creator wrote it first.
    try:
        trust.apply(fd, trust.file_mode)
        _write_all(fd, MARKER_TEXT.encode("utf-8"))
    finally:
        os.close(fd)


def _open_subdir(root_fd: int, root: str, name: str, present: bool, trust: _Trust) -> int:
    made = False
    if not present:
        try:
            os.mkdir(name, trust.dir_mode, dir_fd=root_fd)
            made = True
        except FileExistsError:
            pass  # Another process created it meanwhile.
    fd = _open_dir(os.path.join(root, name), lambda: os.open(name, _DIR_FLAGS, dir_fd=root_fd))
    if made:
        try:
            trust.apply(fd, trust.dir_mode)
        except BaseException:
            os.close(fd)
            raise
    return fd


def _open_dir(path: str, opener: Callable[[], int]) -> int:
    """Runs ``opener`` (an ``O_DIRECTORY | O_NOFOLLOW`` open of ``path``) and says in words
    what such an open refuses."""
    try:
        return opener()
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _unsafe_link(path) from error
        if error.errno == errno.ENOTDIR:
            if os.path.islink(path):
                raise _unsafe_link(path) from error
            raise UnsafeSpool(path, "it is not a directory") from error
        raise


def _refuse_unless_dir(path: str, facts: os.stat_result) -> None:
    if stat.S_ISDIR(facts.st_mode):
        return
    if stat.S_ISLNK(facts.st_mode):
        raise _unsafe_link(path)
    raise UnsafeSpool(path, "it is not a directory")


def _unsafe_link(path: str) -> UnsafeSpool:
    return UnsafeSpool(
        path,
        "it is a symbolic link, and a spool is never reached through a link (it could lead "
        "the inbox to read or delete files elsewhere); use the real directory",
    )


def _close_all(fds: Dict[str, int]) -> None:
    while fds:
        _, fd = fds.popitem()
        try:
            os.close(fd)
        except OSError:
            pass


# --- Files ------------------------------------------------------------------------------


def _check_id(id: str) -> None:
    if not is_valid_id(id):
        raise ValueError(f"{id!r} is not a valid request id")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _link(tmp_fd: int, tmp: str, area_fd: int, target: str) -> bool:
    """Links the durable temp file to its final name; ``link`` refuses to replace a file,
    so the first writer wins. Returns whether this writer's file is the one in place."""
    try:
        os.link(tmp, target, src_dir_fd=tmp_fd, dst_dir_fd=area_fd, **_LINK_KWARGS)
        return True
    except OSError as error:
        # Whatever the error, a target that exists now means a writer got there: EEXIST
        # locally, a generic failure over sshfs. Over NFS a link can succeed yet report
        # EEXIST when the reply is lost; the temp file's link count tells whose it is.
        if error.errno != errno.EEXIST and not _lexists_at(area_fd, target):
            raise
    try:
        return os.stat(tmp, dir_fd=tmp_fd, follow_symlinks=False).st_nlink == 2
    except OSError:
        return False


def _lexists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _unlink_quietly(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _read_capped(fd: int, size: int) -> bytes:
    """Refuses a file over the cap, and reads at most cap + 1 bytes in case it grows."""
    if size > MAX_FILE_BYTES:
        raise UnreadableFile(_too_large(size))
    chunks: List[bytes] = []
    total = 0
    while total <= MAX_FILE_BYTES:
        chunk = os.read(fd, MAX_FILE_BYTES + 1 - total)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > MAX_FILE_BYTES:
        raise UnreadableFile(_too_large(total))
    return b"".join(chunks)


def _too_large(size: int) -> str:
    return f"the file is {size} bytes, over the limit of {MAX_FILE_BYTES} bytes (1 MiB)"


def _foreign(uid: int) -> str:
    try:
        who = f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        who = f"uid {uid}"
    return (
        f"the file belongs to {who}, an account this spool does not take files from (a "
        "private spool reads only its own account's files, a team spool only its group "
        "members'), so it is not read"
    )
