"""A session: one episode at a time, its seats and their tokens, and its event log.

The log is the session's serial order. Agent streams and watchers follow it from any point, so
every reader sees the same events in the same order, and a reader that joins late replays.

With a trajectory store, the log has a durable prefix: entries are appended in memory, and
`flush` writes everything after the prefix in one transaction (the store groups transactions of
many sessions into one commit) and only then extends the prefix. Readers (`log`, `follow`) see
the durable prefix only, so no agent, watcher or trajectory ever hears of an event the store
does not hold, and a call's result is acknowledged only once it is committed.

If the store cannot write, the session fails closed: the entries past the prefix were applied
to the in-memory episode but are never shown to anyone, the calls waiting on them fail with
STORE_UNAVAILABLE, and the session is closed (its streams end with the same status). Carrying
on in memory would let the episode diverge from its stored trajectory, and retrying the write
later would apply calls that their agents were told had failed.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ...simulator import Episode
from ...simulator.replay import RecordedCall
from ...simulator.scenarios.spec import RoleSpec
from ...simulator.views import FULL, View, owners_of
from . import auth
from .attribution import Attribution, RewardMode
from .errors import (
    InvalidRequestError,
    SeatTakenError,
    StoreError,
    StoreLostError,
    StoreUnavailableError,
    TokenInvalidError,
)
from .events import Event, LogEntry

PAST_PAGE = 64
"""Entries of past episodes a follower reads from the store at a time."""


class TurnPolicy(enum.Enum):
    """How agents take turns; see the TurnPolicy enum of common.proto."""

    FREE_FOR_ALL = "free_for_all"
    ROUND_ROBIN = "round_robin"
    SIMULTANEOUS = "simultaneous"


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """One seat as the session's creator asked for it."""

    agent_id: str
    role: str = ""
    allowed_tools: frozenset[str] = frozenset()
    """Empty: every tool (or the scenario role's tools)."""
    view: View | None = None
    """What the seat sees, as asked for; None: its scenario role's view, or the full view."""


@dataclass(frozen=True, slots=True)
class SessionSpec:
    """What a session plays."""

    scenario_id: str
    seed: int
    seats: tuple[SeatSpec, ...]
    policy: TurnPolicy = TurnPolicy.FREE_FOR_ALL
    attribution: Attribution = Attribution.SHARED
    team_spirit: float = 0.0
    """Alpha of MIXED, in [0, 1]."""
    turn_timeout_seconds: float = 30.0
    reward_mode: RewardMode = RewardMode.DENSE
    tell_seats_instance: bool = False
    """Whether the seats are told the scenario id and seed (the owner always is)."""

    def __post_init__(self) -> None:
        if not self.seats:
            raise InvalidRequestError("a session needs at least one seat", (("seats", "empty"),))
        ids = [s.agent_id for s in self.seats]
        for i, agent in enumerate(ids):
            if not agent or len(agent) > 64 or not agent.isprintable() or agent == "*":
                raise InvalidRequestError(
                    f"seat {i}: agent_id must be 1-64 printable characters other than '*', "
                    f"got {agent[:64]!r}",
                    ((f"seats[{i}].agent_id", "1-64 printable characters, not '*'"),),
                )
        if len(set(ids)) != len(ids):
            raise InvalidRequestError(
                f"agent ids must be unique within a session, got {ids}",
                (("seats", "duplicate agent_id"),),
            )
        if not 0.0 <= self.team_spirit <= 1.0:
            raise InvalidRequestError(
                f"team_spirit must be in [0, 1], got {self.team_spirit}",
                (("team_spirit", "a number in [0, 1]"),),
            )


REWARD_DIGITS = 9
"""Decimal places every reward and reward total is rounded to, on the wire and in the store."""


