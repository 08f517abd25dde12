"""The server's open sessions: creation within limits, lookup, close, idle reaping and drain.

With a trajectory store, a session is stored (its config and its first events) before
CreateSession answers, and its close is stored when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import replace

import structlog

from metasre.service.config import Limits
from metasre.service.coordinator import Coordinator, make_episode
from metasre.service.errors import (
    CallAbortedError,
    ServerAtCapacityError,
    ServerDrainingError,
    ServerHandingOverError,
    ServiceError,
    SessionClosedError,
    SessionFullError,
    SessionIdleError,
    SessionNotFoundError,
    StoreUnavailableError,
)
from metasre.service.events import LogEntry
from metasre.service.records import StoreRecorder
from metasre.service.recovery import RecoveryError, event_of, rebuild
from metasre.service.session import Session, SessionSpec
from metasre.service.store import SessionRow, StoreError, TrajectoryStore
from metasre.simulator import resolve
from metasre.simulator.sandbox import TestRunner

log = structlog.get_logger("metasre.service.registry")

REMEMBER_IDLE = 4096
"""How many sessions closed for idleness the registry remembers, to say so to late callers."""


class Registry:
    """Every open session and its coordinator.

    Args:
        limits: The server's limits.
        runner: The sandbox runner every episode uses (the shared fork server by default).
        store: Where sessions and their logs are recorded; None keeps them in memory only.
    """

    def __init__(
        self,
        limits: Limits,
        runner: TestRunner | None = None,
        store: TrajectoryStore | None = None,
    ) -> None:
        self.limits = limits
        self.runner = runner
        self.store = store
        self.draining = False
        self.handing_over: str | None = None
        """Set while a `drain(handover=True)` runs: why every session call is refused."""
        self._recorder = StoreRecorder(store) if store is not None else None
        self._sessions: dict[str, tuple[Session, Coordinator]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.closed_total = 0
        """Sessions closed (or failed) since the registry was made."""
        self._idle_closed: dict[str, float] = {}
        """Ids of sessions closed for idleness (oldest first) and how long each was idle."""

    async def create(self, spec: SessionSpec, owner_digest: str | None = None) -> Session:
        """Open a session and start its episode.

        Args:
            spec: What the session plays.
            owner_digest: SHA-256 of the owner token (see `auth.check_owner`).

        Raises:
            ServerDrainingError: the server is shutting down.
            SessionFullError: more seats than a session may have.
            ServerAtCapacityError: the server holds as many sessions as it may.
            UnknownScenarioError: no such scenario.
            StoreUnavailableError: the store cannot record the session.
        """
        if self.handing_over is not None:
            raise ServerHandingOverError(self.handing_over)
        if self.draining:
            raise ServerDrainingError("the server is shutting down; try another server")
        if len(spec.seats) > self.limits.max_agents_per_session:
            raise SessionFullError(
                f"{len(spec.seats)} seats asked for; a session on this server holds at most "
                f"{self.limits.max_agents_per_session}",
                (("seats", f"at most {self.limits.max_agents_per_session} seats"),),
            )
        if len(self._sessions) >= self.limits.max_sessions:
            raise ServerAtCapacityError(
                f"the server already holds {len(self._sessions)} sessions, its limit; close "
                "sessions you no longer need or try later"
            )
        scenario_id = resolve(spec.scenario_id).id
        episode = await make_episode(scenario_id, spec.seed, self.runner)
        if len(self._sessions) >= self.limits.max_sessions:  # others created meanwhile
            raise ServerAtCapacityError(
                f"the server already holds {len(self._sessions)} sessions, its limit"
            )
        session_id = secrets.token_hex(8)
        if spec.scenario_id != scenario_id:  # a name without its version: store the full id
            spec = replace(spec, scenario_id=scenario_id)
        session = Session(session_id, spec, episode, self._recorder)
        session.owner_digest = owner_digest
        coordinator = Coordinator(session, self.runner, self._failed)
        self._sessions[session_id] = (session, coordinator)
        coordinator.start()
        try:
            await session.flush()
        except StoreUnavailableError as exc:
            await self.close(session_id, "not created: the trajectory store cannot write")
            raise StoreUnavailableError(
                f"the session was not created: the trajectory store cannot write ({exc})"
            ) from exc
        log.info(
            "session_created",
            session_id=session_id,
            scenario_id=scenario_id,
            seed=spec.seed,
            seats=len(spec.seats),
            policy=spec.policy.value,
            attribution=spec.attribution.value,
            reward_mode=spec.reward_mode.value,
        )
        return session

    async def recover(self) -> int:
        """Rebuild every session the store holds open (the last server died); how many were.

        Run once at startup, before serving; see `metasre.service.recovery`. A session that
        cannot be rebuilt faithfully is closed in the store (its trajectory stays exportable).

        Raises:
            StoreError: the store cannot be read.
        """
        store = self.store
        if store is None or self._recorder is None:
            return 0
        recovered = 0
        for row in await asyncio.to_thread(store.sessions, open_only=True):
            started = time.perf_counter()
            events = await asyncio.to_thread(store.events, row.session_id)
            try:
                session, coordinator = await rebuild(
                    row, events, self._recorder, self.runner, self._failed
                )
            except (RecoveryError, StoreUnavailableError) as exc:
                log.error("session_not_recovered", session_id=row.session_id, error=str(exc))
                with contextlib.suppress(StoreError):
                    await store.write([store.close_op(row.session_id)])
                continue
            self._sessions[session.id] = (session, coordinator)
            recovered += 1
            log.info(
                "session_recovered",
                session_id=session.id,
                scenario_id=session.spec.scenario_id,
                episode=session.episode_no,
                tick=session.episode.tick,
                events=len(events),
                ms=round((time.perf_counter() - started) * 1000, 1),
            )
        return recovered

    def get(self, session_id: str) -> tuple[Session, Coordinator]:
        """The session and its coordinator.

        Raises:
            SessionNotFoundError: no open session has that id.
            SessionIdleError: the session was closed for being idle.
        """
        found = self._sessions.get(session_id)
        if found is None:
            if self.handing_over is not None:
                # It may be one this server has handed over already: the next server has it.
                raise ServerHandingOverError(self.handing_over)
            if self.draining:
                raise ServerDrainingError(
                    f"the server is shutting down and holds no session {session_id[:64]!r}"
                )
            idle = self._idle_closed.get(session_id)
            if idle is not None:
                raise SessionIdleError(
                    f"session {session_id} was closed after {idle:.1f} s idle (the limit is "
                    f"{self.limits.idle_session_seconds:g} s with no agent connected); create "
                    "a new session",
                    metadata={"idle_session_seconds": f"{self.limits.idle_session_seconds:g}"},
                )
            raise SessionNotFoundError(
                f"no open session {session_id[:64]!r}; ListSessions shows the open ones"
            )
        return found

    def stored(self, session_id: str) -> tuple[SessionRow, list[LogEntry]] | None:
        """A session as the store holds it, closed ones too (blocking: call in a thread)."""
        if self.store is None:
            return None
        row = self.store.session(session_id)
        if row is None:
            return None
        entries = [
            LogEntry(r.sequence, r.episode, r.tick, event_of(r))
            for r in self.store.events(session_id)
        ]
        return row, entries

    def open_session(self, session_id: str) -> tuple[Session, Coordinator]:
        """Like `get`, but a closed session is an error too."""
        session, coordinator = self.get(session_id)
        if session.handed_over is not None:
            raise ServerHandingOverError(session.handed_over)
        if session.closed:
            raise SessionClosedError(f"session {session_id} is closed")
        return session, coordinator

    def sessions(self) -> list[Session]:
        """Open sessions, oldest first."""
        return [s for s, _ in self._sessions.values()]

    async def close(self, session_id: str, reason: str = "closed") -> Session:
        """Close a session: pending calls fail, its close is stored, streams end, it leaves."""
        error = CallAbortedError(
            f"session {session_id} was {reason} before this call was applied; nothing of it "
            "reached the world"
        )
        session, left = await self._retire(session_id, error, closing=True)
        if left:
            self.closed_total += 1
        log.info("session_closed", session_id=session_id, reason=reason)
        return session

    async def _hand_over(self, session_id: str) -> None:
        why = (
            f"the server is stopping and keeps session {session_id} open in its store: resume "
            "your seat with its resume token once a server runs on that store again"
        )
        # Left open in the store: the next server on it rebuilds the session (`recover`).
        await self._retire(session_id, ServerHandingOverError(why), closing=False, why=why)
        log.info("session_handed_over", session_id=session_id)

    async def _retire(
        self, session_id: str, error: ServiceError, *, closing: bool, why: str | None = None
    ) -> tuple[Session, bool]:
        """Take a session off this server; whether it was still here.

        Queued calls fail with `error`, the log is committed (with the session's close when
        `closing`), and the streams end (with `why` as their status when it is given).
        """
        session, coordinator = self.get(session_id)
        # Before the stop: a call that comes while the log is committed hears the same status.
        session.handed_over = why
        await coordinator.stop(error)
        try:
            await session.flush(closing=closing)
        except StoreUnavailableError as exc:
            log.warning(
                "session_end_not_stored", session_id=session_id, closing=closing, error=str(exc)
            )
        session.close()
        return session, self._sessions.pop(session_id, None) is not None

    def _failed(self, session: Session) -> None:
        """The store cannot record `session` (its coordinator closed it): it leaves at once."""
        found = self._sessions.pop(session.id, None)
        if found is None:
            return
        self.closed_total += 1
        log.warning("session_failed", session_id=session.id, error=session.failure)
        task = asyncio.create_task(self._stop_failed(found[1]), name=f"stop-{session.id}")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    @staticmethod
    async def _stop_failed(coordinator: Coordinator) -> None:
        await coordinator.stop(StoreUnavailableError(coordinator.session.failure or "store failed"))

    async def reap_idle(self) -> None:
        """Close sessions idle longer than the limit with no agent connected."""
        now = time.monotonic()
        for session in self.sessions():
            idle = now - session.last_active
            if idle > self.limits.idle_session_seconds and all(
                s.holder is None and not s.kept for s in session.seats
            ):
                await self.close(session.id, "idle")
                self._idle_closed[session.id] = idle
                while len(self._idle_closed) > REMEMBER_IDLE:
                    del self._idle_closed[next(iter(self._idle_closed))]

    async def drain(self, *, handover: bool = False) -> None:
        """Refuse new work, let calls being applied finish, then close every session.

        With `handover` (and a store), sessions are not closed but left open in the store for
        the next server on it, which rebuilds them (`recover`); their streams end with
        SERVER_HANDING_OVER, and agents resume their seats on that server.
        """
        self.draining = True
        if handover and self._recorder is not None:
            self.handing_over = (
                "the server is stopping and hands its sessions over to the next server on its "
                "store: retry there, and resume your seat with its resume token"
            )
        for session in self.sessions():
            with contextlib.suppress(SessionNotFoundError, ServerHandingOverError):
                if handover and self._recorder is not None:
                    await self._hand_over(session.id)
                else:
                    await self.close(session.id, "closed by server shutdown")
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
