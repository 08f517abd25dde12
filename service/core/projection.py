"""What one seat receives of its session: each event built from facts cut to the seat's view.

The rules of a view are the simulator's (`metasre.simulator.views`): what a seat may call, what
a tool shows it, what the dashboard shows. This module is where the service applies them to
everything else a seat hears, in one place: teammates' calls, the start and the end of an
episode, the grade and its components, the seats of its session. The wire encodes what comes
out of here and decides nothing; a new kind of event reaches a restricted seat only once
`SeatProjection.event` says how (an unknown kind is not sent).

Nothing is cleaned afterwards. A restricted seat's events are new values made from the facts
its view shows: a teammate's call is who called which tool, when, how long it took and whether
it worked, never its arguments, text, data, error code or call id (what the seat's own view may
hide, or text the teammate's client chose; only a teammate's message carries them, in the
teammate's words); an episode's end carries each grade component's
score with a sentence made from that score, never the grader's prose, which is written for the
whole incident (the check that failed, the service changed, the operation not needed); the
hidden checks' names are not among its facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...simulator import Grade, GradeComponent, Observation, views
from ...simulator.grader import MEASURES
from ...simulator.views import View
from .events import Applied, Ended, Event, Message, Reward, Started, Turn
from .session import Seat, Session


@dataclass(frozen=True, slots=True, kw_only=True)
class TeammateCall:
    """A teammate's applied call as a seat that does not see everything learns of it."""

    tick: int
    agent_id: str
    tool: str
    ok: bool
    minutes: float
    clock: float
    round: int


Seen = Applied | TeammateCall | Reward | Message | Turn | Started | Ended
"""What a seat is told of one log event."""


def restricted_grade(grade: Grade) -> Grade:
    """`grade` as a seat that does not see everything is told it: scores, no prose, no checks."""
    return Grade(
        total=grade.total,
        resolved=grade.resolved,
        components=tuple(
            GradeComponent(
                name=c.name,
                score=c.score,
                weight=c.weight,
                detail=f"{MEASURES.get(c.name, c.name)}: {c.score:g}",
            )
            for c in grade.components
        ),
        fail_to_pass={},
        pass_to_pass={},
        final=grade.final,
    )


def teammate_call(event: Applied) -> TeammateCall:
    """A teammate's applied call as a seat that does not see everything learns of it."""
    return TeammateCall(
        tick=event.tick,
        agent_id=event.agent_id,
        tool=event.tool,
        ok=event.ok,
        minutes=event.minutes,
        clock=event.clock,
        round=event.round,
    )


def teammate_view(mine: View, theirs: View) -> View:
    """A teammate's view as seen from `mine`: the services it names that `mine` shows."""
    if mine.full or theirs.services is None:
        return theirs
    return theirs.model_copy(update={"services": tuple(s for s in theirs.services if mine.sees(s))})


class SeatProjection:
    """Everything one seat of a session receives, made for its view; see the module docstring.

    The view is read from the session at each use: a role's view is rendered per seed, and a
    reset may change it.
    """

    __slots__ = ("_seat", "_session")

    def __init__(self, session: Session, seat: Seat) -> None:
        self._session = session
        self._seat = seat

    @property
    def view(self) -> View:
        """What the seat sees in the current episode."""
        return self._session.view_of(self._seat)

    @property
    def told(self) -> bool:
        """Whether the seat is told its instance (scenario and seed)."""
        return self._session.spec.tell_seats_instance

    def observation(self, observation: Observation) -> Observation:
        """The dashboard as the seat sees it."""
        return views.observe(self.view, observation)

    def seat_view(self, other: Seat) -> tuple[View, bool]:
        """Another seat's view, naming only the services this seat sees, and whether it was cut.

        When some of its services were left out, an empty list means none, not every service.
        """
        theirs = self._session.view_of(other)
        cut = teammate_view(self.view, theirs)
        return cut, cut.services != theirs.services

    def event(self, event: Event) -> Seen | None:
        """What the seat is told of `event`, or None: nothing."""
        me = self._seat.agent_id
        if isinstance(event, Applied):
            if event.agent_id == me or self.view.full:
                return event
            return teammate_call(event)
        if isinstance(event, Reward):
            return event if event.agent_id == me else None
        if isinstance(event, Message):
            return event if event.reaches(me) else None
        if isinstance(event, Turn):
            # Every seat hears whose turn it is: a teammate plans around it, and a client
            # knows the turn moved on without polling.
            return event
        if isinstance(event, Started):
            view = self.view
            if view.full and self.told:
                return event
            return Started(
                episode=event.episode,
                seed=event.seed if self.told else 0,
                observation=views.observe(view, event.observation),
            )
        if isinstance(event, Ended):
            if self.view.full:
                return event
            return Ended(
                tick=event.tick,
                phase=event.phase,
                grade=restricted_grade(event.grade),
                agent_rewards=event.agent_rewards,
            )
        return None


__all__ = [
    "SeatProjection",
    "Seen",
    "TeammateCall",
    "restricted_grade",
    "teammate_call",
    "teammate_view",
]
