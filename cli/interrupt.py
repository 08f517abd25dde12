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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import ExitCode

if TYPE_CHECKING:
    from pathlib import Path

    from ..agents.ledger import SessionLedger
    from ..agents.sync import SyncClient
    from .connection import Connection

T = TypeVar("T")


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


@dataclass(frozen=True, slots=True)
class LedgeredRun:
    """What a command that plays sessions runs in: Ctrl-C closes every session it opened."""

    interrupt: Interrupt
    ledger: SessionLedger
    client: SyncClient
    """A client whose sessions `ledger` keeps."""
    address: str
    """The server's: `--target`, or one started in process for the command."""


@contextlib.contextmanager
def ledgered_run(
    connection: Connection,
    what: str,
    *,
    store: Path | None,
    max_sessions: int = 256,
    **client_options: Any,
) -> Iterator[LedgeredRun]:
    """Ctrl-C handling, a server (in process unless --target) and a client, for one command.

    The first Ctrl-C says `what` happens now and closes the sessions the client opened (the
    command starts nothing new once `interrupt.requested`). `client_options`: more arguments
    of the client (reward_mode, ...).
    """
    from ..agents.ledger import SessionLedger, ledger_client
    from .serving import in_process

    ledger = SessionLedger()
    with (
        Interrupt(what) as interrupt,
        in_process(connection.target, store=store, max_sessions=max_sessions) as address,
        connection.sync_client(address, factory=ledger_client(ledger), **client_options) as client,
    ):
        interrupt.on_interrupt(ledger.close_all_soon)
        yield LedgeredRun(interrupt, ledger, client, address)
        ledger.wait_closed()


def on_a_thread(play: Callable[[], T], interrupt: Interrupt) -> T | None:
    """`play()` on a thread of its own: its result, or None once Ctrl-C came.

    A chat request can block for minutes, and Ctrl-C must not wait for it (the sessions it
    plays in are closed by the run's ledger). What `play` raised is raised here.
    """
    finished = threading.Event()
    outcome: list[T | BaseException] = []

    def run() -> None:
        try:
            outcome.append(play())
        except BaseException as exc:  # handed to the main thread, raised there
            outcome.append(exc)
        finally:
            finished.set()

    interrupt.on_interrupt(finished.set)
    threading.Thread(target=run, name="llm-episode", daemon=True).start()
    finished.wait()
    if interrupt.requested:
        return None
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result
