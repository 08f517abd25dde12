"""One server per trajectory store: an OS lock held for the server's life.

Two servers on one store would each rebuild the other's open sessions and close them when they
stop (a `metasre demo` beside a `metasre serve`, both on `./metasre.db`, did). So a server takes
an exclusive `flock` on a file beside the store, `<store>.lock`, before it opens the store, and
holds it until the store is closed. The kernel lets go of it when the process dies, however it
dies (SIGKILL included), so a crashed server never leaves a stale lock behind; the file itself
stays (removing it would let two servers lock two different files of the same name).

The lock is not on the database file: SQLite's own POSIX locks on it are dropped when any
descriptor of the file in the process is closed, and a `flock` of our own on it would be one.

A handover passes the store on: the next server (`metasre serve --handover`) may start while the
old one still drains, waits for the lock (`ServerConfig.store_wait_seconds`) and takes it the
moment the old one has closed the store, before it binds its port and rebuilds the sessions.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from ..core.errors import StoreError

POLL_SECONDS = 0.05
"""How often a server waiting for a store tries its lock (flock has no timeout of its own)."""


class StoreInUseError(Exception):
    """Raised when another process holds the store's lock (another server runs on it)."""


def lock_path(store_path: Path) -> Path:
    """The lock file of the store at `store_path`."""
    return store_path.with_name(store_path.name + ".lock")


class StoreLock:
    """An exclusive lock on a store, held until `release` (or the process's end).

    Args:
        store_path: The store's database file.
        wait: Seconds to wait for another server to let go of the store; 0 fails at once.
        on_wait: Called once, with the holder's description, when the lock has to be waited for.

    Raises:
        StoreInUseError: another process still holds the lock after `wait` seconds.
        StoreError: the lock file cannot be made or opened (a read-only or missing folder).
    """

    def __init__(
        self,
        store_path: Path,
        *,
        wait: float = 0.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.path = lock_path(store_path)
        self._fd: int | None = None
        try:
            store_path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot open the store at {store_path}: cannot make its lock file "
                f"{self.path}: {exc.strerror or exc}"
            ) from exc
        deadline = time.monotonic() + wait
        waited = False
        try:
            while not _try_lock(fd):
                holder = _read_holder(fd)
                if time.monotonic() >= deadline:
                    raise StoreInUseError(
                        f"the store {store_path.absolute()} is in use by another server "
                        f"({holder})" + (f" (waited {wait:g} s for it)" if wait > 0 else "")
                        # what to do is the caller's to say: a flag, a setting...
                    )
                if not waited and on_wait is not None:
                    on_wait(holder)
                waited = True
                time.sleep(POLL_SECONDS)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        # Say who holds it, for the message of the next one that tries.
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps({"pid": os.getpid(), "since": time.time()}).encode(), 0)

    @property
    def held(self) -> bool:
        """Whether this lock is still held."""
        return self._fd is not None

    def release(self) -> None:
        """Let the next server have the store; idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # closing the only descriptor releases the flock


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return False
        raise StoreError(f"cannot lock the store's lock file: {exc.strerror or exc}") from exc
    return True


def _read_holder(fd: int) -> str:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"{}")
        pid = int(data["pid"])
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(data["since"])))
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not said which"
    return f"pid {pid}, since {since}"
