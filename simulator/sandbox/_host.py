"""Caller-side plumbing shared by the runners: helper command line, folders, uid blocks."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
import tempfile
from dataclasses import dataclass

from .helper.folders import remove_tree

__all__ = [
    "HELPER_DIR",
    "HELPER_ENV",
    "UID_BASE",
    "UID_BLOCK",
    "UidBlock",
    "helper_command",
    "make_base_dir",
    "remove_tree",
    "reserve_uid_block",
    "scratch_parent",
]

HELPER_DIR = os.path.join(os.path.dirname(os.path.realpath(__file__)), "helper")
"""The stdlib-only code that runs in the helper and the children (booted as a package)."""

UID_BASE = 1_900_000_000
"""First sandbox uid. Far above login users and the 100000-265535 sub-uid ranges that rootless
containers map, inside the 0x70000000-0x7FFFFFFF band that systemd leaves unassigned."""

UID_BLOCK = 64
"""Uids reserved per runner: one per concurrent run."""

HELPER_ENV = {"PYTHONHASHSEED": "0", "MALLOC_ARENA_MAX": "2"}
"""The helper's whole environment: a fixed hash seed so set order is reproducible across runs,
and few malloc arenas so threads in tests do not eat the address-space limit."""

# -P -s -S: no script dir, no user site, no site-packages, i.e. -I without -E (so the fixed
# PYTHONHASHSEED above applies); -B: never write .pyc into run folders.
_FLAGS = ("-P", "-s", "-S", "-B", "-X", "utf8")

# The helper has no site-packages, so it cannot import metasre; it imports the helper folder as a
# private package whose modules use only the standard library and relative imports.
_BOOT = (
    "import sys,types,importlib\n"
    "p=types.ModuleType('_metasre_sandbox');p.__path__=[sys.argv[1]]\n"
    "sys.modules['_metasre_sandbox']=p\n"
    "importlib.import_module('_metasre_sandbox.'+sys.argv[2]).main(sys.argv[3:])\n"
)


def helper_command(module: str, *args: str) -> list[str]:
    """Return the argv that starts ``module``'s ``main(args)`` in a bare interpreter."""
    return [sys.executable, *_FLAGS, "-c", _BOOT, HELPER_DIR, module, *args]


def scratch_parent() -> str:
    """Return /dev/shm when usable (tmpfs: no disk writes), else the temp directory."""
    shm = "/dev/shm"
    if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK):
        return shm
    return tempfile.gettempdir()


_BASE_PREFIX = "metasre-sandbox-"
_STALE = re.compile(re.escape(_BASE_PREFIX) + r"(\d+)-")


def _remove_stale_base_dirs(parent: str) -> None:
    """Remove base folders whose creating process is gone (killed before it could close)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        match = _STALE.match(name)
        if match is None:
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            with contextlib.suppress(OSError):
                remove_tree(os.path.join(parent, name))
        except PermissionError:
            pass  # alive, and someone else's


def make_base_dir() -> str:
    """Create the folder that holds this runner's run folders and return its real path.

    Root-owned and mode 0711 when running as root, so sandbox uids can reach their own run
    folder by name but cannot list their neighbours. The name carries the creating pid, so
    folders left by a process that was killed are removed the next time one is made.
    """
    parent = scratch_parent()
    _remove_stale_base_dirs(parent)
    base = os.path.realpath(tempfile.mkdtemp(prefix=f"{_BASE_PREFIX}{os.getpid()}-", dir=parent))
    if os.geteuid() == 0:
        os.chmod(base, 0o711)
    return base


@dataclass(slots=True)
class UidBlock:
    """A range of UID_BLOCK uids held through an flock, released when closed or at exit."""

    first: int
    """The first uid of the block."""

    fd: int
    """The locked file; pass it to helpers so the block stays held while they live."""

    def close(self) -> None:
        """Release the block."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def reserve_uid_block() -> UidBlock | None:
    """Reserve a block of sandbox uids unused by any other runner on this machine.

    Returns:
        The block, or None when not root (no uid switching is possible then).
    """
    if os.geteuid() != 0:
        return None
    folder = os.path.join(scratch_parent(), "metasre-sandbox-uids")
    with contextlib.suppress(FileExistsError):
        os.mkdir(folder, 0o700)
    for index in range(4096):
        fd = os.open(os.path.join(folder, f"{index}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidBlock(UID_BASE + index * UID_BLOCK, fd)
    return None
