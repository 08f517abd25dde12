"""The server's open sessions: creation within limits, lookup, close, idle reaping and drain.

With a trajectory store, a session is stored (its config and its first events) before
CreateSession answers, and its close is stored before anyone is told it is closed: a close the
store could not record is not a close (CloseSession fails with STORE_UNAVAILABLE), so a server
restarted on the store never brings back a session its agents were told had closed.

CreateSession is refused before any work is done when the server is full (with a retry delay)
or its store cannot write. A request id makes it idempotent: the id, scoped to the owner token,
is stored with the session in the same transaction, and the same id again gets the same session.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import structlog

from ..simulator import Episode, EpisodePhase, resolve
from ..simulator.catalog import Catalog
from .config import Limits
from .core.auth import check_owner, require_bearer
from .core.coordinator import Coordinator, make_episode
from .core.errors import (
    CallAbortedError,
    InvalidRequestError,
    NotSessionOwnerError,
    OwnerAtQuotaError,
    RequestIdReusedError,
    ServerAtCapacityError,
    ServerDrainingError,
    ServerHandingOverError,
    ServiceError,
    SessionClosedError,
    SessionFullError,
    SessionIdleError,
    SessionNotFoundError,
    SessionReleasedError,
    StoreError,
    StoreUnavailableError,
)
from .core.events import LogEntry
from .core.session import Session, SessionSpec
from .core.shards import Shard, slot_of
from .store.codec import StoreRecorder, entry_of
from .store.contract import SessionRow, Store
from .store.recovery import RecoveryError, rebuild

log = structlog.get_logger("metasre.service.registry")

REMEMBER_IDLE = 4096
"""How many sessions closed for idleness the registry remembers, to say so to late callers."""
REMEMBER_REQUESTS = 65536
"""How many CreateSession request ids the registry keeps in memory (the store keeps them all)."""
RETRY_SECONDS = (0.25, 1.0, 30.0)
"""Least, default (before any session has closed) and most retry delay at capacity."""


@dataclass(frozen=True, slots=True)
class CreateRequest:
    """What makes a CreateSession idempotent: its request id, scoped to its owner."""

    request_id: str
    """The client's id for this creation."""
    key: str
    """SHA-256 of the owner token's digest and the request id: where the id is looked up."""
    fingerprint: str
    """SHA-256 of everything else the request asked for: a retry must ask for the same."""

    @classmethod
    def of(cls, request_id: str, owner_digest: str, fingerprint: str) -> CreateRequest:
        """The request `request_id` of the owner whose token digest is `owner_digest`."""
        key = hashlib.sha256(f"{owner_digest}\0{request_id}".encode()).hexdigest()
        return cls(request_id, key, fingerprint)


