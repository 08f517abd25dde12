"""Landlock: the kernel confines a sandboxed run's files, TCP ports and signals, without root.

Stdlib only (runs inside the sandboxed child). Landlock (Linux 5.13+) lets an unprivileged
process give up access for good: after ``restrict()`` this process and everything it starts
may read only the listed folders, write only its run folder, bind or connect no TCP port
(ABI 4+), and neither signal nor reach over abstract unix sockets any process outside its own
Landlock domain (ABI 6+). It is enforced by the kernel on every path lookup, so no Python-level
trick (a ``file:`` URI handed to SQLite, ``ATTACH``, a C extension, a rebuilt ``_io``) can
route around it, which the audit hook alone cannot promise.

The rules are built in the child for its own run folder; nothing is shared between runs
(a ruleset object is kernel state, and one reused across children would carry every run
folder added to it).
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Sequence

__all__ = ["LandlockError", "abi_version", "describe", "restrict"]

_CREATE_RULESET = 444
_ADD_RULE = 445
_RESTRICT_SELF = 446
"""Syscall numbers; Landlock came after the tables were unified, so they hold on every arch."""

_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# filesystem rights, by the ABI that introduced them
_EXECUTE = 1 << 0
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_READ_DIR = 1 << 3
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6

_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
"""The rights a rule on a file (not a folder) may carry."""

_READ = _READ_FILE | _READ_DIR
_WRITE = (
    _READ | _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE_DIR | _MAKE_REG | _REFER | _TRUNCATE
)
"""What the run folder allows: no devices, sockets, fifos, symlinks or execution."""


class LandlockError(OSError):
    """Raised when the kernel refuses to set up or apply the ruleset."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc: ctypes.CDLL | None = None
_abi: int | None = None


def _syscall() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc


def abi_version() -> int:
    """Return the Landlock ABI this kernel offers, 0 when it has none (or it is disabled).

    Asked once per process (the fork server asks before forking, so children inherit it).
    """
    global _abi
    if _abi is None:
        if platform.system() != "Linux":
            _abi = 0
        else:
            try:
                libc = _syscall()
                found = libc.syscall(
                    _CREATE_RULESET,
                    None,
                    ctypes.c_size_t(0),
                    ctypes.c_uint32(_CREATE_RULESET_VERSION),
                )
            except (OSError, AttributeError):
                found = -1
            _abi = max(0, int(found))
    return _abi


def _handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def describe(abi: int) -> list[str]:
    """Return the layers ``restrict`` sets up on a kernel of ``abi``, one line each."""
    if abi < 1:
        return []
    layers = [
        f"landlock ABI {abi}: files readable only in the run folder and the interpreter's"
        " own folders, writable only in the run folder"
    ]
    if abi >= 4:
        layers.append(f"landlock ABI {abi}: no TCP bind or connect")
    if abi >= 6:
        layers.append(f"landlock ABI {abi}: no signals or abstract unix sockets outside the run")
    return layers


def _add(libc: ctypes.CDLL, ruleset: int, path: str, rights: int, handled: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a folder this machine lacks grants nothing
    try:
        if not os.path.isdir(path):
            rights &= _FILE_ONLY
        attr = _PathBeneathAttr(rights & handled, fd)
        if (
            libc.syscall(
                _ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(attr),
                ctypes.c_uint32(0),
            )
            != 0
        ):
            err = ctypes.get_errno()
            raise LandlockError(err, f"landlock_add_rule({path!r}): {os.strerror(err)}")
    finally:
        os.close(fd)


def restrict(
    write_dir: str, read_paths: Sequence[str], read_write_files: Sequence[str] = ()
) -> int:
    """Confine this process (and its threads) for good.

    Args:
        write_dir: The only folder writable (and readable) from now on: the run folder.
        read_paths: Folders and files readable besides it (the interpreter's own files).
        read_write_files: Single files readable and writable (``/dev/null``).

    Returns:
        The ABI applied (at least 1).

    Raises:
        LandlockError: the kernel has no Landlock, or refused a step; the process is
            unconfined then and must not run untrusted code.
    """
    abi = abi_version()
    if abi < 1:
        raise LandlockError(0, "this kernel offers no Landlock (Linux 5.13+ with it enabled)")
    libc = _syscall()
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, 0, 0)
    size = 8
    if abi >= 4:
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
        size = 16
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
        size = 24
    ruleset = libc.syscall(
        _CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)
    )
    if ruleset < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        _add(libc, ruleset, write_dir, _WRITE, handled)
        for path in read_paths:
            _add(libc, ruleset, path, _READ, handled)
        for path in read_write_files:
            _add(libc, ruleset, path, _READ_FILE | _WRITE_FILE, handled)
        # Landlock needs no_new_privs unless the caller has CAP_SYS_ADMIN; set it either way
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(ruleset)
    return abi
