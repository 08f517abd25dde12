"""The sessions a run has open on a server, so that an interruption can close them all.

A rollout, an experiment or an LLM episode stopped half-way (Ctrl-C in the command line, a
cancelled cell in a notebook) must not leave sessions holding seats on the server: a ledger
records each session its client creates and closes the open ones on request, from any thread
or a signal handler. What the run then reports leaves out the episodes it cut short.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any

from .client import SessionHandle
from .rollout import EpisodeResult, RolloutReport, summarise
from .sync import SyncClient

CLOSE_TIMEOUT_SECONDS = 10.0
"""How long closing one session may take once the run is being stopped."""


class SessionLedger:
    """The sessions a run has open on the server, so that an interruption can close them all.

    `close_all_soon` is safe in a signal handler: the closing happens on a thread of its own;
    a session created after it is closed at once and its creator told (InterruptedError).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Callable[[str], None]] = {}
        self.closed: set[str] = set()
        """Sessions closed by the interruption, under way at the time."""
        self._closing = False
        self._closer: threading.Thread | None = None

    def opened(self, session_id: str, close: Callable[[str], None]) -> None:
        """`session_id` was created; `close` closes it, quietly.

        Raises:
            InterruptedError: the run was stopped meanwhile; the session is closed again.
        """
        with self._lock:
            late = self._closing
            if late:
                self.closed.add(session_id)
            else:
                self._open[session_id] = close
        if late:
            close(session_id)
            raise InterruptedError("interrupted before the episode began")

    def released(self, session_id: str) -> None:
        """The session was closed by its player."""
        with self._lock:
            self._open.pop(session_id, None)

    def close_all_soon(self) -> None:
        """Close every open session, on a thread (callable from a signal handler)."""
        with self._lock:
            self._closing = True
            doomed = dict(self._open)
            self._open.clear()
            self.closed |= set(doomed)

        def close_them() -> None:
            for session_id, close in doomed.items():
                close(session_id)

        self._closer = threading.Thread(target=close_them, name="close-sessions", daemon=True)
        self._closer.start()

    def wait_closed(self) -> None:
        """Return once the sessions `close_all_soon` closes are closed."""
        if self._closer is not None:
            self._closer.join(30)

    def cut_short(self, report: RolloutReport) -> tuple[RolloutReport, list[EpisodeResult]]:
        """`report` without the episodes the interruption cut short, and those episodes.

        An episode was cut short when it was not graded and its session is one this ledger
        closed (or it had none yet). Nothing is cut before `close_all_soon`.
        """
        if not self._closing:
            return report, []
        cut = [
            r
            for r in report.results
            if not r.graded and (r.session_id in self.closed or not r.session_id)
        ]
        return (without(report, {r.index for r in cut}) if cut else report), cut


def without(report: RolloutReport, indices: set[int]) -> RolloutReport:
    """`report` without the episodes `indices`, its summaries redone."""
    kept = [r for r in report.results if r.index not in indices]
    order = [s.scenario_id for s in report.summaries[:-1]]
    summaries = [summarise(sid, [r for r in kept if r.scenario_id == sid]) for sid in order]
    summaries = [s for s in summaries if s.episodes]
    summaries.append(summarise("TOTAL", kept, report.wall_seconds))
    return RolloutReport(report.agent, report.parallel, report.wall_seconds, kept, summaries)


def ledger_client(ledger: SessionLedger) -> type[SyncClient]:
    """A `SyncClient` class whose sessions are entered in `ledger`."""

    class LedgerClient(SyncClient):
        def create_session(self, scenario_id: str, **kwargs: Any) -> SessionHandle:
            handle = super().create_session(scenario_id, **kwargs)
            ledger.opened(handle.id, self.close_quietly)
            return handle

        def close_session(self, session_id: str) -> None:
            ledger.released(session_id)
            super().close_session(session_id)

        def close_quietly(self, session_id: str) -> None:
            # Already closed, or the server is gone: nothing left to free.
            with contextlib.suppress(Exception):
                self.run(self.client.close_session(session_id), timeout=CLOSE_TIMEOUT_SECONDS)

    return LedgerClient


__all__ = ["SessionLedger", "ledger_client", "without"]
