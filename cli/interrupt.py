"""Ctrl-C for long commands: the first winds the run down, the second ends the process at once.

The first SIGINT sets `requested` (commands start nothing new once it is set) and runs the
callbacks the command registered, which close what is open on a server; the command then prints
what finished and exits 130. The second SIGINT kills the child processes the command registered
and exits 130 on the spot, cleanups and all skipped: the user asked twice.

The handler replaces Python's (so no KeyboardInterrupt lands in a random frame, a thread pool's
join or a grpc callback) and runs on the main thread; callbacks must not block: they hand work
to a loop or a thread.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from metasre.cli.errors import ExitCode


class Interrupt:
    """One command's Ctrl-C handling; use as a context manager on the main thread."""

    def __init__(self, what: str = "finishing what is under way") -> None:
        self.what = what
        self._requested = threading.Event()
        self._callbacks: list[Callable[[], object]] = []
        self._children: set[int] = set()
        self._previous: Any = None

    @property
    def requested(self) -> bool:
        """True once the first Ctrl-C came."""
        return self._requested.is_set()

    def on_interrupt(self, callback: Callable[[], object]) -> None:
        """Call `callback` at the first Ctrl-C (at once if it already came)."""
        self._callbacks.append(callback)
        if self.requested:
            callback()

    def kill_at_once(self, pid: int) -> None:
        """Kill process `pid` (a child server) if a second Ctrl-C ends this one."""
        self._children.add(pid)

    def forget(self, pid: int) -> None:
        """`pid` has ended: nothing to kill."""
        self._children.discard(pid)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self._requested.is_set():
            os.write(2, b"\ninterrupted again: exiting now\n")
            for pid in self._children:
                with contextlib.suppress(OSError):  # already gone
                    os.kill(pid, signal.SIGKILL)
            os._exit(ExitCode.INTERRUPTED)
        self._requested.set()
        os.write(2, f"\ninterrupted: {self.what} (Ctrl-C again to quit at once)\n".encode())
        for callback in self._callbacks:
            callback()

    def __enter__(self) -> Interrupt:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        signal.signal(signal.SIGINT, self._previous)
