"""Turn policies: who may call when, and which calls the sequencer applies together.

One small object per policy, owned by a session's `Coordinator`. A policy announces turns (it
appends TurnGranted events to the session's log), admits or refuses a call as it is submitted,
and takes each step of the sequencer: the next call (FREE_FOR_ALL), the turn holder's call or
the turn's timeout (ROUND_ROBIN), or a round's calls (SIMULTANEOUS). The coordinator owns the
queue, applying calls and stopping; see `Sequencer`.

A seat is live unless its stream ended and its grace period is over (`Seat.left`): a seat that
has never joined is live, so a SIMULTANEOUS round waits its timeout for it, and ROUND_ROBIN
gives it its turn (passed on after the timeout).
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from ...simulator import EpisodePhase
from .errors import NotYourTurnError
from .events import Turn
from .session import Seat, Session, TurnPolicy

if TYPE_CHECKING:
    from .coordinator import Pending


class TimedOut(enum.Enum):
    """What `Sequencer.next` gives when nothing came in time."""

    TIMED_OUT = enum.auto()


TIMED_OUT = TimedOut.TIMED_OUT


class Sequencer(Protocol):
    """What a policy needs of its coordinator."""

    @property
    def stopping(self) -> bool:
        """A stop has begun: take no further step."""

    async def next(self, timeout: float | None) -> Pending | TimedOut | None:
        """The next queued call; None when woken (a seat joined or left); TIMED_OUT."""

    async def apply(
        self, batch: Sequence[Pending], round_no: int, then: Callable[[], None] | None = None
    ) -> None:
        """Apply calls in order (as one round when `round_no`), logged and answered.

        `then` runs once their entries are in the log, before they are committed (unless a
        stop has begun): what it appends is committed and heard with them.
        """

    def fail(self, pending: Pending, error: Exception) -> None:
        """Answer a call with an error without applying it."""


class Turns:
    """FREE_FOR_ALL, and the base of the others: any seat, any time, in arrival order."""

    policy = TurnPolicy.FREE_FOR_ALL

    def __init__(self, session: Session) -> None:
        self.session = session

    def open(self) -> None:
        """A new episode begins: announce its first turn."""

    def resume(self, turn: int, round_no: int, *, pass_turn: bool) -> None:
        """Carry on a recovered session (`metasre.service.store.recovery`).

        Args:
            turn: The seat whose turn the log last granted (ROUND_ROBIN).
            round_no: The last round the log opened (SIMULTANEOUS).
            pass_turn: A call was applied in that turn or round before the crash.
        """

    def admit(self, seat: Seat, waiting: bool) -> None:
        """Refuse a call `seat` submits now, if the policy does not allow it.

        Args:
            seat: The calling seat.
            waiting: The seat already has a call submitted and not yet answered.

        Raises:
            NotYourTurnError: it is not the seat's turn, or it has a call in this one.
        """

    def gathered(self) -> Iterable[Pending]:
        """Calls taken off the queue that wait for others (a stop answers them)."""
        return ()

    async def step(self, seq: Sequencer) -> None:
        """One step of the sequencer."""
        pending = await seq.next(None)
        if pending is not None and pending is not TIMED_OUT and not seq.stopping:
            await seq.apply([pending], 0)

    def _announce(self, agent_id: str, round_no: int) -> None:
        s = self.session
        s.append(
            s.episode.tick,
            Turn(
                tick=s.episode.tick,
                agent_id=agent_id,
                round=round_no,
                timeout_seconds=s.spec.turn_timeout_seconds,
            ),
        )

    def _refuse_second(self, seat: Seat, waiting: bool, unit: str) -> None:
        if waiting:
            raise NotYourTurnError(
                f"{seat.agent_id!r} already has a call in this {unit}; wait for its result"
            )


class RoundRobin(Turns):
    """Seats in order, one call each per turn; an unused turn passes after the timeout."""

    policy = TurnPolicy.ROUND_ROBIN

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.turn = 0
        """Index of the seat whose turn it is."""
        self._skips = 0
        """Turns passed in a row with no call."""

    def open(self) -> None:
        """The first seat has the first turn."""
        self.turn = self._skips = 0
        self._grant()

    def resume(self, turn: int, round_no: int, *, pass_turn: bool) -> None:
        """The turn the log last granted, passed on if it was used."""
        self.turn, self._skips = turn, 0
        self.session.give_turn(self.session.seats[turn].agent_id)
        if pass_turn and self.session.episode.phase is EpisodePhase.RUNNING:
            self._advance()

    def admit(self, seat: Seat, waiting: bool) -> None:
        """Only the turn's holder, once."""
        holder = self.session.seats[self.turn].agent_id
        if seat.agent_id != holder:
            raise NotYourTurnError(
                f"it is the turn of {holder!r}, not of {seat.agent_id!r} (ROUND_ROBIN); wait "
                "for a TurnGranted naming you",
                metadata={"turn_agent_id": holder},
            )
        self._refuse_second(seat, waiting, "turn")

    async def step(self, seq: Sequencer) -> None:
        """The holder's call, or the turn passes on after its timeout."""
        s = self.session
        # After a full lap of skips with nobody connected, wait without a clock so an empty
        # session does not spin; a join wakes the sequencer and the clock runs again.
        connected = any(seat.holder is not None for seat in s.seats)
        lapped = self._skips >= len(s.seats)
        timeout = None if lapped and not connected else s.spec.turn_timeout_seconds
        pending = await seq.next(timeout)
        if pending is TIMED_OUT:
            # Nobody called in time: pass the turn on.
            self._skips += 1
            self._advance()
            return
        if pending is None or seq.stopping:
            return
        if pending.seat is not s.seats[self.turn]:
            seq.fail(pending, NotYourTurnError("the turn passed before this call was applied"))
            return
        self._skips = 0
        # The turn passes in the same commit as the call: whoever hears its result hears the
        # next turn granted too, and the next holder's call is never refused as too early.
        await seq.apply([pending], 0, then=self._pass_on)

    def _pass_on(self) -> None:
        if self.session.episode.phase is EpisodePhase.RUNNING:
            self._advance()

    def _advance(self) -> None:
        self.turn = (self.turn + 1) % len(self.session.seats)
        self._grant()

    def _grant(self) -> None:
        s = self.session
        s.give_turn(s.seats[self.turn].agent_id)
        self._announce(s.turn_agent_id, 0)


