"""One session stepped as an environment: every seat joined, one action per seat per step.

The Gymnasium and PettingZoo adapters are views of this: one seat, or every seat. It speaks
only the wire (a `SyncClient`), so it works against any server. What makes it an environment:

- **Deterministic steps.** Under FREE_FOR_ALL a step's calls go one at a time in seat order;
  under SIMULTANEOUS they go together and the server applies the round in seat order. A step
  ends only when every seat's stream has caught up with the step's last tick, so the
  teammates' messages a seat reads after a step do not depend on network timing.
- **Rewards as the server attributes them.** A seat's reward for a step is the change of its
  reward total (`GetSession`) over the step, whoever's call earned it; the step that ends the
  episode adds the end-of-episode reward (the grade under the session's attribution), so the
  rewards of an episode add up to the seat's total in `EpisodeEnded.agent_rewards`.
- **Malformed actions are observations.** Text that is not a tool call, and calls the server
  refuses (unknown tool, bad arguments, outside the seat's view), come back as an error text
  with `last_call_ok` 0; nothing is raised. They are not steps of the episode (the server
  never applied them), so `max_actions` bounds them: at that many actions the episode is
  truncated here and the session closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .client import AgentConnection, CallResult, SeatLike
from .env_text import (
    OBSERVATION_TEXT_LENGTH,
    MalformedAction,
    escape,
    feature_values,
    parse_action,
)
from .errors import ClientError, EpisodeOverError
from .sync import SyncClient

STEP_POLICIES = ("FREE_FOR_ALL", "SIMULTANEOUS")
"""Turn policies a step can play: every seat acts each step. (ROUND_ROBIN hands one seat the
turn at a time: the AEC view of the PettingZoo adapter steps seats one by one instead.)"""
CATCH_UP_SECONDS = 30.0
"""How long a step waits for a seat's stream to deliver the step's last tick."""

Observation = dict[str, Any]
"""{"observation": float32 vector of `FEATURES`, "text": str}."""


@dataclass(slots=True)
class _Seat:
    conn: AgentConnection
    counted: float = 0.0
    """The reward already handed out in earlier steps."""
    heard: int = 0
    """Teammates' messages already shown."""
    own_tick: int = 0
    """The tick of the seat's latest applied call."""


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """One step, per seat: what PettingZoo's `step` returns, as five dicts."""

    observations: dict[str, Observation]
    rewards: dict[str, float]
    terminated: dict[str, bool]
    truncated: dict[str, bool]
    infos: dict[str, dict[str, Any]]


@dataclass(slots=True)
class _Reply:
    text: str
    ok: bool = False
    tool: str = ""
    error: str = ""
    result: CallResult | None = None
    over: bool = False


@dataclass(slots=True)
class SessionSettings:
    """How each episode's session is made (`MetasreClient.create_session`'s arguments)."""

    seats: Sequence[SeatLike] = ("agent",)
    turn_policy: str = "FREE_FOR_ALL"
    attribution: str = "SHARED"
    team_spirit: float = 0.0
    reward_mode: str | None = None
    turn_timeout_seconds: float = 0.0
    """SIMULTANEOUS: a round with a seat whose action was malformed or refused closes this long
    after its first call (0: the server's default)."""