@dataclass(slots=True)
class Seat:
    """A seat and the digests of the secrets that let an agent take it (see `auth`)."""

    spec: SeatSpec
    join_digest: str = field(repr=False)
    resume_digest: str = field(repr=False)
    join_token: str | None = field(default=None, repr=False)
    """The join token itself, only until CreateSession has answered with it (never stored)."""
    holder: object | None = None
    """The stream holding the seat, if any."""
    left: bool = False
    """The seat's stream ended; SIMULTANEOUS rounds stop waiting for it."""
    kept_until: float | None = None
    """After a dropped stream: until when (monotonic) the seat waits for its agent to resume."""
    expiry: asyncio.TimerHandle | None = field(default=None, repr=False)
    """Frees the seat when `kept_until` passes (cancelled by a resume or the session's close)."""
    reward_total: float = 0.0
    """Reward credited in the current episode, rounded as every reward is (`credit`)."""
    results: dict[str, LogEntry] = field(default_factory=dict, repr=False)
    """The current episode's applied calls of this seat by call_id: a repeated id gets these."""
    queued: dict[str, asyncio.Future[LogEntry]] = field(default_factory=dict, repr=False)
    """Calls submitted and not yet resolved, by call_id: a repeat waits for the original."""

    @property
    def agent_id(self) -> str:
        """The seat's agent id."""
        return self.spec.agent_id

    @property
    def kept(self) -> bool:
        """Whether a dropped stream's grace period still holds the seat for its agent."""
        return self.kept_until is not None and time.monotonic() < self.kept_until

    def credit(self, reward: float) -> None:
        """Add `reward` to the seat's total, rounded to REWARD_DIGITS like each reward.

        One rule for every place a total is read (GetGrade, Seat.reward_total, EpisodeEnded):
        a float sum left unrounded read 1.3399999999999999 where the end said 1.34.
        """
        self.reward_total = round(self.reward_total + reward, REWARD_DIGITS)

    def remember(self, call_id: str, entry: LogEntry) -> None:
        """Keep the applied call `call_id`'s entry: a repeat of the id gets it."""
        self.results[call_id] = entry

    def queue(self, call_id: str, future: asyncio.Future[LogEntry]) -> None:
        """The call `call_id` was submitted: a repeat waits for `future`."""
        self.queued[call_id] = future

    def unqueue(self, call_id: str, future: asyncio.Future[LogEntry]) -> None:
        """The call `call_id` was resolved: forget it, unless a newer one took its id."""
        if self.queued.get(call_id) is future:
            del self.queued[call_id]


class Recorder(Protocol):
    """Where a session's log is made durable: `metasre.service.store.codec.StoreRecorder`."""

    async def record(
        self, session: Session, entries: Sequence[LogEntry], *, opening: bool, closing: bool
    ) -> None:
        """Commit `entries` (after the session itself when `opening`; then its close).

        Raises:
            StoreError: nothing was committed.
        """

    async def past(self, session_id: str, start: int, end: int) -> Sequence[LogEntry]:
        """The committed entries numbered `start + 1` to `end` of a session's log.

        Raises:
            StoreError: the store cannot be read.
        """

    async def first_at(self, session_id: str, episode: int, tick: int) -> int | None:
        """The sequence of a session's first committed entry at or after (episode, tick).

        Raises:
            StoreError: the store cannot be read.
        """


