"""A seccomp filter that stops the sandboxed process from starting programs or processes.

Stdlib only (runs inside the sandboxed child). The audit hook refuses process creation with a
clear message, but Python-level hooks can be sidestepped (``_imp`` can rebuild
``_posixsubprocess``, whose ``fork_exec`` raises no audit event); this kernel filter cannot.
It fails execve/execveat/fork/vfork/ptrace with EPERM, and clone unless it creates a thread,
so threads (and asyncio's executors) keep working. It also refuses sockets of any family but
AF_UNIX (asyncio's self-pipe is a unix socketpair), so there is no network even without root
and a network namespace, and io_uring, whose queued operations no filter can see.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

__all__ = ["forbid_new_processes", "prepare", "supported"]

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_CLONE_THREAD = 0x00010000

# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_JGE_K = 0x35
_RET_K = 0x06

_AF_UNIX = 1

# arch: (AUDIT_ARCH value, denied syscalls, clone, clone3, socket, first x32-style number)
_ARCHES: dict[str, tuple[int, tuple[int, ...], int, int, int, int | None]] = {
    # execve, execveat, fork, vfork, ptrace, io_uring_setup/enter/register
    "x86_64": (0xC000003E, (59, 322, 57, 58, 101, 425, 426, 427), 56, 435, 41, 0x40000000),
    # execve, execveat, ptrace, io_uring_* (no fork/vfork syscalls)
    "aarch64": (0xC00000B7, (221, 281, 117, 425, 426, 427), 220, 435, 198, None),
}


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _program(machine: str) -> list[tuple[int, int, int, int]]:
    audit_arch, denied, clone, clone3, sock, x32 = _ARCHES[machine]
    eperm = _SECCOMP_RET_ERRNO | errno.EPERM
    eacces = _SECCOMP_RET_ERRNO | errno.EACCES
    enosys = _SECCOMP_RET_ERRNO | errno.ENOSYS
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 1, 0, audit_arch),
        (_RET_K, 0, 0, eperm),  # another ABI: refuse everything rather than guess
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if x32 is not None:
        prog += [(_JGE_K, 0, 1, x32), (_RET_K, 0, 0, eperm)]
    for number in denied:
        prog += [(_JEQ_K, 0, 1, number), (_RET_K, 0, 0, eperm)]
    # clone3 hides its flags in memory the filter cannot read: make libc fall back to clone
    prog += [(_JEQ_K, 0, 1, clone3), (_RET_K, 0, 0, enosys)]
    prog += [
        (_JEQ_K, 0, 4, sock),
        (_LD_W_ABS, 0, 0, 16),  # low half of args[0]: the address family
        (_JEQ_K, 1, 0, _AF_UNIX),
        (_RET_K, 0, 0, eacces),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_LD_W_ABS, 0, 0, 0),  # back to the syscall number for the clone test
    ]
    prog += [
        (_JEQ_K, 0, 4, clone),
        (_LD_W_ABS, 0, 0, 16),  # low half of args[0]: the clone flags
        (_JSET_K, 1, 0, _CLONE_THREAD),
        (_RET_K, 0, 0, eperm),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
    ]
    return prog


def supported() -> bool:
    """Return True when this machine's architecture has a filter program here."""
    return platform.machine() in _ARCHES and struct.calcsize("P") == 8


_prepared: tuple[ctypes.CDLL, ctypes.Array[_SockFilter], _SockFprog] | None = None
_installed = False
"""True once this process has the filter (a spare installs it while parked)."""


def prepare() -> bool:
    """Build the filter now (ctypes type creation is slow), e.g. before the server forks.

    Returns:
        True when a filter exists for this machine.
    """
    global _prepared
    if _prepared is None and supported():
        try:
            libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return False
        prog = _program(platform.machine())
        filters = (_SockFilter * len(prog))(*[_SockFilter(*entry) for entry in prog])
        _prepared = (libc, filters, _SockFprog(len(prog), filters))
    return _prepared is not None


def forbid_new_processes() -> bool:
    """Install the filter on the calling process (irreversible, inherited by threads).

    A second call in the same process does nothing: the filter is already there.

    Returns:
        True when installed; False on an unknown architecture or a kernel without seccomp.
    """
    global _installed
    if _installed:
        return True
    if not prepare():
        return False
    assert _prepared is not None
    libc, _filters, fprog = _prepared
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    _installed = bool(
        libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
    )
    return _installed