class SteppedSession:
    """Plays episodes of one scenario at a time as an environment; see the module docstring."""

    def __init__(
        self,
        client: SyncClient,
        settings: SessionSettings,
        *,
        text_length: int = OBSERVATION_TEXT_LENGTH,
        max_actions: int = 100,
        vectorise: Callable[[tuple[float, ...]], Any] = tuple,
    ) -> None:
        if settings.turn_policy not in STEP_POLICIES:
            raise ValueError(
                f"turn_policy {settings.turn_policy!r} cannot be stepped with one action per "
                f"seat; use one of {', '.join(STEP_POLICIES)}"
            )
        if max_actions < 1:
            raise ValueError(f"max_actions must be at least 1, got {max_actions}")
        self.client = client
        self.settings = settings
        self.text_length = text_length
        self.max_actions = max_actions
        self.vectorise = vectorise
        """Makes the observation's numbers what the adapter declares (gym: a float32 array)."""
        self.session_id = ""
        """The current episode's session ("" before the first reset)."""
        self.scenario_id = ""
        self.seed = 0
        self.agents: list[str] = []
        """The seats still playing (every seat until the episode ends, then none)."""
        self.actions = 0
        self._seats: dict[str, _Seat] = {}

    @property
    def agent_ids(self) -> list[str]:
        """Every seat of the session, in seat order."""
        return list(self._seats)

    def reset(self, scenario: str, seed: int) -> tuple[dict[str, Observation], dict[str, Any]]:
        """A new session for (`scenario`, `seed`), every seat joined: observations and infos."""
        self.close()
        return self.client.run(self._start(scenario, seed))

    async def _start(
        self, scenario: str, seed: int
    ) -> tuple[dict[str, Observation], dict[str, Any]]:
        s = self.settings
        handle = await self.client.client.create_session(
            scenario,
            seed=seed,
            seats=s.seats,
            turn_policy=s.turn_policy,
            attribution=s.attribution,
            team_spirit=s.team_spirit,
            turn_timeout_seconds=s.turn_timeout_seconds,
            reward_mode=s.reward_mode,
        )
        self.session_id, self.seed, self.actions = handle.id, seed, 0
        conns = [self.client.client.agent(handle.id, token) for token in handle.tokens.values()]
        try:
            await asyncio.gather(*(c.join() for c in conns))
        except BaseException:
            await self._hang_up(conns)
            raise
        self._seats = {c.agent_id: _Seat(c) for c in conns}
        self.agents = list(self._seats)
        first = conns[0]
        self.scenario_id = str(first.observation.get("scenario_id") or scenario)
        observations = {
            a: {
                "observation": self.vectorise(feature_values(s.conn.observation)),
                "text": self._text(s.conn),
            }
            for a, s in self._seats.items()
        }
        infos = {a: self._info(a, _Reply("")) for a in self._seats}
        return observations, infos

    def _text(self, conn: AgentConnection) -> str:
        return escape(str(conn.observation.get("text") or ""), self.text_length)

    def _info(self, agent: str, reply: _Reply) -> dict[str, Any]:
        seat = self._seats[agent]
        return {
            "scenario_id": self.scenario_id,
            "seed": self.seed,
            "role": seat.conn.role,
            "tick": seat.own_tick,
            "tool": reply.tool,
            "ok": reply.ok,
            "error": reply.error,
        }

    def step(self, actions: Mapping[str, Any]) -> StepOutcome:
        """Apply one action per seat (seats without one sit the step out).

        Raises:
            ValueError: an action for a seat that is not playing.
            RuntimeError: the episode is over (reset first).
        """
        if not self.agents:
            raise RuntimeError("the episode is over: call reset() for the next one")
        unknown = sorted(set(actions) - set(self.agents))
        if unknown:
            raise ValueError(
                f"actions for {', '.join(map(str, unknown))}, who are not playing; the seats "
                f"playing are {', '.join(self.agents)}"
            )
        return self.client.run(self._step(actions))

    async def _step(self, actions: Mapping[str, Any]) -> StepOutcome:
        self.actions += 1
        order = [a for a in self.agents if a in actions]
        replies: dict[str, _Reply] = {}
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for agent in order:
            try:
                calls[agent] = parse_action(actions[agent])
            except MalformedAction as exc:
                replies[agent] = _Reply(str(exc), error="MALFORMED_ACTION")
        if self.settings.turn_policy == "SIMULTANEOUS":
            done = await asyncio.gather(*(self._call(a, *calls[a]) for a in calls))
            replies.update(zip(calls, done, strict=True))
        else:
            over = False
            for agent in calls:
                reply = (
                    _Reply("ERROR: the episode ended before this call", error="EPISODE_OVER")
                    if over
                    else await self._call(agent, *calls[agent])
                )
                replies[agent] = reply
                over = over or reply.over
        ended = any(r.over for r in replies.values())
        ticks = [r.result.tick for r in replies.values() if r.result is not None]
        if ticks or ended:
            await self._catch_up(max(ticks, default=0), ended)
        totals = await self._totals(ended)
        phase = await self._phase(ended)
        out = StepOutcome({}, {}, {}, {}, {})
        for agent, seat in self._seats.items():
            if agent not in self.agents:
                continue
            reply = replies.get(agent, _Reply(""))
            heard = list(seat.conn.inbox.messages[seat.heard :])
            seat.heard += len(heard)
            lines = [reply.text] if reply.text else []
            lines += [f"Message from {m.get('from_agent_id')}: {m.get('text')}" for m in heard]
            out.observations[agent] = {
                "observation": self.vectorise(
                    feature_values(
                        seat.conn.observation, last_call_ok=reply.ok, new_messages=len(heard)
                    )
                ),
                "text": escape("\n\n".join(lines), self.text_length),
            }
            total = totals.get(agent, seat.counted)
            out.rewards[agent] = round(total - seat.counted, 9)
            seat.counted = total
            out.terminated[agent] = phase == "TERMINATED"
            out.truncated[agent] = phase == "TRUNCATED" or (
                phase == "RUNNING" and self.actions >= self.max_actions
            )
            out.infos[agent] = self._info(agent, reply)
        if phase != "RUNNING" or self.actions >= self.max_actions:
            end = self._seats[self.agents[0]].conn.inbox.episode_end
            for agent in self.agents:
                info = out.infos[agent]
                info["phase"] = phase if phase != "RUNNING" else "ACTION_LIMIT"
                if end is not None:
                    info["grade"] = float(end.get("grade", {}).get("total", 0.0))
                    info["resolved"] = bool(end.get("grade", {}).get("resolved", False))
                info["episode_reward"] = self._seats[agent].counted
            self.agents = []
            if phase == "RUNNING":  # truncated here: the server's episode goes nowhere now
                await self._close_session()
        return out

    async def _call(self, agent: str, tool: str, args: dict[str, Any]) -> _Reply:
        seat = self._seats[agent]
        try:
            result = await seat.conn.call(tool, args)
        except EpisodeOverError as exc:
            return _Reply(f"ERROR: {exc.message}", tool=tool, error=exc.reason, over=True)
        except ClientError as exc:
            lines = [f"ERROR ({exc.reason or exc.code}): {exc.message}"]
            lines += [f"  - {name}: {why}" for name, why in exc.violations]
            return _Reply("\n".join(lines), tool=tool, error=exc.reason or exc.code)
        seat.own_tick = result.tick
        text = result.text or (f"error: {result.error_code}" if result.error_code else "")
        return _Reply(
            text,
            ok=result.ok,
            tool=tool,
            error=result.error_code,
            result=result,
            over=result.done,
        )

    async def _catch_up(self, tick: int, ended: bool) -> None:
        """Wait until every seat's stream has delivered `tick` (and the end, if it came)."""
        deadline = time.monotonic() + CATCH_UP_SECONDS
        for seat in self._seats.values():
            conn = seat.conn
            while True:
                seen = conn.news
                caught = _seen_tick(seat) >= tick
                if caught and (not ended or conn.inbox.episode_end is not None):
                    break
                left = deadline - time.monotonic()
                if left <= 0 or conn.lost is not None:
                    raise ClientError(
                        f"seat {conn.agent_id}'s stream did not deliver tick {tick} within "
                        f"{CATCH_UP_SECONDS:.0f} s",
                        code="DEADLINE_EXCEEDED",
                    )
                await conn.next_news(seen, left)

    async def _totals(self, ended: bool) -> dict[str, float]:
        """Each seat's reward total now: the episode's end says it, else GetSession."""
        if ended:
            end = self._seats[self.agent_ids[0]].conn.inbox.episode_end or {}
            return {a: float(v) for a, v in (end.get("agent_rewards") or {}).items()}
        info = await self.client.client.get_session(self.session_id)
        return {str(s["agent_id"]): float(s.get("reward_total", 0.0)) for s in info["seats"]}

    async def _phase(self, ended: bool) -> str:
        if not ended:
            return "RUNNING"
        end = self._seats[self.agent_ids[0]].conn.inbox.episode_end or {}
        return str(end.get("phase", "")).removeprefix("EPISODE_PHASE_") or "TERMINATED"

    async def _close_session(self) -> None:
        session_id, self.session_id = self.session_id, ""
        conns = [s.conn for s in self._seats.values()]
        await self._hang_up(conns)
        if session_id:
            # Already gone (expired, or the server restarted): nothing left to free.
            with contextlib.suppress(ClientError):
                await self.client.client.close_session(session_id)

    @staticmethod
    async def _hang_up(conns: Sequence[AgentConnection]) -> None:
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    def close(self) -> None:
        """Hang up every seat and close the session, if one is open."""
        if self.session_id or self._seats:
            self.client.run(self._close_session())
        self.agents = []


def _seen_tick(seat: _Seat) -> int:
    """The latest tick this seat's stream has delivered."""
    inbox = seat.conn.inbox
    ticks = [seat.own_tick]
    ticks += [int(e.get("tick", 0)) for e in inbox.applied[-1:]]
    ticks += [int(e.get("tick", 0)) for e in inbox.rewards[-1:]]
    ticks += [int(e.get("tick", 0)) for e in inbox.messages[-1:]]
    if inbox.episode_end is not None:
        ticks.append(int(inbox.episode_end.get("tick", 0)))
    return max(ticks)


__all__ = [
    "CATCH_UP_SECONDS",
    "STEP_POLICIES",
    "Observation",
    "SessionSettings",
    "StepOutcome",
    "SteppedSession",
]