class Simultaneous(Turns):
    """Rounds: every live seat calls once, then the round is applied in seat order.

    A round closes when every live seat has called, or `turn_timeout_seconds` after its first
    call; the simulated clock advances by the round's longest call.
    """

    policy = TurnPolicy.SIMULTANEOUS

    def __init__(self, session: Session) -> None:
        super().__init__(session)
        self.round = 0
        """The number of the open round."""
        self._batch: dict[str, Pending] = {}
        """The open round's calls, by agent: kept here (they have left the queue), so that a
        stop answers them instead of losing them with a cancelled step."""

    def open(self) -> None:
        """Round 1 opens."""
        self.round = 0
        self._batch = {}
        self._open_round()

    def resume(self, turn: int, round_no: int, *, pass_turn: bool) -> None:
        """The round the log last opened; a new one if it was applied."""
        self.round = round_no
        if pass_turn and self.session.episode.phase is EpisodePhase.RUNNING:
            self._open_round()

    def admit(self, seat: Seat, waiting: bool) -> None:
        """Every seat, once a round."""
        self._refuse_second(seat, waiting, "round")

    def gathered(self) -> Iterable[Pending]:
        """The open round's calls (it forgets them: a stop answers them)."""
        batch, self._batch = self._batch, {}
        return batch.values()

    async def step(self, seq: Sequencer) -> None:
        """Gather a round, apply it in seat order, open the next."""
        s = self.session
        batch = self._batch = {}
        loop = asyncio.get_running_loop()
        deadline: float | None = None
        while True:
            live = {seat.agent_id for seat in s.seats if not seat.left}
            if batch and live <= batch.keys():
                break
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                break
            pending = await seq.next(remaining)
            if seq.stopping:
                return
            if pending is TIMED_OUT:
                break
            if pending is None:
                continue
            batch[pending.seat.agent_id] = pending
            if deadline is None:
                deadline = loop.time() + s.spec.turn_timeout_seconds
        order = {a: i for i, a in enumerate(s.agent_ids)}
        self._batch = {}
        await seq.apply(sorted(batch.values(), key=lambda p: order[p.seat.agent_id]), self.round)
        if s.episode.phase is EpisodePhase.RUNNING:
            self._open_round()

    def _open_round(self) -> None:
        self.round += 1
        self._announce("", self.round)


POLICIES: dict[TurnPolicy, Callable[[Session], Turns]] = {
    TurnPolicy.FREE_FOR_ALL: Turns,
    TurnPolicy.ROUND_ROBIN: RoundRobin,
    TurnPolicy.SIMULTANEOUS: Simultaneous,
}
"""The policy object of each turn policy."""


def turns_for(session: Session) -> Turns:
    """A new policy object for `session`'s turn policy."""
    return POLICIES[session.spec.policy](session)


__all__ = ["TIMED_OUT", "RoundRobin", "Sequencer", "Simultaneous", "TimedOut", "Turns", "turns_for"]
