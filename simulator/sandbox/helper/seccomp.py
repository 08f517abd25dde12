"""A seccomp filter that stops the sandboxed process from starting programs or processes.

Stdlib only (runs inside the sandboxed child). The audit hook refuses process creation with a
clear message, but Python-level hooks can be sidestepped (``_imp`` can rebuild
``_posixsubprocess``, whose ``fork_exec`` raises no audit event); this kernel filter cannot.
It fails execve/execveat/fork/vfork/ptrace with EPERM, and clone unless it creates a thread,
so threads (and asyncio's executors) keep working. It also refuses:

- sockets of any family but AF_UNIX, and naming another socket at all (connect, bind, sendto
  with an address, sendmsg): a run has only socketpairs (asyncio's self-pipe is one), so no
  network and no unix socket of the host, even without root and a network namespace;
- state that outlives a run and is shared by uid or host: System V IPC, POSIX message queues,
  kernel keyrings (else one run could leave something for the next);
- reading or steering other processes (process_vm_*, pidfd_getfd, kcmp), io_uring (whose
  queued operations no filter can see), namespaces, mounts, bpf and perf.

Landlock (``landlock``) confines files, TCP and signals; this filter, everything else that
crosses a run's edge. Neither depends on the audit hook, which code under test can defeat.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct
from dataclasses import dataclass

__all__ = ["forbid_new_processes", "prepare", "supported"]

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_CLONE_THREAD = 0x00010000
_ARG0 = 16
"""Offset of args[0] in seccomp_data (nr, arch, instruction pointer come first)."""
_ARG4 = _ARG0 + 4 * 8

# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JSET_K = 0x45
_JGE_K = 0x35
_RET_K = 0x06

_AF_UNIX = 1


@dataclass(frozen=True)
class _Arch:
    audit: int
    """AUDIT_ARCH value."""
    denied: dict[str, int]
    """Syscalls refused outright, by name."""
    clone: int
    clone3: int
    socket: int
    sendto: int
    x32: int | None
    """First x32-style number, refused wholesale; None where there is no such ABI."""


_ARCHES: dict[str, _Arch] = {
    "x86_64": _Arch(
        audit=0xC000003E,
        denied={
            # programs and processes
            "execve": 59, "execveat": 322, "fork": 57, "vfork": 58, "ptrace": 101,
            # reading or steering other processes
            "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438, "kcmp": 312,
            # queues the filter cannot see into
            "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            # state that outlives a run and is shared by uid or host: System V IPC, POSIX
            # message queues, kernel keyrings
            "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65,
            "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70,
            "msgctl": 71, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
            "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "add_key": 248,
            "request_key": 249, "keyctl": 250,
            # reaching another socket by name: a run only needs socketpair
            "connect": 42, "bind": 49, "sendmsg": 46, "sendmmsg": 307,
            # namespaces, mounts, kernel programs
            "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
            "chroot": 161, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        },
        clone=56, clone3=435, socket=41, sendto=44, x32=0x40000000,
    ),
    "aarch64": _Arch(
        audit=0xC00000B7,
        denied={
            "execve": 221, "execveat": 281, "ptrace": 117,
            "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438, "kcmp": 272,
            "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "semget": 190,
            "semctl": 191, "semtimedop": 192, "semop": 193, "msgget": 186, "msgctl": 187,
            "msgrcv": 188, "msgsnd": 189, "mq_open": 180, "mq_unlink": 181,
            "mq_timedsend": 182, "mq_timedreceive": 183, "mq_notify": 184,
            "mq_getsetattr": 185, "add_key": 217, "request_key": 218, "keyctl": 219,
            "connect": 203, "bind": 200, "sendmsg": 211, "sendmmsg": 269,
            "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
            "chroot": 51, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        },
        clone=220, clone3=435, socket=198, sendto=206, x32=None,
    ),
}  # fmt: skip


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
    arch = _ARCHES[machine]
    eperm = _SECCOMP_RET_ERRNO | errno.EPERM
    eacces = _SECCOMP_RET_ERRNO | errno.EACCES
    enosys = _SECCOMP_RET_ERRNO | errno.ENOSYS
    prog: list[tuple[int, int, int, int]] = [
        (_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (_JEQ_K, 1, 0, arch.audit),
        (_RET_K, 0, 0, eperm),  # another ABI: refuse everything rather than guess
        (_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
    ]
    if arch.x32 is not None:
        prog += [(_JGE_K, 0, 1, arch.x32), (_RET_K, 0, 0, eperm)]
    for number in arch.denied.values():
        prog += [(_JEQ_K, 0, 1, number), (_RET_K, 0, 0, eperm)]
    # clone3 hides its flags in memory the filter cannot read: make libc fall back to clone
    prog += [(_JEQ_K, 0, 1, arch.clone3), (_RET_K, 0, 0, enosys)]
    prog += [
        (_JEQ_K, 0, 4, arch.socket),
        (_LD_W_ABS, 0, 0, _ARG0),  # low half of args[0]: the address family
        (_JEQ_K, 1, 0, _AF_UNIX),
        (_RET_K, 0, 0, eacces),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_LD_W_ABS, 0, 0, 0),  # back to the syscall number
    ]
    # sendto with an address names another socket; with none it is send() on a pair
    prog += [
        (_JEQ_K, 0, 6, arch.sendto),
        (_LD_W_ABS, 0, 0, _ARG4),  # low half of args[4]: dest_addr
        (_JEQ_K, 0, 3, 0),
        (_LD_W_ABS, 0, 0, _ARG4 + 4),  # its high half
        (_JEQ_K, 0, 1, 0),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_RET_K, 0, 0, eperm),
        (_LD_W_ABS, 0, 0, 0),
    ]
    prog += [
        (_JEQ_K, 0, 4, arch.clone),
        (_LD_W_ABS, 0, 0, _ARG0),  # low half of args[0]: the clone flags
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