class Session:
    """One incident played by a fixed set of seats; reset starts a new episode in place.

    Args:
        recorder: Makes the log durable (see the module docstring); None keeps it in memory.
        join_tokens: The seats' join tokens in seat order (derived from a CreateSession request
            id, see `auth.seat_join_token`); fresh random ones when None.
        owner_digest: SHA-256 of the owner token (None: only the admin may control it).
        request: (key, fingerprint) of the CreateSession request id that made it, if any.

    Other modules change it only through its methods (tests/service/test_session_state.py).
    """

    def __init__(
        self,
        session_id: str,
        spec: SessionSpec,
        episode: Episode,
        recorder: Recorder | None = None,
        join_tokens: Sequence[str] | None = None,
        *,
        owner_digest: str | None = None,
        request: tuple[str, str] | None = None,
    ) -> None:
        self.id = session_id
        self.spec = spec
        self.seed = spec.seed
        self.episode = episode
        self.episode_no = 1
        self.token_key = auth.new_key()
        """Derives each seat's resume token from its join token (`auth.resume_token_for`)."""
        self.owner_digest = owner_digest
        """SHA-256 of the owner token: control calls on the session need it (or the admin's)."""
        joins = join_tokens or [auth.new_token() for _ in spec.seats]
        self.seats = [self._new_seat(s, join) for s, join in zip(spec.seats, joins, strict=True)]
        self.request = request
        """(key, fingerprint) of the CreateSession request id that made it, stored with it."""
        self.calls: list[RecordedCall] = []
        """The current episode's applied calls, for the counterfactual replay."""
        self.closed = False
        self.turn_agent_id = ""
        self.lock = asyncio.Lock()
        """Held while anything reads or changes the episode (applies run in a thread)."""
        self.last_active = time.monotonic()
        self.created_at = time.time()
        self.failure: str | None = None
        """Why the store could not record the session, once it could not (it is then closed)."""
        self.handed_over: str | None = None
        """Why the streams ended, when the server stopped and left the session in its store."""
        self.drained: str | None = None
        """Why the streams ended, when the server stopped and closed the session (SIGTERM)."""
        self._recorder = recorder
        self._opened = recorder is None
        """The session itself is in the store."""
        self._durable = 0
        """How many entries of `_log` are committed (all of them without a recorder)."""
        self._base = 0
        """Entries of past episodes no longer held in `_log` (the recorder holds them): the
        first entry held is number `_base + 1`. See `forget_past`."""
        self._flushing = asyncio.Lock()
        self._log: list[LogEntry] = []
        self._changed = asyncio.Event()

    # -- seats ------------------------------------------------------------------------------

    @property
    def agent_ids(self) -> list[str]:
        """Agent ids in seat order."""
        return [s.agent_id for s in self.seats]

    def seat(self, agent_id: str) -> Seat:
        """The seat of `agent_id`."""
        return next(s for s in self.seats if s.agent_id == agent_id)

    def view_of(self, seat: Seat) -> View:
        """What `seat` sees in the current episode: its own view, its scenario role's, or all.

        A role's services are rendered per seed, so a role's view is read from the current
        episode's scenario each time rather than fixed at creation.
        """
        if seat.spec.view is not None:
            return seat.spec.view
        role = self._role(seat)
        return role.view if role is not None else FULL

    def tools_of(self, seat: Seat) -> frozenset[str]:
        """The tools `seat` may call (empty: every tool): its own list, or its scenario role's."""
        if seat.spec.allowed_tools:
            return seat.spec.allowed_tools
        role = self._role(seat)
        return frozenset(role.tools) if role is not None else frozenset()

    @property
    def owners(self) -> dict[str, str]:
        """Which service owns each queue and flag of the current episode (`views.refusal`)."""
        return owners_of(self.episode.instance.spec)

    def _role(self, seat: Seat) -> RoleSpec | None:
        if not seat.spec.role:
            return None
        roles = self.episode.instance.spec.roles
        return next((r for r in roles if r.name == seat.spec.role), None)

    def _new_seat(self, spec: SeatSpec, join: str) -> Seat:
        resume = auth.resume_token_for(self.token_key, join)
        return Seat(spec, auth.digest(join), auth.digest(resume), join)

    def restore_keys(self, token_key: bytes, digests: Sequence[tuple[str, str]]) -> None:
        """Take the stored token key and (join, resume) digests of a recovered session's seats."""
        self.token_key = token_key
        for seat, (join, resume) in zip(self.seats, digests, strict=True):
            seat.join_digest, seat.resume_digest, seat.join_token = join, resume, None

    def resume_token_for(self, join_token: str) -> str:
        """The resume token of the seat `join_token` opens (check the join token first)."""
        return auth.resume_token_for(self.token_key, join_token)

    def seat_by_token(self, token: str, *, join: bool = True, resume: bool = True) -> Seat:
        """The seat whose join (or resume) token is `token`.

        Raises:
            TokenInvalidError: no seat of this session has that token.
        """
        for seat in self.seats:
            if (join and auth.matches(token, seat.join_digest)) or (
                resume and auth.matches(token, seat.resume_digest)
            ):
                return seat
        raise TokenInvalidError(
            f"the token does not open any seat of session {self.id}; use the token "
            "CreateSession gave for this session's seat"
        )

    def take(self, seat: Seat, holder: object, *, force: bool) -> None:
        """Give `seat` to the stream `holder`; `force` (a resume) takes it from a stale stream.

        A seat kept for its agent after its stream ended (see `release`) is taken back by the
        join token as well as by the resume token: the server cannot always tell a stream the
        client dropped from one it closed (or that gRPC cut off), and both tokens are the
        agent's own, so what the agent may do next does not depend on that guess.

        Raises:
            SeatTakenError: another stream holds the seat and this is not a resume.
        """
        if seat.holder is not None and seat.holder is not holder and not force:
            raise SeatTakenError(
                f"seat {seat.agent_id!r} of session {self.id} is held by another stream; "
                "to take it back after a dropped stream, resume with the resume token"
            )
        seat.holder = holder
        seat.left = False
        seat.kept_until = None
        if seat.expiry is not None:
            seat.expiry.cancel()
            seat.expiry = None
        self.touch()

    def release(
        self,
        seat: Seat,
        holder: object,
        grace: float = 0.0,
        on_expiry: Callable[[], None] | None = None,
    ) -> None:
        """The stream `holder` let go of `seat` (its stream ended).

        With `grace` (a dropped stream), the seat stays its agent's for that many seconds:
        SIMULTANEOUS rounds keep waiting for it and the session is not idle; then it is free
        and `on_expiry` runs. Its join or resume token takes it back at any time.
        """
        if seat.holder is not holder:
            return
        seat.holder = None
        self.touch()
        if grace <= 0:
            seat.left = True
            return
        until = seat.kept_until = time.monotonic() + grace

        def expire() -> None:
            seat.expiry = None
            if seat.holder is None and seat.kept_until == until:
                seat.kept_until = None
                seat.left = True
                if on_expiry is not None:
                    on_expiry()

        if seat.expiry is not None:
            seat.expiry.cancel()
        seat.expiry = asyncio.get_running_loop().call_later(grace, expire)

    def touch(self) -> None:
        """Mark the session active now (for the idle reaper)."""
        self.last_active = time.monotonic()

    def forget_join_tokens(self) -> None:
        """CreateSession has answered with the join tokens: from now on only digests are kept."""
        for seat in self.seats:
            seat.join_token = None

    # -- the episode ------------------------------------------------------------------------

    def start_episode(self, episode: Episode, seed: int) -> None:
        """Play `episode` (of `seed`) from now on, in place of the current one (a reset).

        Its number is the next; the calls, the seats' reward totals and the results kept for
        repeated call ids are the new episode's, so none so far.
        """
        self.episode, self.seed = episode, seed
        self.episode_no += 1
        self.calls.clear()
        for seat in self.seats:
            seat.reward_total = 0.0
            seat.results.clear()
            seat.queued.clear()

    def restore_episode(self, seed: int, episode_no: int, created_at: float) -> None:
        """A recovered session is at its stored episode `episode_no`, of `seed`."""
        self.seed, self.episode_no, self.created_at = seed, episode_no, created_at

    def record_call(self, call: RecordedCall) -> None:
        """Keep an applied call of the current episode, for the counterfactual replay."""
        self.calls.append(call)

    def give_turn(self, agent_id: str) -> None:
        """The turn is `agent_id`'s (ROUND_ROBIN), as a TurnGranted says."""
        self.turn_agent_id = agent_id

    def hand_over(self, why: str | None) -> None:
        """The session leaves this server: its streams end with `why` (None: as a close ends them).

        A server that stops leaves the session in its store, for the next server on it.
        """
        self.handed_over = why

    def drain(self, why: str) -> None:
        """The server stops and closes the session (SIGTERM): the streams end with `why`."""
        self.drained = why

    # -- the log ----------------------------------------------------------------------------

    def restore(self, entries: Sequence[LogEntry]) -> None:
        """Load a recovered session's stored log: all of it is already durable.

        With a recorder, only the current episode is held (the recorder has the rest).
        """
        held = list(entries)
        if self._recorder is not None and held:
            first = next(i for i, e in enumerate(held) if e.episode == held[-1].episode)
            self._base, held = held[first].sequence - 1, held[first:]
        self._log = held
        self._opened = True
        self._durable = len(self._log)
        self._wake()

    @property
    def log(self) -> Sequence[LogEntry]:
        """The durable events held in memory, oldest first.

        Every one without a recorder, the current episode's with one (`forget_past`); `follow`
        and `position` reach the rest.
        """
        return self._log[: self._durable]

    @property
    def end(self) -> int:
        """The number of the last durable entry of the log (0: none yet)."""
        return self._base + self._durable

    def append(self, tick: int, event: Event) -> LogEntry:
        """Add an event to the log; followers hear of it once it is durable (see `flush`)."""
        entry = LogEntry(
            sequence=self._base + len(self._log) + 1,
            episode=self.episode_no,
            tick=tick,
            event=event,
        )
        self._log.append(entry)
        if self._recorder is None:
            self._durable = len(self._log)
            self._wake()
        return entry

    def forget_past(self) -> None:
        """Stop holding the entries so far (a reset, once they are all committed).

        Past episodes belong in the store: a session reset hundreds of times would otherwise
        hold every episode it ever played. Without a recorder the log is all there is, so it
        stays.
        """
        if self._recorder is None or self._durable != len(self._log):
            return
        self._base += len(self._log)
        self._log = []
        self._durable = 0

    async def flush(self, *, closing: bool = False) -> None:
        """Commit every entry appended so far (and the session's close when `closing`).

        Followers hear of the entries once this returns. Cancelling the caller does not stop a
        write that has begun: the next flush waits for it.

        Raises:
            StoreUnavailableError: the store cannot write; the session has failed for good.
        """
        if self._recorder is None or (
            self._durable == len(self._log) and self._opened and not closing and not self.failure
        ):
            return
        write = asyncio.ensure_future(self._flush(self._recorder, closing))
        write.add_done_callback(_retrieve)
        await asyncio.shield(write)

    async def _flush(self, recorder: Recorder, closing: bool) -> None:
        async with self._flushing:
            if self.failure is not None:
                raise StoreUnavailableError(self.failure)
            end = len(self._log)
            if end == self._durable and self._opened and not closing:
                return
            try:
                await recorder.record(
                    self, self._log[self._durable : end], opening=not self._opened, closing=closing
                )
            except StoreError as exc:
                self.failure = await self._fail(recorder, exc)
                raise StoreUnavailableError(self.failure) from exc
            self._opened = True
            self._durable = end
            self._wake()

    async def _fail(self, recorder: Recorder, exc: StoreError) -> str:
        """Why the session failed, once the store refused a write.

        Closed if the store takes the close alone; else left open in it, and said so, for a
        server that restarts on it brings the session back as of its last acknowledged call.
        """
        why = f"the trajectory store cannot record session {self.id} ({exc}); nothing after "
        try:
            await recorder.record(self, (), opening=False, closing=True)
        except StoreLostError:
            if isinstance(exc, StoreLostError) and exc.files_remain:
                # The files are the store's own still: say what they hold, not that they are gone.
                kept = (
                    "this call was written to the store's files (as was every call before "
                    "it), though not acknowledged"
                    if exc.written
                    else "nothing after its last acknowledged call was written"
                )
                as_of = "this call" if exc.written else "its last acknowledged call"
                return (
                    f"the trajectory store cannot record session {self.id} ({exc}); {kept}. "
                    "Whether those files can be read again is unknown: a server started again "
                    f"on this store brings the session back as of {as_of} if it can open them "
                    "(resume your seat with its resume token, and send a call again under its "
                    "call_id to get its result); else create a new session on a server whose "
                    "store works"
                )
            return why + (
                "its last acknowledged call was kept, and the store's files are gone, so the "
                "session cannot come back: create a new session on a server whose store works"
            )
        except StoreError:
            return why + (
                "its last acknowledged call was kept, and the session stopped on this server "
                "but could not be marked closed: a server started again on this store brings it "
                "back as of that call (resume your seat with its resume token); or create a new "
                "session once the store can write again"
            )
        return why + (
            "its last acknowledged call was kept and the session is closed: create a new "
            "session once the store can write again"
        )

    def close(self) -> None:
        """Accept nothing more; followers end after the last event."""
        self.closed = True
        for seat in self.seats:  # a closed session waits for nobody (and is not kept alive)
            if seat.expiry is not None:
                seat.expiry.cancel()
                seat.expiry = None
        self._wake()

    def episode_start(self) -> int:
        """How many durable entries come before the current episode's first (it is held)."""
        for entry in self._log[: self._durable]:
            if entry.episode == self.episode_no:
                return entry.sequence - 1
        return self.end

    async def position(self, episode: int, tick: int) -> int:
        """How many entries come before the first at or after (episode, tick).

        Raises:
            StoreError: the point is in a past episode and the store cannot be read.
        """
        held = self._log[: self._durable]
        if self._recorder is not None and self._base and (not held or episode < held[0].episode):
            first = await self._recorder.first_at(self.id, episode, tick)
            if first is not None and first <= self._base:
                return first - 1
        for entry in held:
            if (entry.episode, entry.tick) >= (episode, tick):
                return entry.sequence - 1
        return self._base + len(held)

    async def follow(self, start: int) -> AsyncIterator[LogEntry]:
        """Entries after the first `start`, waiting for new ones, until the session closes."""
        async for run in self.follow_runs(start):
            for entry in run:
                yield entry

    async def follow_runs(self, start: int) -> AsyncIterator[Sequence[LogEntry]]:
        """`follow` in runs: the entries that became durable together (a group commit).

        A stream that batches its events sends one message per run. A follower that has fallen
        behind into episodes no longer held (a slow reader across a reset, a watcher of a past
        episode) reads them from the store.
        """
        index = start
        while True:
            if index < self._base and self._recorder is not None:
                # A page at a time: a reader far behind does not pull whole episodes into
                # memory at once.
                end = min(self._base, index + PAST_PAGE)
                past = await self._recorder.past(self.id, index, end)
                index = end
                if past:
                    yield past
                continue
            end = self._base + self._durable
            if index < end:
                yield self._log[index - self._base : self._durable]
                index = end
                continue
            if self.closed:
                return
            changed = self._changed
            await changed.wait()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


def _retrieve(task: asyncio.Future[None]) -> None:
    # A flush whose caller was cancelled still ends; its error is the next flush's too.
    if not task.cancelled():
        task.exception()