class Registry:
    """Every open session and its coordinator.

    Args:
        limits: The server's limits.
        catalog: The runners and judges every episode is made with (the process's by default).
        store: Where sessions and their logs are recorded; None keeps them in memory only.
        shard: This server's slot in a fleet: the session ids it makes, the stored sessions it
            recovers and the refusal of another slot's session follow it.
    """

    def __init__(
        self,
        limits: Limits,
        catalog: Catalog | None = None,
        store: Store | None = None,
        shard: Shard | None = None,
    ) -> None:
        self.limits = limits
        self.catalog = catalog
        self.shard = shard
        """This server's slot in a fleet, or None for a lone server."""
        self.store = store
        self.draining = False
        self.handing_over: str | None = None
        """Set while a `drain(handover=True)` runs: why every session call is refused."""
        self._recorder = StoreRecorder(store) if store is not None else None
        self._sessions: dict[str, tuple[Session, Coordinator]] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.closed_total = 0
        self.refused_total = 0
        """CreateSessions refused at capacity since the registry was made."""
        """Sessions closed (or failed) since the registry was made."""
        self._idle_closed: dict[str, tuple[str, float]] = {}
        """Ids of sessions the server closed by itself (oldest first): why ("idle", or
        "released" after its episode ended and its seats left) and after how many seconds."""
        self._creating = 0
        """Sessions being made now: they count against the limit before they exist."""
        self._creating_by: dict[str | None, int] = {}
        self._owned: dict[str | None, int] = {}
        """Sessions held, by owner digest (`_held_by` without a walk over every session)."""
        """Sessions being made now, per owner digest: they count against the owner's quota."""
        self._rendering = asyncio.Semaphore(1)
        """One episode rendered at a time: renders hold the GIL, so more threads at it only
        take turns the event loop needs (to refuse a flood's excess at once, say)."""
        self._lifetime: float | None = None
        """Moving average of how long closed sessions lasted, in seconds (for retry delays)."""
        self._requests: dict[str, tuple[str, str]] = {}
        """Request keys (oldest first) and the (session id, fingerprint) each made."""
        self._pending: dict[str, asyncio.Future[None]] = {}
        """Request keys whose session is being made: a retry waits for the first attempt."""

    async def create(
        self,
        spec: SessionSpec,
        owner_digest: str | None = None,
        *,
        request: CreateRequest | None = None,
        join_tokens: Sequence[str] | None = None,
        held_elsewhere: int = 0,
    ) -> Session:
        """Open a session and start its episode, or find the one `request` made before.

        Args:
            spec: What the session plays.
            owner_digest: SHA-256 of the owner token (see `auth.check_owner`).
            request: The request id: when it made a session before, that session is returned.
            join_tokens: The seats' join tokens, in seat order; fresh random ones when None.
            held_elsewhere: Sessions the owner holds on the fleet's other shards (the
                directory counts them): they count against its quota here too.

        Raises:
            ServerDrainingError: the server is shutting down.
            StoreUnavailableError: the store cannot record the session.
            SessionFullError: more seats than a session may have.
            ServerAtCapacityError: the server holds as many sessions as it may.
            OwnerAtQuotaError: the owner holds as many sessions as one owner may.
            RequestIdReusedError: the request id made a session with other parameters.
            SessionClosedError: the request id made a session that is closed.
            UnknownScenarioError: no such scenario.
        """
        if self.handing_over is not None:
            raise ServerHandingOverError(self.handing_over)
        if self.draining:
            raise ServerDrainingError("the server is shutting down; try another server")
        problem = self.store.problem if self.store is not None else None
        if problem is not None:
            raise StoreUnavailableError(
                f"no session can be created: {problem}; the server says NOT_SERVING until its "
                "store can write again: try another server, or later"
            )
        if request is None:
            return await self._create(spec, owner_digest, None, join_tokens, held_elsewhere)
        # One attempt per request id at a time, claimed with no await between the check and
        # the claim: the store lookup below awaits, and retries racing through it each made a
        # session (a unique-constraint error, then a KeyError here, and a waiter left hanging).
        while (pending := self._pending.get(request.key)) is not None:
            await asyncio.shield(pending)
        mine = self._pending[request.key] = asyncio.get_running_loop().create_future()
        try:
            found = await self._requested(request)
            if found is not None:
                return found
            return await self._create(spec, owner_digest, request, join_tokens, held_elsewhere)
        finally:
            del self._pending[request.key]
            mine.set_result(None)

    async def _create(
        self,
        spec: SessionSpec,
        owner_digest: str | None,
        request: CreateRequest | None,
        join_tokens: Sequence[str] | None,
        held_elsewhere: int = 0,
    ) -> Session:
        if len(spec.seats) > self.limits.max_agents_per_session:
            raise SessionFullError(
                f"{len(spec.seats)} seats asked for; a session on this server holds at most "
                f"{self.limits.max_agents_per_session}",
                (("seats", f"at most {self.limits.max_agents_per_session} seats"),),
            )
        # Sessions being made count too: a flood of creates is refused here, before any work.
        if len(self._sessions) + self._creating >= self.limits.max_sessions:
            self.refused_total += 1
            raise self._at_capacity()
        # One owner may not take every slot: the others' creates must still find room.
        held = self._held_by(owner_digest) + held_elsewhere
        if held >= self.limits.max_sessions_per_owner:
            self.refused_total += 1
            raise self._at_quota(held)
        self._creating += 1
        self._creating_by[owner_digest] = self._creating_by.get(owner_digest, 0) + 1
        return await self._make(spec, owner_digest, request, join_tokens)

    async def _make(
        self,
        spec: SessionSpec,
        owner_digest: str | None,
        request: CreateRequest | None,
        join_tokens: Sequence[str] | None,
    ) -> Session:
        try:
            scenario_id = resolve(spec.scenario_id).id
            async with self._rendering:
                episode = await make_episode(scenario_id, spec.seed, self.catalog)
        finally:
            # From here on it counts as a session (nothing awaits before it is one), or not at all.
            self._creating -= 1
            left = self._creating_by[owner_digest] - 1
            if left:
                self._creating_by[owner_digest] = left
            else:
                del self._creating_by[owner_digest]
        _check_views(spec, episode)
        session_id = secrets.token_hex(8) if self.shard is None else self.shard.new_session_id()
        if spec.scenario_id != scenario_id:  # a name without its version: store the full id
            spec = replace(spec, scenario_id=scenario_id)
        session = Session(
            session_id,
            spec,
            episode,
            self._recorder,
            join_tokens,
            owner_digest=owner_digest,
            request=None if request is None else (request.key, request.fingerprint),
        )
        coordinator = Coordinator(session, self.catalog, self._failed)
        self._hold(session, coordinator)
        coordinator.start()
        try:
            await session.flush()
        except StoreUnavailableError as exc:
            # never stored, so never recovered: it only has to leave this server
            await self._retire(session_id, exc, closing=False)
            self.closed_total += 1
            raise StoreUnavailableError(
                f"the session was not created: the trajectory store cannot write ({exc})"
            ) from exc
        if request is not None:
            self._remember(request, session_id)
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

    async def _requested(self, request: CreateRequest) -> Session | None:
        """The session `request` made before, if it did (its caller holds the request's turn)."""
        made = self._requests.get(request.key)
        if made is None and self.store is not None:
            try:
                made = await asyncio.to_thread(self.store.request, request.key)
            except StoreError as exc:
                raise await asyncio.to_thread(self._unreadable, exc) from exc
        if made is None:
            return None
        session_id, fingerprint = made
        if fingerprint != request.fingerprint:
            raise RequestIdReusedError(
                f"request_id {request.request_id[:128]!r} already created session {session_id} "
                "with other parameters; send the same parameters to get that session again, or "
                "a new request_id for a new session",
                metadata={"session_id": session_id},
            )
        found = self._sessions.get(session_id)
        if found is None or found[0].closed:
            raise SessionClosedError(
                f"request_id {request.request_id[:128]!r} created session {session_id}, which "
                "is closed; send a new request_id for a new session",
                metadata={"session_id": session_id},
            )
        return found[0]

    def _remember(self, request: CreateRequest, session_id: str) -> None:
        self._requests[request.key] = (session_id, request.fingerprint)
        while len(self._requests) > REMEMBER_REQUESTS:
            del self._requests[next(iter(self._requests))]

    def _at_capacity(self) -> ServerAtCapacityError:
        held = len(self._sessions) + self._creating
        delay = self.retry_delay()
        return ServerAtCapacityError(
            f"the server already holds {held} sessions, its limit (max_sessions "
            f"{self.limits.max_sessions}); close sessions you no longer need, or retry in "
            f"{delay:.2f} s (the status's RetryInfo)",
            metadata={"max_sessions": str(self.limits.max_sessions), "open_sessions": str(held)},
            retry_after=delay,
        )

    def _held_by(self, owner_digest: str | None) -> int:
        """Sessions the owner holds open or is having made."""
        return self._owned.get(owner_digest, 0) + self._creating_by.get(owner_digest, 0)

    def _hold(self, session: Session, coordinator: Coordinator) -> None:
        """Hold `session` (its owner digest is set: it never changes while held)."""
        self._sessions[session.id] = (session, coordinator)
        owner = session.owner_digest
        self._owned[owner] = self._owned.get(owner, 0) + 1

    def _let_go(self, session_id: str) -> tuple[Session, Coordinator] | None:
        """Stop holding a session; what was held, if it was."""
        found = self._sessions.pop(session_id, None)
        if found is not None:
            owner = found[0].owner_digest
            left = self._owned[owner] - 1
            if left:
                self._owned[owner] = left
            else:
                del self._owned[owner]
        return found

    def _at_quota(self, held: int) -> OwnerAtQuotaError:
        quota = self.limits.max_sessions_per_owner
        delay = self.retry_delay(held)
        return OwnerAtQuotaError(
            f"this owner token already holds {held} sessions, the most one owner may hold "
            f"(max_sessions_per_owner {quota}); close sessions you no longer need (a session "
            f"whose episode ended and whose seats left is released after "
            f"{self.limits.ended_session_seconds:g} s), or retry in {delay:.2f} s (the "
            "status's RetryInfo)",
            metadata={"max_sessions_per_owner": str(quota), "owner_sessions": str(held)},
            retry_after=delay,
        )

    def retry_delay(self, open_sessions: int | None = None) -> float:
        """How long a refused creator should wait: about when the next session slot frees.

        With n sessions open (all of the server's, or `open_sessions` of the refused owner's)
        that each last about T seconds, one closes every T / n seconds on average; jittered by
        +-25 % so that refused clients do not all come back at once.
        """
        low, default, high = RETRY_SECONDS
        n = len(self._sessions) if open_sessions is None else open_sessions
        estimate = default if self._lifetime is None else self._lifetime / max(1, n)
        return min(high, max(low, estimate)) * random.uniform(0.75, 1.25)

    def _closed(self, session: Session) -> None:
        self.closed_total += 1
        lasted = max(0.0, time.time() - session.created_at)
        self._lifetime = lasted if self._lifetime is None else 0.9 * self._lifetime + 0.1 * lasted

    async def recover(self) -> int:
        """Rebuild every session the store holds open (the last server died); how many were.

        Run once at startup, before serving; see `metasre.service.store.recovery`. A session that
        cannot be rebuilt faithfully is closed in the store (its trajectory stays exportable).

        Raises:
            StoreError: the store cannot be read.
        """
        store = self.store
        if store is None or self._recorder is None:
            return 0
        recovered = 0
        for row in await asyncio.to_thread(store.sessions, open_only=True):
            if slot_of(row.session_id) != (None if self.shard is None else self.shard.slot):
                continue  # another shard's, in a store the fleet shares: that shard rebuilds it
            started = time.perf_counter()
            events = await asyncio.to_thread(store.events, row.session_id)
            try:
                session, coordinator = await rebuild(
                    row, events, self._recorder, self.catalog, self._failed
                )
            except (RecoveryError, StoreUnavailableError) as exc:
                log.error("session_not_recovered", session_id=row.session_id, error=str(exc))
                with contextlib.suppress(StoreError):
                    await store.write([store.close_op(row.session_id)])
                continue
            self._hold(session, coordinator)
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
            reaped = self._idle_closed.get(session_id)
            if reaped is not None and reaped[0] == "released":
                raise SessionReleasedError(
                    f"session {session_id} was released {reaped[1]:.1f} s after its episode "
                    f"ended and its seats left (ended_session_seconds "
                    f"{self.limits.ended_session_seconds:g}); its trajectory stays readable "
                    "(GetTrajectory); create a new session to play again",
                    metadata={"ended_session_seconds": f"{self.limits.ended_session_seconds:g}"},
                )
            if reaped is not None:
                raise SessionIdleError(
                    f"session {session_id} was closed after {reaped[1]:.1f} s idle (the limit "
                    f"is {self.limits.idle_session_seconds:g} s with no agent connected); "
                    "create a new session",
                    metadata={"idle_session_seconds": f"{self.limits.idle_session_seconds:g}"},
                )
            elsewhere = self.shard.elsewhere(session_id) if self.shard is not None else None
            if elsewhere is not None:
                raise elsewhere
            raise _no_open_session(session_id)
        return found

    def owned(
        self,
        session_id: str,
        metadata: Sequence[tuple[str, str | bytes]],
        admin_token: str | None,
    ) -> tuple[Session, Coordinator]:
        """The session and its coordinator, for a call showing its owner or the admin token.

        A session another owner holds answers as one that does not exist, word for word: a
        token learns nothing of the sessions that are not its own, not even that they are
        open. The token's presence is checked first, so that its absence says nothing either.

        Raises:
            TokenMissingError: the call carries no token.
            SessionNotFoundError: no open session has that id, or not one of this token's.
        """
        require_bearer(metadata)
        found = self.get(session_id)
        try:
            check_owner(metadata, admin_token, found[0].owner_digest)
        except NotSessionOwnerError:
            raise _no_open_session(session_id) from None
        return found

    def stored(self, session_id: str) -> tuple[SessionRow, list[LogEntry]] | None:
        """A session as the store holds it, closed ones too (blocking: call in a thread)."""
        if self.store is None:
            return None
        try:
            row = self.store.session(session_id)
            if row is None:
                return None
            entries = [entry_of(r) for r in self.store.events(session_id)]
        except StoreError as exc:
            raise self._unreadable(exc) from exc
        return row, entries

    def _unreadable(self, exc: StoreError) -> StoreUnavailableError:
        """The refusal of a call that had to read the store and could not (blocking)."""
        assert self.store is not None
        # A file cut or removed under the server is noticed here too: health NOT_SERVING.
        lost = self.store.check()
        return StoreUnavailableError(f"{lost or exc}; try another server, or later")

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
        """Close a session: its close is stored, pending calls fail, streams end, it leaves.

        Raises:
            StoreUnavailableError: the store could not record the close; the session was left
                as it was (open, here and in the store).
        """
        self.get(session_id)
        if self.store is not None:
            # Stored before anyone hears of it: a close the store lacks would be undone by the
            # next server on it, which would rebuild the session as open.
            try:
                await self.store.write([self.store.close_op(session_id)])
            except StoreError as exc:
                log.error("session_close_not_stored", session_id=session_id, error=str(exc))
                raise StoreUnavailableError(
                    f"session {session_id} was not closed: the trajectory store could not record"
                    f" its close ({exc}); it goes on as it was: close it again once the server"
                    " is SERVING"
                ) from exc
        error = CallAbortedError(
            f"session {session_id} was {reason} before this call was applied; nothing of it "
            "reached the world"
        )
        session, left = await self._retire(session_id, error, closing=True)
        if left:
            self._closed(session)
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
        session.hand_over(why)
        await coordinator.stop(error)
        try:
            await session.flush(closing=closing)
        except StoreUnavailableError as exc:
            log.warning(
                "session_end_not_stored", session_id=session_id, closing=closing, error=str(exc)
            )
        session.close()
        return session, self._let_go(session_id) is not None

    def _failed(self, session: Session) -> None:
        """The store cannot record `session` (its coordinator closed it): it leaves at once."""
        found = self._let_go(session.id)
        if found is None:
            return
        self._closed(session)
        log.error("session_failed", session_id=session.id, error=session.failure)
        task = asyncio.create_task(self._stop_failed(found[1]), name=f"stop-{session.id}")
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    @staticmethod
    async def _stop_failed(coordinator: Coordinator) -> None:
        await coordinator.stop(StoreUnavailableError(coordinator.session.failure or "store failed"))

    async def reap_idle(self) -> None:
        """Close sessions no agent holds that are idle or whose episode ended.

        Idle: no call for `idle_session_seconds`. Ended: the episode is over and nothing
        happened for `ended_session_seconds` (its seats left; the reads of a trainer or a reset
        would have come by then).
        """
        now = time.monotonic()
        for session in self.sessions():
            if not all(s.holder is None and not s.kept for s in session.seats):
                continue
            idle = now - session.last_active
            if idle > self.limits.idle_session_seconds:
                why = "idle"
            elif session.episode.phase is not EpisodePhase.RUNNING and (
                idle > self.limits.ended_session_seconds
            ):
                why = "released"
            else:
                continue
            try:
                await self.close(session.id, why)
            except (StoreUnavailableError, SessionNotFoundError):
                continue  # logged, or closed meanwhile; the next pass tries again

            self._idle_closed[session.id] = (why, idle)
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
                    continue
                # Its agents' streams end UNAVAILABLE / SERVER_DRAINING, as agent.proto says.
                session.drain(
                    f"the server is shutting down and closed session {session.id}: create a "
                    "new session on another server"
                )
                try:
                    await self.close(session.id, "closed by server shutdown")
                except StoreUnavailableError:
                    # Its close could not be stored: it stays open in the store, so its agents
                    # are told so, as in a handover, and not that it closed.
                    await self._hand_over(session.id)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)


def _check_views(spec: SessionSpec, episode: Episode) -> None:
    """Refuse seats whose view names services the scenario does not have at this seed.

    Raises:
        InvalidRequestError: naming the seat and the scenario's services.
    """
    services = [svc.name for svc in episode.instance.spec.services]
    for i, seat in enumerate(spec.seats):
        unknown = [n for n in (seat.view.services or ()) if n not in services] if seat.view else []
        if unknown:
            raise InvalidRequestError(
                f"seat {i} ({seat.agent_id!r}): its view names services {unknown} that"
                f" {spec.scenario_id} does not have at seed {spec.seed}; its services are:"
                f" {', '.join(services)}",
                ((f"seats[{i}].view.services", "services of the scenario at the seed"),),
            )


def _no_open_session(session_id: str) -> SessionNotFoundError:
    """The refusal of a call on a session that is not open here (or not the caller's)."""
    return SessionNotFoundError(
        f"no open session {session_id[:64]!r}; ListSessions shows the open ones"
    )
