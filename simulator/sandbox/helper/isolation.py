"""OS isolation layers for sandboxed runs: namespaces, mounts, rlimits, privilege drop.

Stdlib only (runs inside the helper process). The layers here are extras on top of the ones
every run must have (Landlock, seccomp, rlimits): a function returns False, or the caller
skips it, when the OS or our privileges do not allow it, and the helper says which it has.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import signal
import stat
import sys
from collections.abc import Iterable, Sequence

__all__ = [
    "CAP_CHOWN",
    "CAP_KILL",
    "CAP_SETGID",
    "CAP_SETUID",
    "CLONE_NEWNET",
    "CLONE_NEWNS",
    "IsolationError",
    "apply_rlimits",
    "close_fds_except",
    "drop_privileges",
    "expose_to_others",
    "has_capabilities",
    "is_root",
    "kill_uid_processes",
    "main",
    "set_parent_death_signal",
    "sweep_uid",
    "traversable_by_others",
    "unshare",
]

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_BIND = 4096
_MS_MOVE = 8192
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_PR_SET_PDEATHSIG = 1

_libc: ctypes.CDLL | None = None


class IsolationError(OSError):
    """Raised when a containment layer the run requires cannot be set up."""


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def is_root() -> bool:
    """Return True when the process runs with effective uid 0."""
    return os.geteuid() == 0


CAP_CHOWN = 0
CAP_KILL = 5
CAP_SETGID = 6
CAP_SETUID = 7


def has_capabilities(*capabilities: int) -> bool:
    """Return True when every capability is in the effective set.

    Root in a container may lack some (``docker --cap-drop``), and then cannot switch uid.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("CapEff:"):
                    effective = int(line.split()[1], 16)
                    return all(effective >> cap & 1 for cap in capabilities)
    except (OSError, ValueError):
        pass
    return False


def unshare(flags: int) -> bool:
    """Move the calling process into new namespaces; Python 3.11 has no os.unshare."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return int(_c().unshare(flags)) == 0
    except (AttributeError, OSError):
        return False


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    result = _c().mount(
        None if source is None else os.fsencode(source),
        os.fsencode(target),
        None if fstype is None else fstype.encode(),
        ctypes.c_ulong(flags),
        None if data is None else data.encode(),
    )
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def traversable_by_others(path: str) -> bool:
    """Return True when a uid that owns nothing could reach and list ``path``."""
    current = "/"
    for part in [p for p in os.path.abspath(path).split("/") if p]:
        mode = os.stat(current).st_mode
        if not mode & stat.S_IXOTH:
            return False
        current = os.path.join(current, part)
    try:
        mode = os.stat(current).st_mode
    except FileNotFoundError:
        return True
    return bool(mode & stat.S_IROTH) and (not stat.S_ISDIR(mode) or bool(mode & stat.S_IXOTH))


def _first_blocked(path: str) -> tuple[str, str] | None:
    """Return (closed ancestor, its child on the way to path), or None when nothing blocks."""
    current = "/"
    for part in [p for p in os.path.abspath(path).split("/") if p]:
        if not os.stat(current).st_mode & stat.S_IXOTH:
            return current, os.path.join(current, part)
        current = os.path.join(current, part)
    return None


def expose_to_others(paths: Sequence[str], scratch: str) -> bool:
    """Make ``paths`` traversable for unprivileged uids without exposing their neighbours.

    Must run in a private mount namespace (after ``unshare(CLONE_NEWNS)``). For each closed
    ancestor (say ``/root``, mode 0700) it mounts an empty tmpfs over it and moves a bind of
    the needed child (``/root/.pyenv``) back in place, so paths stay identical while the rest
    of the ancestor disappears from view.

    Args:
        paths: Paths the sandboxed uid must read (the standard library).
        scratch: A root-only directory for holding binds while the ancestor is covered.

    Returns:
        True when every path is traversable afterwards.
    """
    try:
        _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
        for _ in range(4):
            blocked: dict[str, set[str]] = {}
            for path in paths:
                hit = _first_blocked(path)
                if hit is not None:
                    blocked.setdefault(hit[0], set()).add(hit[1])
            if not blocked:
                return True
            for ancestor, children in sorted(blocked.items()):
                held: list[tuple[str, str]] = []
                for index, child in enumerate(sorted(children)):
                    hold = os.path.join(scratch, f".hold-{os.getpid()}-{index}")
                    os.mkdir(hold, 0o700)
                    _mount(child, hold, None, _MS_BIND | _MS_REC, None)
                    held.append((hold, child))
                _mount("tmpfs", ancestor, "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=0755,size=64k")
                for hold, child in held:
                    os.mkdir(child, 0o755)
                    _mount(hold, child, None, _MS_MOVE, None)
                    os.rmdir(hold)
        return all(traversable_by_others(p) for p in paths)
    except OSError:
        return False


def set_parent_death_signal() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies (cleared by setuid)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(AttributeError, OSError):
            _c().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def drop_privileges(uid: int) -> None:
    """Become ``uid``/``uid`` with no supplementary groups, irreversibly."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def kill_uid_processes() -> None:
    """SIGKILL every other process of the caller's uid (kill(-1) spares the caller).

    Only call this after ``drop_privileges`` to a uid unique to the run: as root it would
    signal the whole machine.
    """
    if os.geteuid() == 0:
        raise RuntimeError("kill_uid_processes() called as root; refusing to signal every process")
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(-1, signal.SIGKILL)


def sweep_uid(uid: int) -> None:
    """From a root, single-threaded process: SIGKILL every process running as ``uid``.

    Borrows the uid as real and effective id while keeping 0 as the saved id, so the kernel's
    kill(-1) permission check selects exactly that uid's processes; then takes root back.
    """
    os.setresuid(uid, uid, 0)
    try:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(-1, signal.SIGKILL)
    finally:
        os.setresuid(0, 0, 0)


def apply_rlimits(
    *,
    cpu_seconds: int,
    memory_bytes: int,
    max_processes: int | None,
    max_file_bytes: int,
    max_open_files: int,
) -> None:
    """Lower soft and hard limits so the tests cannot raise them back."""
    plan: list[tuple[int, int, int]] = [
        # the hard CPU limit one second later catches code that handles SIGXCPU
        (resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
        (resource.RLIMIT_AS, memory_bytes, memory_bytes),
        (resource.RLIMIT_FSIZE, max_file_bytes, max_file_bytes),
        (resource.RLIMIT_NOFILE, max_open_files, max_open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if max_processes is not None:
        plan.append((resource.RLIMIT_NPROC, max_processes, max_processes))
    for which, soft, hard in plan:
        _, current_hard = resource.getrlimit(which)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
            soft = min(soft, hard)
        try:
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            # e.g. RLIMIT_AS below what is already mapped: keep the soft limit only
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(which, (soft, current_hard))


def close_fds_except(keep: Iterable[int]) -> None:
    """Close every descriptor from 3 upwards except ``keep``."""
    start = 3
    for fd in sorted(set(k for k in keep if k >= 3)):
        if fd > start:
            os.closerange(start, fd)
        start = fd + 1
    try:
        top = os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        top = 65536
    os.closerange(start, max(top, start))


def main(argv: Sequence[str]) -> None:
    """Entry point of a short-lived root helper: sweep the processes of each uid in ``argv``.

    Callers that may be multi-threaded cannot borrow a uid themselves (setresuid applies to
    every thread), so they run this in a separate interpreter.
    """
    if is_root():
        for uid in argv:
            with contextlib.suppress(PermissionError):
                sweep_uid(int(uid))
