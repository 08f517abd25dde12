"""The server's open sessions: creation within limits, lookup, close, idle reaping and drain."""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import replace

import structlog

from metasre.service.config import Limits
from metasre.service.coordinator import Coordinator
from metasre.service.errors import (
    ServerAtCapacityError,
    ServerDrainingError,
    SessionClosedError,
    SessionFullError,
    SessionNotFoundError,
)
from metasre.service.session import Session, SessionSpec
from metasre.simulator import Episode, resolve
from metasre.simulator.sandbox import TestRunner

log = structlog.get_logger("metasre.service.registry")


class Registry:
    """Every open session and its coordinator.

    Args:
        limits: The server's limits.
        runner: The sandbox runner every episode uses (the shared fork server by default).
    """

    def __init__(self, limits: Limits, runner: TestRunner | None = None) -> None:
        self.limits = limits
        self.runner = runner
        self.draining = False
        self._sessions: dict[str, tuple[Session, Coordinator]] = {}

    async def create(self, spec: SessionSpec) -> Session:
        """Open a session and start its episode.

        Raises:
            ServerDrainingError: the server is shutting down.
            SessionFullError: more seats than a session may have.
            ServerAtCapacityError: the server holds as many sessions as it may.
            UnknownScenarioError: no such scenario.
        """
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
        episode = await asyncio.to_thread(Episode.make, scenario_id, spec.seed, self.runner)
        if len(self._sessions) >= self.limits.max_sessions:  # others created meanwhile
            raise ServerAtCapacityError(
                f"the server already holds {len(self._sessions)} sessions, its limit"
            )
        session_id = secrets.token_hex(8)
        session = Session(session_id, replace(spec, scenario_id=scenario_id), episode)
        coordinator = Coordinator(session, self.runner)
        self._sessions[session_id] = (session, coordinator)
        coordinator.start()
        log.info(
            "session_created",
            session_id=session_id,
            scenario_id=scenario_id,
            seed=spec.seed,
            seats=len(spec.seats),
            policy=spec.policy.value,
            attribution=spec.attribution.value,
        )
        return session

    def get(self, session_id: str) -> tuple[Session, Coordinator]:
        """The session and its coordinator.

        Raises:
            SessionNotFoundError: no open session has that id.
        """
        found = self._sessions.get(session_id)
        if found is None:
            raise SessionNotFoundError(
                f"no open session {session_id[:64]!r}; ListSessions shows the open ones"
            )
        return found

    def open_session(self, session_id: str) -> tuple[Session, Coordinator]:
        """Like `get`, but a closed session is an error too."""
        session, coordinator = self.get(session_id)
        if session.closed:
            raise SessionClosedError(f"session {session_id} is closed")
        return session, coordinator

    def sessions(self) -> list[Session]:
        """Open sessions, oldest first."""
        return [s for s, _ in self._sessions.values()]

    async def close(self, session_id: str, reason: str = "closed") -> Session:
        """Close a session: pending calls fail, streams end, it leaves the registry."""
        session, coordinator = self.get(session_id)
        await coordinator.stop(SessionClosedError(f"session {session_id} was {reason}"))
        session.close()
        self._sessions.pop(session_id, None)
        log.info("session_closed", session_id=session_id, reason=reason)
        return session

    async def reap_idle(self) -> None:
        """Close sessions idle longer than the limit with no agent connected."""
        now = time.monotonic()
        for session in self.sessions():
            idle = now - session.last_active
            if idle > self.limits.idle_session_seconds and all(
                s.holder is None for s in session.seats
            ):
                await self.close(session.id, "idle")

    async def drain(self) -> None:
        """Refuse new work, let calls being applied finish, then close every session."""
        self.draining = True
        for session in self.sessions():
            await self.close(session.id, "closed by server shutdown")
